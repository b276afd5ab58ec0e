import type { Connection } from '../api-types.js';
import { api } from '../api.js';
import { useAction } from '../hooks.js';
import { ConfirmDialog } from './Dialog.js';
import { ErrorNotice } from './Notice.js';

/** "Revoke “Orders webhook”?": what revoking does, said before it is done (contract §12). */
export function ConnectionRevokeDialog({
  connection,
  onRevoked,
  onClose,
}: {
  connection: Connection;
  onRevoked: (connection: Connection) => void;
  onClose: () => void;
}) {
  const name = connection.displayName;
  const revoke = useAction(async () => {
    const revoked = await api<Connection>(
      'POST',
      `/api/v1/integrations/connections/${encodeURIComponent(connection.id)}/revoke`,
    );
    onRevoked(revoked);
  });
  return (
    <ConfirmDialog
      title={`Revoke “${name}”?`}
      confirmLabel="Revoke connection"
      danger
      busy={revoke.busy}
      onConfirm={() => void revoke.run()}
      onClose={onClose}
      error={<ErrorNotice error={revoke.error} title="The connection was not revoked." />}
    >
      <p>
        hubgate will never send another event to “{name}”. Deliveries to it that are still pending or waiting
        to be retried are cancelled.
      </p>
      <p class="muted">
        This cannot be undone: to deliver to this receiver again, create a new connection. Its event log stays
        readable.
      </p>
    </ConfirmDialog>
  );
}
