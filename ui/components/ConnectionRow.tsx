import type { Connection } from '../api-types.js';
import { CONNECTION_STATUS_WORDS } from '../connection/connectionStatus.js';
import { ConnectionDeliveryState } from './ConnectionDeliveryState.js';
import { ConnectionRowActions, type ConnectionDialog } from './ConnectionRowActions.js';
import { StatusBadge } from './StatusBadge.js';
import { Time } from './Time.js';

/** Where a connection delivers, when its config names a URL (webhook, http). */
const destinationOf = (connection: Connection): string | null =>
  typeof connection.config.url === 'string' ? connection.config.url : null;

/** One connection of the list: name and receiver, connector, status and delivery, created, actions. */
export function ConnectionRow({
  connection,
  connectorName,
  canOperate,
  onOpen,
}: {
  connection: Connection;
  connectorName: string;
  canOperate: boolean;
  onOpen: (open: ConnectionDialog) => void;
}) {
  const destination = destinationOf(connection);
  return (
    <tr>
      <th scope="row" class="connection-name">
        <span>{connection.displayName}</span>
        {destination ? (
          <span class="connection-destination mono" title={destination}>
            {destination}
          </span>
        ) : null}
      </th>
      <td>{connectorName}</td>
      <td>
        <span class="connection-status">
          <StatusBadge status={connection.status} label={CONNECTION_STATUS_WORDS[connection.status]} />
          <ConnectionDeliveryState connection={connection} />
        </span>
      </td>
      <td class="connection-created">
        <Time at={connection.createdAt} />
      </td>
      <td class="actions">
        <ConnectionRowActions connection={connection} canOperate={canOperate} onOpen={onOpen} />
      </td>
    </tr>
  );
}
