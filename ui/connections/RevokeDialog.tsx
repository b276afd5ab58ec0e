// Revoking a connection (docs/operators/web-ui.md): what it does, said before it is done, from the
// connections list and from an OAuth2 connection's page.
import { api } from '../common/api.js';
import { ConfirmDialog } from '../common/Dialog.js';
import { useAction } from '../common/hooks.js';
import { ErrorNotice } from '../common/Notice.js';
import { routes, type Connection } from '../common/routes.js';
import { isOAuthConnection } from './status.js';

/** What the page says once it is done. */
export const revokedText = (connection: Connection): string =>
  isOAuthConnection(connection)
    ? `“${connection.displayName}” was revoked. Calls through it are refused from now on.`
    : `“${connection.displayName}” was revoked. No event will be sent to it again.`;

/** What revoking does: nothing is sent to it again (a receiver), or called through it (OAuth2). */
function RevokeWords({ connection }: { connection: Connection }) {
  const name = connection.displayName;
  if (isOAuthConnection(connection)) {
    return (
      <>
        <p>hubgate refuses every call through “{name}” to its provider’s API from now on.</p>
        <p class="muted">
          This cannot be undone: to call this API through hubgate again, create a new connection and connect
          it.
        </p>
      </>
    );
  }
  return (
    <>
      <p>
        hubgate will never send another event to “{name}”. Deliveries to it that are still pending or waiting
        to be retried are cancelled.
      </p>
      <p class="muted">
        This cannot be undone: to deliver there again, create a new connection. Its event log stays readable.
      </p>
    </>
  );
}

/** "Revoke “Orders webhook”?", confirmed. */
export function ConnectionRevokeDialog({
  connection,
  onRevoked,
  onClose,
}: {
  connection: Connection;
  onRevoked: (connection: Connection) => void;
  onClose: () => void;
}) {
  const revoke = useAction(async () => {
    const revoked = await api(routes.connections.revoke, { params: { id: connection.id } });
    onRevoked(revoked);
  });
  return (
    <ConfirmDialog
      title={`Revoke “${connection.displayName}”?`}
      confirmLabel="Revoke connection"
      danger
      busy={revoke.busy}
      onConfirm={() => void revoke.run()}
      onClose={onClose}
      error={<ErrorNotice error={revoke.error} title="The connection was not revoked." />}
    >
      <RevokeWords connection={connection} />
    </ConfirmDialog>
  );
}
