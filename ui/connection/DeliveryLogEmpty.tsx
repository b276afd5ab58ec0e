import type { Connection, DeliveryStatus } from '../api-types.js';
import { DELIVERY_STATUS_WORDS } from '../components/deliveryLog.js';
import { EmptyState } from '../components/EmptyState.js';
import { hasFilters, type LogFilters } from './logFilters.js';

/** What an empty log says when it is filtered by one status only. */
const EMPTY: Record<DeliveryStatus, string> = {
  pending: 'No pending deliveries',
  delivering: 'Nothing is being delivered right now',
  retrying: 'No deliveries waiting to be retried',
  delivered: 'No delivered events',
  failed: 'No failed deliveries',
  cancelled: 'No cancelled deliveries',
  skipped: 'No deliveries skipped while paused',
};

/** Only a status filter, and one status: the log can say which. */
function onlyStatus(filters: LogFilters): DeliveryStatus | null {
  const [first, ...rest] = filters.status;
  return first && rest.length === 0 && !hasFilters({ ...filters, status: [] }) ? first : null;
}

/** A log filtered down to nothing: by one status, or by several filters. */
function NoneMatch({
  connection,
  filters,
  here,
}: {
  connection: Connection;
  filters: LogFilters;
  here: string;
}) {
  const status = onlyStatus(filters);
  return (
    <EmptyState title={status ? EMPTY[status] : 'No deliveries match these filters'}>
      <p>
        {status
          ? `No delivery to “${connection.displayName}” has the status “${DELIVERY_STATUS_WORDS[status]}” now.`
          : 'Try a wider time range, or fewer filters.'}
      </p>
      <a class="button" href={here}>
        Show all events
      </a>
    </EmptyState>
  );
}

/** An event log with nothing in it: none matching the filters, or none at all yet and why. */
export function DeliveryLogEmpty({
  connection,
  filters,
  here,
  canOperate,
  onBind,
}: {
  connection: Connection;
  filters: LogFilters;
  here: string;
  canOperate: boolean;
  onBind: () => void;
}) {
  if (hasFilters(filters)) return <NoneMatch connection={connection} filters={filters} here={here} />;
  const bind = !connection.deliveryEnabled && connection.status === 'active' && canOperate;
  return (
    <EmptyState title="No events yet">
      <p>
        Events appear here once they are published to <code>POST /api/v1/integrations/events</code>
        {connection.credentialsBound ? '.' : ' and this connection has credentials (it has none yet).'}
        {connection.deliveryEnabled && canOperate ? ' “Send test event” tries the receiver now.' : ''}
      </p>
      {bind ? (
        <button type="button" class="button button-primary" onClick={onBind}>
          Bind credentials
        </button>
      ) : null}
    </EmptyState>
  );
}
