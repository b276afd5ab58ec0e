// Adding or editing an alerting channel (docs/operators/alerting.md): a kind, then only that kind's fields;
// secret fields write-only; errors on the field; a new WEBHOOK channel's signing secret shown once.
import { useState } from 'preact/hooks';
import type { ApiError } from '../../common/api.js';
import { Dialog, FormActions } from '../../common/Dialog.js';
import { Field } from '../../common/Field.js';
import { useAction, useFocusFirstInvalid } from '../../common/hooks.js';
import { ErrorNotice, Notice } from '../../common/Notice.js';
import { routes, type Channel, type ChannelKind, type CreatedChannel } from '../../common/routes.js';
import { SecretOnce, useSecretGuard, type SecretGuard } from '../../common/SecretOnce.js';
import { platformApi } from '../key.js';
import {
  DESTINATION_FORBIDDEN_HINT,
  fieldProblem,
  KIND_DESCRIPTIONS,
  KIND_FIELDS,
  KIND_NAMES,
  KINDS,
  textOf,
  valueOf,
  type ChannelFieldSpec,
} from './channels.js';

const CHANNEL_NAME_MAX = 200;

/** What is typed in each config field, by field name. */
type Texts = Record<string, string>;

/** The texts a form starts with: a channel's values (never its secrets), or empty. */
function initialTexts(kind: ChannelKind, channel: Channel | undefined): Texts {
  const texts: Texts = {};
  for (const spec of KIND_FIELDS[kind]) {
    texts[spec.name] = spec.secret ? '' : textOf(spec, channel?.config[spec.name]);
  }
  return texts;
}

/** The `config` to send: removed fields null, empty ones left out (or emptied), the rest typed. */
function channelConfig(
  specs: ChannelFieldSpec[],
  texts: Texts,
  removed: Set<string>,
  channel: Channel | undefined,
): Record<string, unknown> {
  const editing = channel !== undefined;
  const config: Record<string, unknown> = {};
  for (const spec of specs) {
    const text = texts[spec.name] ?? '';
    if (removed.has(spec.name)) {
      config[spec.name] = null;
      continue;
    }
    if (!text.trim()) {
      // Empty: a secret on edit is kept (left out), an optional field is left out on create and
      // removed on edit when it had a value.
      if (spec.secret && editing) continue;
      if (spec.type === 'list') config[spec.name] = [];
      else if (!spec.required && editing && channel?.config[spec.name] !== undefined)
        config[spec.name] = null;
      continue;
    }
    config[spec.name] = valueOf(spec, text);
  }
  return config;
}

/** The API's message for a config field, when it named one. */
const apiFieldError = (error: ApiError | undefined, name: string): string | undefined =>
  error?.forField(`config.${name}`);

/**
 * What is wrong with each field (found before sending, once `checked`, or named by the API), and
 * the refusal that names none of the form's fields.
 */
function channelFormErrors(
  specs: ChannelFieldSpec[],
  state: { name: string; texts: Texts; removed: Set<string>; checked: boolean; editing: boolean },
  apiError: ApiError | undefined,
) {
  const { name, texts, removed, checked, editing } = state;
  const forbidden = apiError?.code === 'destination_forbidden';
  const nameError =
    (checked && !name.trim() ? 'Enter a name.' : undefined) ??
    (apiError?.forField('name') ? `Use 1 to ${CHANNEL_NAME_MAX} characters.` : undefined);
  const errors = Object.fromEntries(
    specs.map((spec) => {
      const local =
        checked && !removed.has(spec.name) ? fieldProblem(spec, texts[spec.name] ?? '', editing) : undefined;
      const remote = apiFieldError(apiError, spec.name);
      return [
        spec.name,
        local ?? (remote ? (forbidden ? `${remote}. ${DESTINATION_FORBIDDEN_HINT}` : remote) : undefined),
      ];
    }),
  );
  const placed = apiError?.fieldErrors.some(
    (e) =>
      e.path === 'name' ||
      specs.some((spec) => e.path === `config.${spec.name}` || e.path.startsWith(`config.${spec.name}.`)),
  );
  const otherError = apiError && !placed ? apiError : undefined;
  return { forbidden, nameError, errors, otherError };
}

