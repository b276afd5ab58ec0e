import type { Connection } from '../api-types.js';
import { ConnectionRow } from './ConnectionRow.js';
import type { ConnectionDialog } from './ConnectionRowActions.js';

/** The connections of one page of the list, newest first. */
export function ConnectionTable({
  connections,
  connectorName,
  canOperate,
  onOpen,
}: {
  connections: Connection[];
  connectorName: (key: string) => string;
  canOperate: boolean;
  onOpen: (open: ConnectionDialog) => void;
}) {
  return (
    <div class="table-wrap">
      <table class="connections">
        <caption class="visually-hidden">Connections, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Connector</th>
            <th scope="col">Status and delivery</th>
            <th scope="col">Created</th>
            <th scope="col" class="actions">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {connections.map((connection) => (
            <ConnectionRow
              key={connection.id}
              connection={connection}
              connectorName={connectorName(connection.connectorKey)}
              canOperate={canOperate}
              onOpen={onOpen}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}
