import type { Connection } from '../api-types.js';
import { pausedShort } from '../connection/connectionStatus.js';
import { StatusBadge } from './StatusBadge.js';

/** Whether it delivers: only an active connection with credentials does; a paused one says why. */
export function ConnectionDeliveryState({ connection }: { connection: Connection }) {
  const paused = pausedShort(connection);
  if (paused) return <span class="connection-paused-reason">{paused}</span>;
  if (connection.status !== 'active') return null;
  if (connection.deliveryEnabled) return <StatusBadge status="delivered" label="Delivery enabled" />;
  return <StatusBadge status="expired" label="Needs credentials" />;
}
