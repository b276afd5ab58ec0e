import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from '../../api.js';
import { Dialog, FormActions } from '../../components/Dialog.js';
import { Field } from '../../components/Field.js';
import { useSecretGuard } from '../../components/KeySecretStep.js';
import { ErrorNotice, Notice } from '../../components/Notice.js';
import { SecretOnce } from '../../components/SecretOnce.js';
import { useAction } from '../../hooks.js';
import { platformApi } from '../key.js';
import { ChannelField } from './ChannelField.js';
import {
  type Channel,
  type ChannelKind,
  channelPath,
  CHANNELS_PATH,
  type CreatedChannel,
  DESTINATION_FORBIDDEN_HINT,
  fieldProblem,
  KIND_DESCRIPTIONS,
  KIND_FIELDS,
  KIND_NAMES,
  KINDS,
  textOf,
  valueOf,
} from './ChannelKinds.js';

const NAME_MAX = 200;
const ignore = () => undefined;

type Texts = Record<string, string>;

function initialTexts(kind: ChannelKind, channel: Channel | undefined): Texts {
  const texts: Texts = {};
  for (const spec of KIND_FIELDS[kind]) {
    texts[spec.name] = spec.secret ? '' : textOf(spec, channel?.config[spec.name]);
  }
  return texts;
}

/** The API's message for a config field, when it named one. */
const apiFieldError = (error: ApiError | undefined, name: string): string | undefined =>
  error?.forField(`config.${name}`);

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
  const editing = channel !== undefined;
  const [kind, setKind] = useState<ChannelKind>(channel?.kind ?? 'WEBHOOK');
  const [name, setName] = useState(channel?.name ?? '');
  const [texts, setTexts] = useState<Texts>(() => initialTexts(channel?.kind ?? 'WEBHOOK', channel));
  const [removed, setRemoved] = useState<Set<string>>(() => new Set());
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const [created, setCreated] = useState<CreatedChannel | null>(null);
  const guard = useSecretGuard(onClose);
  const form = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (attempt === 0) return;
    form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [attempt]);

  const specs = KIND_FIELDS[kind];
  const stored = new Set(channel?.secretFields ?? []);

  const submit = useAction(async () => {
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
    if (editing) {
      const saved = await platformApi<Channel>('PATCH', channelPath(channel.id), {
        body: { name: name.trim(), config },
      });
      onSaved(saved);
      onClose();
      return;
    }
    const answer = await platformApi<CreatedChannel>('POST', CHANNELS_PATH, {
      body: { name: name.trim(), kind, config },
    });
    onSaved(answer);
    if (answer.signingSecret) setCreated(answer);
    else onClose();
  });

  if (created?.signingSecret) {
    return (
      <Dialog
        title="Save the signing secret"
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <div class="stack" onCopy={guard.markCopied}>
          <Notice tone="success">
            The webhook channel <strong>“{created.name}”</strong> was created. Its receiver checks each
            notification’s signature with this secret.
          </Notice>
          <SecretOnce
            label="Signing secret"
            secret={created.signingSecret}
            kept="encrypted"
            onCopied={guard.markCopied}
          />
          {guard.confirming ? (
            <div class="confirm-inline" role="alertdialog" aria-label="You won’t see this secret again">
              <p>
                <strong>You won’t see this secret again.</strong> You have not copied it; once this closes,
                the receiver cannot check signatures unless you create the channel again.
              </p>
              <div class="row">
                <button type="button" class="button" onClick={guard.goBack}>
                  Go back
                </button>
                <button type="button" class="button button-danger" onClick={onClose}>
                  Close without copying
                </button>
              </div>
            </div>
          ) : (
            <div class="dialog-actions">
              <button type="button" class="button button-primary" onClick={guard.requestClose}>
                Done
              </button>
            </div>
          )}
        </div>
      </Dialog>
    );
  }

  const apiError = submit.error;
  const forbidden = apiError?.code === 'destination_forbidden';
  const nameError =
    (checked && !name.trim() ? 'Enter a name.' : undefined) ??
    (apiError?.forField('name') ? `Use 1 to ${NAME_MAX} characters.` : undefined);
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

  return (
    <Dialog
      title={editing ? `Edit “${channel.name}”` : 'Add an alerting channel'}
      wide
      onClose={onClose}
      onCancel={submit.busy ? ignore : onClose}
    >
      <form
        class="form"
        ref={form}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          setChecked(true);
          setAttempt((n) => n + 1);
          const invalid =
            !name.trim() ||
            specs.some(
              (spec) => !removed.has(spec.name) && fieldProblem(spec, texts[spec.name] ?? '', editing),
            );
          if (!invalid) void submit.run();
        }}
      >
        {editing ? (
          <p class="dialog-intro">
            Kind: <strong>{KIND_NAMES[channel.kind]}</strong>. A channel’s kind cannot change; add another
            channel for another kind.
          </p>
        ) : (
          <fieldset class="channel-kinds">
            <legend>Kind</legend>
            {KINDS.map((option) => (
              <label key={option} class="channel-kind">
                <input
                  type="radio"
                  name="kind"
                  value={option}
                  checked={kind === option}
                  onChange={() => {
                    setKind(option);
                    setTexts(initialTexts(option, undefined));
                    submit.setError(undefined);
                  }}
                />
                <span>
                  <span class="channel-kind-name">{KIND_NAMES[option]}</span>
                  <span class="channel-kind-description">{KIND_DESCRIPTIONS[option]}</span>
                </span>
              </label>
            ))}
          </fieldset>
        )}
        <Field
          label="Name"
          hint="How alerts and the rules name this channel, e.g. “on-call e-mail”."
          error={nameError}
        >
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              type="text"
              autoComplete="off"
              maxLength={NAME_MAX}
              required
              value={name}
              aria-describedby={describedBy}
              aria-invalid={invalid || undefined}
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        {specs.map((spec) => (
          <ChannelField
            key={`${kind}-${spec.name}`}
            spec={spec}
            value={texts[spec.name] ?? ''}
            onValue={(value) => setTexts((previous) => ({ ...previous, [spec.name]: value }))}
            error={errors[spec.name]}
            storedSecret={editing && spec.secret && stored.has(spec.name)}
            remove={removed.has(spec.name)}
            onRemove={(remove) =>
              setRemoved((previous) => {
                const next = new Set(previous);
                if (remove) next.add(spec.name);
                else next.delete(spec.name);
                return next;
              })
            }
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
    </Dialog>
  );
}
