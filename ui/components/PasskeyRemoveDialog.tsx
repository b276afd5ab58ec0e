import type { Passkey } from '../api-types.js';
import { api, ApiError } from '../api.js';
import { useAction } from '../hooks.js';
import { PASSKEYS, signalAcceptedPasskeys } from '../passkeys.js';
import { ConfirmDialog } from './Dialog.js';
import { ErrorNotice, Notice } from './Notice.js';

/**
 * Removing a passkey (contract §10), after a confirmation that names it. The last passkey of an
 * account whose password sign-in is off stays: the server refuses (409), and this says why first.
 */
export function PasskeyRemoveDialog({
  passkey,
  lastWithoutPassword,
  onClose,
  onRemoved,
}: {
  passkey: Passkey;
  /** It is the only passkey and password sign-in is off, as far as this page knows. */
  lastWithoutPassword: boolean;
  onClose: () => void;
  onRemoved: () => void;
}) {
  const remove = useAction(async () => {
    try {
      await api<void>('DELETE', `${PASSKEYS}/${encodeURIComponent(passkey.id)}`);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'conflict') {
        throw new ApiError(
          error.status,
          error.code,
          `hubgate kept “${passkey.name}”: it is your last passkey and password sign-in is off, so without it you could not sign in at all. Turn password sign-in on, or add another passkey, first.`,
          [],
          error.requestId,
        );
      }
      // Removed meanwhile (another tab): what the person wanted is done.
      if (error.code !== 'not_found') throw error;
    }
    void signalAcceptedPasskeys(passkey);
    onRemoved();
    onClose();
  });
  return (
    <ConfirmDialog
      title={`Remove “${passkey.name}”?`}
      confirmLabel="Remove passkey"
      danger
      busy={remove.busy}
      onConfirm={() => void remove.run()}
      onClose={onClose}
      error={<ErrorNotice error={remove.error} />}
    >
      <p>
        hubgate refuses this passkey from now on. It stays on your device or in your password manager until
        you delete it there.
      </p>
      {lastWithoutPassword ? (
        <Notice tone="warning">
          This is your only passkey and password sign-in is off: hubgate will not remove it, or you could not
          sign in at all. Turn password sign-in on first, or add another passkey.
        </Notice>
      ) : null}
    </ConfirmDialog>
  );
}
