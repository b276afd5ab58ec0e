import type { Connection } from '../api-types.js';
import { CONNECTION_STATUS_WORDS } from '../connection/connectionStatus.js';
import { ConnectionDeliveryFact } from './ConnectionDeliveryFact.js';
import { StatusBadge } from './StatusBadge.js';
import { Time } from './Time.js';

/** What a connection is, above its event log: connector, status, delivery, receiver, event types. */
export function ConnectionSummary({
  connection,
  connector,
  onBind,
}: {
  connection: Connection;
  connector: string;
  /** Binds credentials here, in a dialog; without it, "Bind credentials" leads to the list. */
  onBind?: () => void;
}) {
  const url = typeof connection.config.url === 'string' ? connection.config.url : null;
  const eventTypes = Array.isArray(connection.config.eventTypes)
    ? (connection.config.eventTypes as unknown[]).map(String)
    : null;
  return (
    <section class="card" aria-label="Connection">
      <dl class="connection-facts">
        <div>
          <dt>Connector</dt>
          <dd>{connector}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={connection.status} label={CONNECTION_STATUS_WORDS[connection.status]} />
            {connection.revokedAt ? (
              <span class="muted">
                {' '}
                since <Time at={connection.revokedAt} mode="absolute" />
              </span>
            ) : null}
          </dd>
        </div>
        <ConnectionDeliveryFact connection={connection} onBind={onBind} />
        <div>
          <dt>Created</dt>
          <dd>
            <Time at={connection.createdAt} mode="absolute" />
          </dd>
        </div>
        {url ? (
          <div class="connection-fact-wide">
            <dt>Receiver URL</dt>
            <dd class="mono break">{url}</dd>
          </div>
        ) : null}
        <div>
          <dt>Event types</dt>
          <dd class={eventTypes ? 'mono break' : undefined}>
            {eventTypes ? eventTypes.join(', ') : 'All events'}
          </dd>
        </div>
        <div>
          <dt>Connection ID</dt>
          <dd class="mono break">{connection.id}</dd>
        </div>
      </dl>
    </section>
  );
}
