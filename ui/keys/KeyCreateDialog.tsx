// Creating a key (docs/api/keys.md): a name, scopes from allowed-scopes, an expiry (90 days unless
// changed), checked before sending; then its secret, shown once.
import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, type ApiError } from '../common/api.js';
import { Dialog, FormActions } from '../common/Dialog.js';
import { Field } from '../common/Field.js';
import { formatDate, scopeSummary } from '../common/format.js';
import { useAction, useFocusFirstInvalid, useResource } from '../common/hooks.js';
import { ErrorNotice, Loading } from '../common/Notice.js';
import { routes, type AllowedScopesAnswer, type ApiKeyWithSecret } from '../common/routes.js';
import { SecretStep, useSecretGuard } from '../common/SecretOnce.js';
import { KeyScopePicker } from './scopes.js';
import {
  DEFAULT_EXPIRY,
  expiresAtOf,
  EXPIRY_RANGE_MESSAGE,
  expiryProblem,
  KeyExpiryPicker,
  KeyRateLimitField,
  KeyUsage,
  rateLimitOf,
  rateLimitProblem,
  rateLimitWords,
} from './shared.js';

/**
 * The form that creates a key: its name, scopes and expiry, checked on submit, and the key with its
 * secret once created. `allowed` is the allowed-scopes answer, once it is in.
 */
