import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import type { AllowedScopesAnswer, ApiKeyWithSecret } from '../api-types.js';
import { formatDate } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import { Dialog, FormActions } from './Dialog.js';
import { Field } from './Field.js';
import {
  DEFAULT_EXPIRY,
  EXPIRY_RANGE_MESSAGE,
  expiresAtOf,
  expiryProblem,
  KeyExpiryPicker,
} from './KeyExpiryPicker.js';
import { scopeSummary } from './KeyScopeList.js';
import { KeyScopePicker } from './KeyScopePicker.js';
import { KeySecretStep, useSecretGuard } from './KeySecretStep.js';
import { Loading } from './Loading.js';
import { ErrorNotice } from './Notice.js';

const NAME_MAX = 100;
const ignore = () => undefined;

/** Moves focus to the first control that says it is wrong, after a refused submit. */
function useFocusFirstInvalid(attempt: number) {
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (attempt === 0) return;
    form.current
      ?.querySelector<HTMLElement>('[aria-invalid="true"], .field-invalid input:not(:disabled)')
      ?.focus();
  }, [attempt]);
  return form;
}

/**
 * Creating a key (contract §4): a name, scopes from allowed-scopes, an expiry (90 days unless
 * changed); then its secret, shown once. `onCreated` lets the list show the new key meanwhile.
 */
export function KeyCreateDialog({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const [created, setCreated] = useState<ApiKeyWithSecret | null>(null);
  const guard = useSecretGuard(onClose);
  const allowed = useResource(
    (signal) => api<AllowedScopesAnswer>('GET', '/api/v1/company/api-keys/allowed-scopes', { signal }),
    'allowed-scopes',
  );
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Set<string>>(() => new Set());
  const [expiry, setExpiry] = useState(DEFAULT_EXPIRY);
  const [checked, setChecked] = useState(false);
  const [attempt, setAttempt] = useState(0);
  const form = useFocusFirstInvalid(attempt);
  const nameInput = useRef<HTMLInputElement>(null);
  const ready = allowed.data !== undefined;
  // The form appears once the scopes are in: typing starts in its first field.
  useEffect(() => {
    if (ready) nameInput.current?.focus();
  }, [ready]);

  const submit = useAction(async () => {
    const order = allowed.data?.modules.flatMap((m) => m.levels.map((l) => `${m.moduleKey}:${l}`)) ?? [];
    const key = await api<ApiKeyWithSecret>('POST', '/api/v1/company/api-keys', {
      body: {
        name: name.trim(),
        scopes: [...scopes].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
        expiresAt: expiresAtOf(expiry),
      },
    });
    setCreated(key);
    onCreated();
  });

  if (created) {
    return (
      <Dialog
        title="Save your API key"
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <KeySecretStep secret={created.secret} guard={guard} onClose={onClose}>
          <strong>“{created.name}”</strong> was created with {scopeSummary(created.scopes)}. It expires on{' '}
          {formatDate(created.expiresAt)}.
        </KeySecretStep>
      </Dialog>
    );
  }

  const apiError = submit.error;
  const nameError =
    (checked && !name.trim() ? 'Enter a name.' : undefined) ??
    (apiError?.forField('name') ? `Use 1 to ${NAME_MAX} characters.` : undefined);
  const scopesError =
    (checked && scopes.size === 0 ? 'Choose at least one scope.' : undefined) ??
    (apiError?.forField('scopes') ? 'Choose scopes from the list.' : undefined) ??
    (apiError?.code === 'entitlement_missing' ? apiError.message : undefined);
  const expiryError =
    (checked ? expiryProblem(expiry) : undefined) ??
    (apiError?.forField('expiresAt') ? EXPIRY_RANGE_MESSAGE : undefined);
  const otherError =
    apiError && apiError.fieldErrors.length === 0 && apiError.code !== 'entitlement_missing'
      ? apiError
      : undefined;

  let body;
  if (allowed.error) {
    body = (
      <>
        <ErrorNotice error={allowed.error} title="The scopes could not be loaded." />
        <div class="dialog-actions">
          <button type="button" class="button" onClick={onClose}>
            Close
          </button>
        </div>
      </>
    );
  } else if (!allowed.data) {
    body = <Loading what="Loading the scopes" />;
  } else {
    body = (
      <form
        class="form"
        ref={form}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          setChecked(true);
          setAttempt((n) => n + 1);
          if (!name.trim() || scopes.size === 0 || expiryProblem(expiry)) return;
          void submit.run();
        }}
      >
        <Field
          label="Name"
          hint={`What uses the key, e.g. “ci deploy”. At most ${NAME_MAX} characters.`}
          error={nameError}
        >
          {({ id, describedBy, invalid }) => (
            <input
              id={id}
              ref={nameInput}
              type="text"
              autoComplete="off"
              maxLength={NAME_MAX}
              required
              value={name}
              aria-describedby={describedBy}
              aria-invalid={invalid}
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        <KeyScopePicker
          modules={allowed.data.modules}
          selected={scopes}
          onChange={setScopes}
          error={scopesError}
        />
        <KeyExpiryPicker value={expiry} onChange={setExpiry} error={expiryError} />
        <ErrorNotice error={otherError} />
        <FormActions busy={submit.busy} onCancel={onClose} label="Create key" busyLabel="Creating…" />
      </form>
    );
  }

  return (
    // Escape while the key is being made would lose its secret: it waits for the answer.
    <Dialog title="Create an API key" wide onClose={onClose} onCancel={submit.busy ? ignore : onClose}>
      {body}
    </Dialog>
  );
}