/** What the channel form holds: the kind, the name, the kind's texts, and stored fields to remove. */
function useChannelFields(channel: Channel | undefined) {
  const [kind, setKind] = useState<ChannelKind>(channel?.kind ?? 'WEBHOOK');
  const [name, setName] = useState(channel?.name ?? '');
  const [texts, setTexts] = useState<Texts>(() => initialTexts(channel?.kind ?? 'WEBHOOK', channel));
  const [removed, setRemoved] = useState<Set<string>>(() => new Set());
  /** Another kind: its own fields, empty. */
  const resetKind = (option: ChannelKind) => {
    setKind(option);
    setTexts(initialTexts(option, undefined));
  };
  const setText = (field: string, value: string) => setTexts((previous) => ({ ...previous, [field]: value }));
  const setRemove = (field: string, remove: boolean) =>
    setRemoved((previous) => {
      const next = new Set(previous);
      if (remove) next.add(field);
      else next.delete(field);
      return next;
    });
  return { kind, resetKind, name, setName, texts, setText, removed, setRemove };
}

/**
 * The channel form: the kind (on create), the name and the kind's fields, checked on submit; a new
 * channel with a generated secret stays `created` to show it.
 */
function useChannelForm(
  channel: Channel | undefined,
  onSaved: (channel: Channel) => void,
  onClose: () => void,
) {
  const editing = channel !== undefined;
  const fields = useChannelFields(channel);
  const { kind, name, texts, removed } = fields;
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [created, setCreated] = useState<CreatedChannel | null>(null);
  const form = useFocusFirstInvalid(attempt);

  const specs = KIND_FIELDS[kind];
  const submit = useAction(async () => {
    const config = channelConfig(specs, texts, removed, channel);
    if (editing) {
      const saved = await platformApi(routes.platform.editChannel, {
        params: { id: channel.id },
        body: { name: name.trim(), config },
      });
      onSaved(saved);
      onClose();
      return;
    }
    const answer = await platformApi(routes.platform.createChannel, {
      body: { name: name.trim(), kind, config },
    });
    onSaved(answer);
    if (answer.signingSecret) setCreated(answer);
    else onClose();
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    setAttempt((n) => n + 1);
    const invalid =
      !name.trim() ||
      specs.some((spec) => !removed.has(spec.name) && fieldProblem(spec, texts[spec.name] ?? '', editing));
    if (!invalid) void submit.run();
  };
  const chooseKind = (option: ChannelKind) => {
    fields.resetKind(option);
    submit.setError(undefined);
  };
  return { ...fields, editing, chooseKind, checked, created, form, specs, submit, onSubmit };
}

type ChannelFormState = ReturnType<typeof useChannelForm>;

const METHODS = ['POST', 'PUT', 'PATCH'] as const;

/** The attributes that tie a channel field's control to its label, hint and error. */
interface ChannelControlWiring {
  id: string;
  name: string;
  'aria-describedby': string | undefined;
  'aria-invalid': true | undefined;
  disabled: boolean | undefined;
}

/** The HTTP method of an HTTP-request channel. */
function ChannelMethodSelect({
  common,
  value,
  onValue,
}: {
  common: ChannelControlWiring;
  value: string;
  onValue: (value: string) => void;
}) {
  return (
    <select {...common} value={value} onChange={(event) => onValue(event.currentTarget.value)}>
      {METHODS.map((method) => (
        <option key={method} value={method}>
          {method}
        </option>
      ))}
    </select>
  );
}

/** The input of a channel field, wired to its label, hint and error by `ids`; off while removed. */
function ChannelFieldControl({
  spec,
  value,
  onValue,
  storedSecret,
  remove,
  ids: { id, describedBy, invalid },
}: {
  spec: ChannelFieldSpec;
  value: string;
  onValue: (value: string) => void;
  storedSecret?: boolean;
  remove?: boolean;
  ids: { id: string; describedBy: string | undefined; invalid: boolean };
}) {
  const common: ChannelControlWiring = {
    id,
    name: spec.name,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
    disabled: remove,
  };
  const placeholder = storedSecret ? 'set — leave empty to keep' : undefined;
  if (spec.type === 'method') return <ChannelMethodSelect common={common} value={value} onValue={onValue} />;
  if (spec.type === 'headers') {
    return (
      <textarea
        {...common}
        rows={3}
        spellcheck={false}
        autoComplete="off"
        class="mono"
        placeholder={placeholder}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
      />
    );
  }
  // A secret URL (a webhook's, Slack's) is typed where it can be read and checked, like any URL: it is
  // write-only all the same, never filled back in (decision 0068). Passwords and tokens stay hidden.
  const password = spec.secret && spec.type !== 'url';
  const type = password ? 'password' : spec.type === 'email' ? 'email' : spec.type === 'url' ? 'url' : 'text';
  return (
    <input
      {...common}
      type={type as 'text'}
      inputMode={spec.type === 'port' ? 'numeric' : undefined}
      autoComplete={password ? 'new-password' : 'off'}
      spellcheck={false}
      placeholder={placeholder}
      value={value}
      onInput={(event) => onValue(event.currentTarget.value)}
    />
  );
}

/**
 * One field of a channel's config, labelled with its hint. A secret field is write-only (a password
 * input, or a URL input for a secret URL): when editing a channel that has it set, it says so and
 * empty keeps it.
 */
function ChannelField({
  spec,
  value,
  onValue,
  error,
  storedSecret,
  remove,
  onRemove,
}: {
  spec: ChannelFieldSpec;
  value: string;
  onValue: (value: string) => void;
  error?: string;
  /** Editing, and the channel holds this secret: "set — leave empty to keep". */
  storedSecret?: boolean;
  remove?: boolean;
  onRemove?: (remove: boolean) => void;
}) {
  const label = spec.required ? spec.label : `${spec.label} (optional)`;
  const hint = storedSecret ? `Set — leave empty to keep it. ${spec.hint}` : spec.hint;
  return (
    <div class="channel-field">
      <Field label={label} hint={hint} error={error}>
        {(ids) => (
          <ChannelFieldControl
            spec={spec}
            value={value}
            onValue={onValue}
            storedSecret={storedSecret}
            remove={remove}
            ids={ids}
          />
        )}
      </Field>
      {storedSecret && !spec.required && onRemove ? (
        <label class="check">
          <input
            type="checkbox"
            checked={remove}
            onChange={(event) => onRemove(event.currentTarget.checked)}
          />
          Remove the stored {spec.label.toLowerCase()}
        </label>
      ) : null}
    </div>
  );
}

/** A channel's name, as alerts and the rules say it. */
function ChannelNameField({
  value,
  onInput,
  error,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
}) {
  return (
    <Field
      label="Name"
      hint="How alerts and the rules name this channel, e.g. “on-call e-mail”."
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          type="text"
          autoComplete="off"
          maxLength={CHANNEL_NAME_MAX}
          required
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid || undefined}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** A new channel's kind, one radio each; a channel being edited keeps its kind, said in words. */
function ChannelKindChoice({
  channel,
  kind,
  onKind,
}: {
  channel: Channel | undefined;
  kind: ChannelKind;
  onKind: (kind: ChannelKind) => void;
}) {
  if (channel) {
    return (
      <p class="dialog-intro">
        Kind: <strong>{KIND_NAMES[channel.kind]}</strong>. A channel’s kind cannot change; add another channel
        for another kind.
      </p>
    );
  }
  return (
    <fieldset class="channel-kinds">
      <legend>Kind</legend>
      {KINDS.map((option) => (
        <label key={option} class="channel-kind">
          <input
            type="radio"
            name="kind"
            value={option}
            checked={kind === option}
            onChange={() => onKind(option)}
          />
          <span>
            <span class="channel-kind-name">{KIND_NAMES[option]}</span>
            <span class="channel-kind-description">{KIND_DESCRIPTIONS[option]}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}

/** The channel form: kind, name, the kind's fields, and what was refused. */
function ChannelForm({
  channel,
  state,
  onClose,
}: {
  channel: Channel | undefined;
  state: ChannelFormState;
  onClose: () => void;
}) {
  const { editing, kind, specs, texts, removed, submit } = state;
  const { forbidden, nameError, errors, otherError } = channelFormErrors(specs, state, submit.error);
  const stored = new Set(channel?.secretFields ?? []);
  return (
    <form class="form" ref={state.form} noValidate onSubmit={state.onSubmit}>
      <ChannelKindChoice channel={channel} kind={kind} onKind={state.chooseKind} />
      <ChannelNameField value={state.name} onInput={state.setName} error={nameError} />
      {specs.map((spec) => (
        <ChannelField
          key={`${kind}-${spec.name}`}
          spec={spec}
          value={texts[spec.name] ?? ''}
          onValue={(value) => state.setText(spec.name, value)}
          error={errors[spec.name]}
          storedSecret={editing && spec.secret && stored.has(spec.name)}
          remove={removed.has(spec.name)}
          onRemove={(remove) => state.setRemove(spec.name, remove)}
        />
      ))}
      {kind === 'WEBHOOK' && !editing ? (
        <p class="field-hint">
          hubgate generates the signing secret and shows it once, after the channel is added.
        </p>
      ) : null}
      {otherError ? (
        <div>
          <ErrorNotice error={otherError} />
          {forbidden ? <p class="field-hint">{DESTINATION_FORBIDDEN_HINT}</p> : null}
        </div>
      ) : null}
      <FormActions
        busy={submit.busy}
        onCancel={onClose}
        label={editing ? 'Save changes' : 'Add channel'}
        busyLabel="Saving…"
      />
    </form>
  );
}

/** "You won’t see this secret again": asked before a new channel's uncopied signing secret goes. */
function ChannelSecretWarning({ onBack, onClose }: { onBack: () => void; onClose: () => void }) {
  return (
    <div class="confirm-inline" role="alertdialog" aria-label="You won’t see this secret again">
      <p>
        <strong>You won’t see this secret again.</strong> You have not copied it; once this closes, the
        receiver cannot check signatures unless you create the channel again.
      </p>
      <div class="row">
        <button type="button" class="button" onClick={onBack}>
          Go back
        </button>
        <button type="button" class="button button-danger" onClick={onClose}>
          Close without copying
        </button>
      </div>
    </div>
  );
}

/** A new webhook channel's signing secret, shown once, with the guard against closing it unsaved. */
function ChannelSecretShown({
  name,
  secret,
  guard,
  onClose,
}: {
  name: string;
  secret: string;
  guard: SecretGuard;
  onClose: () => void;
}) {
  return (
    <div class="stack" onCopy={guard.markCopied}>
      <Notice tone="success">
        The webhook channel <strong>“{name}”</strong> was created. Its receiver checks each notification’s
        signature with this secret.
      </Notice>
      <SecretOnce label="Signing secret" secret={secret} kept="encrypted" onCopied={guard.markCopied} />
      {guard.confirming ? (
        <ChannelSecretWarning onBack={guard.goBack} onClose={onClose} />
      ) : (
        <div class="dialog-actions">
          <button type="button" class="button button-primary" onClick={guard.requestClose}>
            Done
          </button>
        </div>
      )}
    </div>
  );
}

const ignore = () => undefined;

/**
 * Creating a channel (a kind, then only that kind's fields) or changing one (its kind fixed; secret
 * fields write-only: empty keeps the stored value, and the PATCH leaves them out). A new WEBHOOK
 * channel's generated signing secret is shown once, here.
 */
export function ChannelFormDialog({
  channel,
  onClose,
  onSaved,
}: {
  channel?: Channel;
  onClose: () => void;
  onSaved: (channel: Channel) => void;
}) {
  const state = useChannelForm(channel, onSaved, onClose);
  const guard = useSecretGuard(onClose);
  const { created, submit } = state;

  if (created?.signingSecret) {
    return (
      <Dialog
        title="Save the signing secret"
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <ChannelSecretShown
          name={created.name}
          secret={created.signingSecret}
          guard={guard}
          onClose={onClose}
        />
      </Dialog>
    );
  }
  return (
    <Dialog
      title={channel ? `Edit “${channel.name}”` : 'Add an alerting channel'}
      wide
      onClose={onClose}
      onCancel={submit.busy ? ignore : onClose}
    >
      <ChannelForm channel={channel} state={state} onClose={onClose} />
    </Dialog>
  );
}