function useKeyCreate(allowed: AllowedScopesAnswer | undefined, onCreated: () => void) {
  const [created, setCreated] = useState<ApiKeyWithSecret | null>(null);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(() => new Set());
  const [expiry, setExpiry] = useState(DEFAULT_EXPIRY);
  const [rate, setRate] = useState('');
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const form = useFocusFirstInvalid(attempt);
  const nameInput = useRef<HTMLInputElement>(null);
  const ready = allowed !== undefined;
  // The form appears once the scopes are in: typing starts in its first field.
  useEffect(() => {
    if (ready) nameInput.current?.focus();
  }, [ready]);

  const submit = useAction(async () => {
    const order = allowed?.modules.flatMap((m) => m.levels.map((l) => `${m.moduleKey}:${l}`)) ?? [];
    const key = await api(routes.keys.create, {
      body: {
        name: name.trim(),
        scopes: [...scopes].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
        expiresAt: expiresAtOf(expiry),
        // Left out when empty: the default, and a hubgate without per-key limits takes the body as before.
        ...(rate.trim() ? { rateLimitPerMinute: rateLimitOf(rate) } : {}),
      },
    });
    setCreated(key);
    onCreated();
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    setAttempt((n) => n + 1);
    if (!name.trim() || scopes.size === 0 || expiryProblem(expiry) || rateLimitProblem(rate)) return;
    void submit.run();
  };
  return {
    created,
    name,
    setName,
    scopes,
    setScopes,
    expiry,
    setExpiry,
    rate,
    setRate,
    checked,
    form,
    nameInput,
    submit,
    onSubmit,
  };
}

type KeyCreate = ReturnType<typeof useKeyCreate>;

const KEY_NAME_MAX = 100;

/**
 * What is wrong with each field of the create-key form: found before sending (once submitted) or
 * named by the API; `other` is a refusal that names no field.
 */
function keyCreateErrors({ checked, name, scopes, expiry, rate, submit }: KeyCreate) {
  const apiError = submit.error;
  const nameError =
    (checked && !name.trim() ? 'Enter a name.' : undefined) ??
    (apiError?.forField('name') ? `Use 1 to ${KEY_NAME_MAX} characters.` : undefined);
  const scopesError =
    (checked && scopes.size === 0 ? 'Choose at least one scope.' : undefined) ??
    (apiError?.forField('scopes') ? 'Choose scopes from the list.' : undefined) ??
    (apiError?.code === 'entitlement_missing' ? apiError.message : undefined);
  const expiryError =
    (checked ? expiryProblem(expiry) : undefined) ??
    (apiError?.forField('expiresAt') ? EXPIRY_RANGE_MESSAGE : undefined);
  const rateError =
    (checked ? rateLimitProblem(rate) : undefined) ?? apiError?.forField('rateLimitPerMinute');
  const otherError =
    apiError && apiError.fieldErrors.length === 0 && apiError.code !== 'entitlement_missing'
      ? apiError
      : undefined;
  return { nameError, scopesError, expiryError, rateError, otherError };
}

/** A new key's name: what uses the key. */
function KeyNameField({
  value,
  onInput,
  error,
  inputRef,
}: {
  value: string;
  onInput: (value: string) => void;
  error: string | undefined;
  inputRef: RefObject<HTMLInputElement | null>;
}) {
  return (
    <Field
      label="Name"
      hint={`What uses the key, e.g. “ci deploy”. At most ${KEY_NAME_MAX} characters.`}
      error={error}
    >
      {({ id, describedBy, invalid }) => (
        <input
          id={id}
          ref={inputRef}
          type="text"
          autoComplete="off"
          maxLength={KEY_NAME_MAX}
          required
          value={value}
          aria-describedby={describedBy}
          aria-invalid={invalid}
          onInput={(event) => onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}

/** The create-key form: name, scopes, expiry. */
function KeyCreateForm({
  create,
  modules,
  onClose,
}: {
  create: KeyCreate;
  modules: AllowedScopesAnswer['modules'];
  onClose: () => void;
}) {
  const { nameError, scopesError, expiryError, rateError, otherError } = keyCreateErrors(create);
  return (
    <form class="form" ref={create.form} noValidate onSubmit={create.onSubmit}>
      <KeyNameField
        value={create.name}
        onInput={create.setName}
        error={nameError}
        inputRef={create.nameInput}
      />
      <KeyScopePicker
        modules={modules}
        selected={create.scopes}
        onChange={create.setScopes}
        error={scopesError}
      />
      <KeyExpiryPicker value={create.expiry} onChange={create.setExpiry} error={expiryError} />
      <KeyRateLimitField value={create.rate} onInput={create.setRate} error={rateError} />
      <ErrorNotice error={otherError} />
      <FormActions busy={create.submit.busy} onCancel={onClose} label="Create key" busyLabel="Creating…" />
    </form>
  );
}

/** What a dialog needed could not be loaded: why, and a way out. */
function DialogLoadFailed({
  error,
  title,
  onClose,
}: {
  error: ApiError;
  title: string;
  onClose: () => void;
}) {
  return (
    <>
      <ErrorNotice error={error} title={title} />
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose}>
          Close
        </button>
      </div>
    </>
  );
}

const ignore = () => undefined;

/**
 * Creating a key (docs/api/keys.md): a name, scopes from allowed-scopes, an expiry (90 days unless
 * changed); then its secret, shown once. `onCreated` lets the list show the new key meanwhile.
 */
export function KeyCreateDialog({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const guard = useSecretGuard(onClose);
  const allowed = useResource((signal) => api(routes.keys.allowedScopes, { signal }), 'allowed-scopes');
  const create = useKeyCreate(allowed.data, onCreated);
  const { created } = create;

  if (created) {
    return (
      <Dialog
        title="Save your API key"
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <SecretStep
          secret={created.secret}
          guard={guard}
          onClose={onClose}
          usage={<KeyUsage secret={created.secret} />}
        >
          <strong>“{created.name}”</strong> was created with {scopeSummary(created.scopes)}. It expires on{' '}
          {formatDate(created.expiresAt)}. {rateLimitWords(created.rateLimitPerMinute)}.
        </SecretStep>
      </Dialog>
    );
  }
  return (
    // Escape while the key is being made would lose its secret: it waits for the answer.
    <Dialog title="Create an API key" wide onClose={onClose} onCancel={create.submit.busy ? ignore : onClose}>
      {allowed.error ? (
        <DialogLoadFailed error={allowed.error} title="The scopes could not be loaded." onClose={onClose} />
      ) : !allowed.data ? (
        <Loading what="Loading the scopes" />
      ) : (
        <KeyCreateForm create={create} modules={allowed.data.modules} onClose={onClose} />
      )}
    </Dialog>
  );
}
