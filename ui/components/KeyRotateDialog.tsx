import { useId, useState } from 'preact/hooks';
import { api, ApiError } from '../api.js';
import type { ApiKey, ApiKeyWithSecret } from '../api-types.js';
import { formatDate } from '../format.js';
import { useAction } from '../hooks.js';
import { Dialog, FormActions } from './Dialog.js';
import {
  EXPIRY_RANGE_MESSAGE,
  expiresAtOf,
  expiryProblem,
  KEEP_EXPIRY,
  KeyExpiryPicker,
} from './KeyExpiryPicker.js';
import { KeySecretStep, useSecretGuard } from './KeySecretStep.js';
import { ErrorNotice } from './Notice.js';

/** How long the old secret keeps working after a rotation (`previousSecretValidForSeconds`). */
const OVERLAPS = [
  {
    seconds: 0,
    span: '',
    label: 'Stop the old secret now',
    help: 'Choose this if the secret may have leaked. Whatever still uses it is refused at once.',
  },
  {
    seconds: 3600,
    span: '1 hour',
    label: 'Keep the old secret working for 1 hour',
    help: 'Time to put the new secret in place without an outage.',
  },
  {
    seconds: 86_400,
    span: '24 hours',
    label: 'Keep the old secret working for 24 hours',
    help: 'For systems that take longer to update.',
  },
] as const;

const ignore = () => undefined;

/** A rotation refused because the key is no longer active, said in words. */
function rotationFailure(error: ApiError): ApiError {
  if (error.code !== 'conflict') return error;
  return new ApiError(
    error.status,
    error.code,
    'This key is no longer active (it was revoked or has expired), so it cannot be rotated. Create a new key instead.',
    error.fieldErrors,
    error.requestId,
  );
}

/**
 * Rotating a key (contract §4): same ID, name and scopes, a new secret shown once; the old secret
 * stops at once or after the chosen overlap.
 */
export function KeyRotateDialog({
  apiKey,
  onClose,
  onRotated,
}: {
  apiKey: ApiKey;
  onClose: () => void;
  onRotated: () => void;
}) {
  const id = useId();
  const [rotated, setRotated] = useState<ApiKeyWithSecret | null>(null);
  const guard = useSecretGuard(onClose);
  const [overlap, setOverlap] = useState(3600);
  const [expiry, setExpiry] = useState(KEEP_EXPIRY);
  const [checked, setChecked] = useState(false);

  const submit = useAction(async () => {
    try {
      const expiresAt = expiresAtOf(expiry);
      const key = await api<ApiKeyWithSecret>(
        'POST',
        `/api/v1/company/api-keys/${encodeURIComponent(apiKey.id)}/rotate`,
        { body: { previousSecretValidForSeconds: overlap, ...(expiresAt ? { expiresAt } : {}) } },
      );
      setRotated(key);
      onRotated();
    } catch (error) {
      if (error instanceof ApiError && error.code === 'conflict') onRotated();
      throw error instanceof ApiError ? rotationFailure(error) : error;
    }
  });

  if (rotated) {
    const chosen = OVERLAPS.find((o) => o.seconds === overlap);
    return (
      <Dialog
        title={`Save the new secret of “${apiKey.name}”`}
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <KeySecretStep secret={rotated.secret} guard={guard} onClose={onClose}>
          <strong>“{rotated.name}”</strong> has a new secret.{' '}
          {overlap === 0
            ? 'The old one no longer works.'
            : `The old one keeps working for ${chosen?.span ?? `${overlap} seconds`}.`}{' '}
          The key expires on {formatDate(rotated.expiresAt)}.
        </KeySecretStep>
      </Dialog>
    );
  }

  const apiError = submit.error;
  const expiryError =
    (checked ? expiryProblem(expiry) : undefined) ??
    (apiError?.forField('expiresAt') ? EXPIRY_RANGE_MESSAGE : undefined);
  const otherError = apiError && !apiError.forField('expiresAt') ? apiError : undefined;

  return (
    // Escape while rotating would lose the new secret: it waits for the answer.
    <Dialog
      title={`Rotate “${apiKey.name}”`}
      wide
      onClose={onClose}
      onCancel={submit.busy ? ignore : onClose}
    >
      <form
        class="form"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          setChecked(true);
          if (expiryProblem(expiry)) return;
          void submit.run();
        }}
      >
        <p class="dialog-lead">
          The key gets a new secret; its ID, name and scopes stay the same. The new secret is shown once.
        </p>
        <fieldset>
          <legend>When the old secret stops working</legend>
          {OVERLAPS.map((option) => (
            <div class="check key-choice" key={option.seconds}>
              <input
                id={`${id}-${option.seconds}`}
                type="radio"
                name="overlap"
                value={String(option.seconds)}
                checked={overlap === option.seconds}
                aria-describedby={`${id}-${option.seconds}-help`}
                onChange={() => setOverlap(option.seconds)}
              />
              <div>
                <label for={`${id}-${option.seconds}`}>{option.label}</label>
                <p class="key-level-help" id={`${id}-${option.seconds}-help`}>
                  {option.help}
                </p>
              </div>
            </div>
          ))}
        </fieldset>
        <KeyExpiryPicker
          value={expiry}
          onChange={setExpiry}
          error={expiryError}
          currentExpiry={apiKey.expiresAt}
        />
        <ErrorNotice error={otherError} />
        <FormActions busy={submit.busy} onCancel={onClose} label="Rotate key" busyLabel="Rotating…" />
      </form>
    </Dialog>
  );
}
