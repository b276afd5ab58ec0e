import type { ApiKey } from '../api-types.js';
import { api } from '../api.js';
import { useAction } from '../hooks.js';
import { ConfirmDialog } from './Dialog.js';
import { ErrorNotice } from './Notice.js';

/** Revoking a key (contract §4), after a confirmation that names it. */
export function KeyRevokeDialog({
  apiKey,
  onClose,
  onRevoked,
}: {
  apiKey: ApiKey;
  onClose: () => void;
  onRevoked: () => void;
}) {
  const revoke = useAction(async () => {
    await api<void>('DELETE', `/api/v1/company/api-keys/${encodeURIComponent(apiKey.id)}`);
    onRevoked();
    onClose();
  });
  return (
    <ConfirmDialog
      title={`Revoke “${apiKey.name}”?`}
      confirmLabel="Revoke key"
      danger
      busy={revoke.busy}
      onConfirm={() => void revoke.run()}
      onClose={onClose}
      error={<ErrorNotice error={revoke.error} />}
    >
      <p>
        Every request with this key (<span class="mono">{apiKey.prefix}…</span>) is refused from now on,
        within a second on every hubgate instance. Whatever still uses it stops working.
      </p>
      <p>This cannot be undone: to give access again, create a new key.</p>
    </ConfirmDialog>
  );
}
