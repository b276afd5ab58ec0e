import type { Connection } from '../api-types.js';

/** A dialog the connections page opens over its list: bind credentials, or revoke. */
export type ConnectionDialog =
  | { kind: 'bind'; connection: Connection; justCreated?: boolean }
  | { kind: 'revoke'; connection: Connection }
  | null;

/** A connection's events link and, for those who may operate it until it is revoked, bind and revoke. */
export function ConnectionRowActions({
  connection,
  canOperate,
  onOpen,
}: {
  connection: Connection;
  canOperate: boolean;
  onOpen: (open: ConnectionDialog) => void;
}) {
  const name = connection.displayName;
  return (
    <div class="connection-actions">
      <a class="connection-events-link" href={`/connections/${encodeURIComponent(connection.id)}/events`}>
        Events<span class="visually-hidden"> of {name}</span>
      </a>
      {canOperate && connection.status !== 'disabled' ? (
        <>
          <button
            type="button"
            class="button button-small"
            onClick={() => onOpen({ kind: 'bind', connection })}
          >
            {connection.credentialsBound ? 'Replace credentials' : 'Bind credentials'}
            <span class="visually-hidden"> of {name}</span>
          </button>
          <button
            type="button"
            class="button button-small connection-revoke"
            onClick={() => onOpen({ kind: 'revoke', connection })}
          >
            Revoke<span class="visually-hidden"> {name}</span>
          </button>
        </>
      ) : null}
    </div>
  );
}
