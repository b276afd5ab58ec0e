import type { Connection, DeliveryStatus } from '../api-types.js';
import { withQuery } from '../api.js';
import { DELIVERY_STATUS_WORDS } from './deliveryLog.js';
import { EmptyState } from './EmptyState.js';

/** What an empty log says, for each filter. */
const EMPTY: Record<DeliveryStatus, string> = {
  pending: 'No pending deliveries',
  delivering: 'Nothing is being delivered right now',
  retrying: 'No deliveries waiting to be retried',
  delivered: 'No delivered events',
  failed: 'No failed deliveries',
  cancelled: 'No cancelled deliveries',
  skipped: 'No deliveries skipped while paused',
};

/** An event log with nothing in it: none with this status, or none at all yet and why. */
export function DeliveryLogEmpty({
  connection,
  status,
  here,
  canOperate,
}: {
  connection: Connection;
  status: DeliveryStatus | null;
  here: string;
  canOperate: boolean;
}) {
  if (status) {
    return (
      <EmptyState title={EMPTY[status]}>
        <p>
          No delivery to “{connection.displayName}” has the status “{DELIVERY_STATUS_WORDS[status]}” now.
        </p>
        <a class="button" href={here}>
          Show all events
        </a>
      </EmptyState>
    );
  }
  return (
    <EmptyState title="No events yet">
      <p>
        Events appear here once they are published to <code>POST /api/v1/integrations/events</code> and this
        connection has credentials{connection.deliveryEnabled ? '' : ' (it has none yet)'}.
      </p>
      {!connection.deliveryEnabled && connection.status === 'active' && canOperate ? (
        <a class="button button-primary" href={withQuery('/connections', { bind: connection.id })}>
          Bind credentials
        </a>
      ) : null}
    </EmptyState>
  );
}
