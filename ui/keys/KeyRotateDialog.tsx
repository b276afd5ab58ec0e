// Rotating a key (docs/api/keys.md): when the old secret stops (an hour's overlap offered first) and the
// new expiry; then the new secret, shown once.
import { useId, useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { Dialog, FormActions } from '../common/Dialog.js';
import { formatDate } from '../common/format.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice } from '../common/Notice.js';
import { routes, type ApiKey, type ApiKeyWithSecret } from '../common/routes.js';
import { SecretStep, useSecretGuard } from '../common/SecretOnce.js';
import {
  expiresAtOf,
  EXPIRY_RANGE_MESSAGE,
  expiryProblem,
  KEEP_EXPIRY,
  KeyExpiryPicker,
  KeyRateLimitField,
  KeyUsage,
  rateLimitOf,
  rateLimitProblem,
} from './shared.js';

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

/** The rotate form of a key: the overlap and expiry chosen, and the key with its new secret once rotated. */
function useKeyRotate(apiKey: ApiKey, onRotated: () => void) {
  const [rotated, setRotated] = useState<ApiKeyWithSecret | null>(null);
  const [overlap, setOverlap] = useState(3600);
  const [expiry, setExpiry] = useState(KEEP_EXPIRY);
  // The key's limit as it is; emptied, the key goes back to the default.
  const [rate, setRate] = useState(apiKey.rateLimitPerMinute ? String(apiKey.rateLimitPerMinute) : '');
  const [checked, setChecked] = useState(false);

  const submit = useAction(async () => {
    try {
      const expiresAt = expiresAtOf(expiry);
      const key = await api(routes.keys.rotate, {
        params: { id: apiKey.id },
        body: {
          previousSecretValidForSeconds: overlap,
          ...(expiresAt ? { expiresAt } : {}),
          // Sent when there is a limit to keep, set or lift; a key on the default without one stays so.
          ...(rate.trim() || apiKey.rateLimitPerMinute ? { rateLimitPerMinute: rateLimitOf(rate) } : {}),
        },
      });
      setRotated(key);
      onRotated();
    } catch (error) {
      if (error instanceof ApiError && error.code === 'conflict') onRotated();
      throw error instanceof ApiError ? rotationFailure(error) : error;
    }
  });
  const onSubmit = (event: Event) => {
    event.preventDefault();
    setChecked(true);
    if (expiryProblem(expiry) || rateLimitProblem(rate)) return;
    void submit.run();
  };
  return { rotated, overlap, setOverlap, expiry, setExpiry, rate, setRate, checked, submit, onSubmit };
}

type KeyRotate = ReturnType<typeof useKeyRotate>;

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

/** When the old secret of a rotated key stops working; `id` prefixes the ids of its controls. */
function KeyOverlapChoice({
  id,
  overlap,
  onChange,
}: {
  id: string;
  overlap: number;
  onChange: (seconds: number) => void;
}) {
  return (
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
            onChange={() => onChange(option.seconds)}
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
  );
}

/** The rotate-key form: when the old secret stops, and the new expiry. `id` prefixes its ids. */
function KeyRotateForm({
  id,
  apiKey,
  rotate,
  onClose,
}: {
  id: string;
  apiKey: ApiKey;
  rotate: KeyRotate;
  onClose: () => void;
}) {
  const { expiry, checked, submit } = rotate;
  const apiError = submit.error;
  const expiryError =
    (checked ? expiryProblem(expiry) : undefined) ??
    (apiError?.forField('expiresAt') ? EXPIRY_RANGE_MESSAGE : undefined);
  const rateError =
    (checked ? rateLimitProblem(rotate.rate) : undefined) ?? apiError?.forField('rateLimitPerMinute');
  const otherError =
    apiError && !apiError.forField('expiresAt') && !apiError.forField('rateLimitPerMinute')
      ? apiError
      : undefined;
  return (
    <form class="form" noValidate onSubmit={rotate.onSubmit}>
      <p class="dialog-lead">
        The key gets a new secret; its ID, name and scopes stay the same, its rate limit as you set it below.
        The new secret is shown once.
      </p>
      <KeyOverlapChoice id={id} overlap={rotate.overlap} onChange={rotate.setOverlap} />
      <KeyExpiryPicker
        value={expiry}
        onChange={rotate.setExpiry}
        error={expiryError}
        currentExpiry={apiKey.expiresAt}
      />
      <KeyRateLimitField value={rotate.rate} onInput={rotate.setRate} error={rateError} />
      <ErrorNotice error={otherError} />
      <FormActions busy={submit.busy} onCancel={onClose} label="Rotate key" busyLabel="Rotating…" />
    </form>
  );
}

const ignore = () => undefined;

/**
 * Rotating a key (docs/api/keys.md): same ID, name and scopes, a new secret shown once; the old secret
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
  const guard = useSecretGuard(onClose);
  const rotate = useKeyRotate(apiKey, onRotated);
  const { rotated, overlap } = rotate;

  if (rotated) {
    const chosen = OVERLAPS.find((o) => o.seconds === overlap);
    return (
      <Dialog
        title={`Save the new secret of “${apiKey.name}”`}
        wide
        onClose={onClose}
        onCancel={guard.confirming ? guard.goBack : guard.requestClose}
      >
        <SecretStep
          secret={rotated.secret}
          guard={guard}
          onClose={onClose}
          usage={<KeyUsage secret={rotated.secret} />}
        >
          <strong>“{rotated.name}”</strong> has a new secret.{' '}
          {overlap === 0
            ? 'The old one no longer works.'
            : `The old one keeps working for ${chosen?.span ?? `${overlap} seconds`}.`}{' '}
          The key expires on {formatDate(rotated.expiresAt)}.
        </SecretStep>
      </Dialog>
    );
  }
  return (
    // Escape while rotating would lose the new secret: it waits for the answer.
    <Dialog
      title={`Rotate “${apiKey.name}”`}
      wide
      onClose={onClose}
      onCancel={rotate.submit.busy ? ignore : onClose}
    >
      <KeyRotateForm id={id} apiKey={apiKey} rotate={rotate} onClose={onClose} />
    </Dialog>
  );
}
