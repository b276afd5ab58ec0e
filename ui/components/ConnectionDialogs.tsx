import type { Connector } from '../api-types.js';
import { ConnectionRevokeDialog } from './ConnectionRevokeDialog.js';
import type { ConnectionDialog } from './ConnectionRowActions.js';
import { CredentialsDialog } from './CredentialsDialog.js';

/** The dialog open over the connections list, if any: bind credentials (once the catalog answered), or revoke. */
export function ConnectionDialogs({
  open,
  catalogAnswered,
  connectors,
  onChanged,
  onDone,
  onClose,
}: {
  open: ConnectionDialog;
  catalogAnswered: boolean;
  connectors: Map<string, Connector>;
  /** The list is out of date. */
  onChanged: () => void;
  /** What happened, for the page to say. */
  onDone: (message: string) => void;
  onClose: () => void;
}) {
  return (
    <>
      {open?.kind === 'bind' && catalogAnswered ? (
        <CredentialsDialog
          connection={open.connection}
          connector={connectors.get(open.connection.connectorKey)}
          justCreated={open.justCreated}
          onBound={(connection, generated) => {
            onChanged();
            if (!generated)
              onDone(`Credentials bound: “${connection.displayName}” delivers events from now on.`);
          }}
          onClose={onClose}
        />
      ) : null}
      {open?.kind === 'revoke' ? (
        <ConnectionRevokeDialog
          connection={open.connection}
          onRevoked={(connection) => {
            onClose();
            onChanged();
            onDone(`“${connection.displayName}” was revoked. No event will be sent to it again.`);
          }}
          onClose={onClose}
        />
      ) : null}
    </>
  );
}
