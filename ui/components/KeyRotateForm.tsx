import type { ApiKey } from '../api-types.js';
import { FormActions } from './Dialog.js';
import { EXPIRY_RANGE_MESSAGE, expiryProblem } from './keyExpiry.js';
import { KeyExpiryPicker } from './KeyExpiryPicker.js';
import { KeyOverlapChoice } from './KeyOverlapChoice.js';
import { ErrorNotice } from './Notice.js';
import type { KeyRotate } from './useKeyRotate.js';

/** The rotate-key form: when the old secret stops, and the new expiry. `id` prefixes its ids. */
export function KeyRotateForm({
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
  const otherError = apiError && !apiError.forField('expiresAt') ? apiError : undefined;
  return (
    <form class="form" noValidate onSubmit={rotate.onSubmit}>
      <p class="dialog-lead">
        The key gets a new secret; its ID, name and scopes stay the same. The new secret is shown once.
      </p>
      <KeyOverlapChoice id={id} overlap={rotate.overlap} onChange={rotate.setOverlap} />
      <KeyExpiryPicker
        value={expiry}
        onChange={rotate.setExpiry}
        error={expiryError}
        currentExpiry={apiKey.expiresAt}
      />
      <ErrorNotice error={otherError} />
      <FormActions busy={submit.busy} onCancel={onClose} label="Rotate key" busyLabel="Rotating…" />
    </form>
  );
}
