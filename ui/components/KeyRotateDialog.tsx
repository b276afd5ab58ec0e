import { useId } from 'preact/hooks';
import type { ApiKey } from '../api-types.js';
import { formatDate } from '../format.js';
import { Dialog } from './Dialog.js';
import { OVERLAPS } from './KeyOverlapChoice.js';
import { KeyRotateForm } from './KeyRotateForm.js';
import { KeySecretStep, useSecretGuard } from './KeySecretStep.js';
import { useKeyRotate } from './useKeyRotate.js';

const ignore = () => undefined;

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
