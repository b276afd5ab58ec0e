import type { Connection } from '../api-types.js';
import { StatusBadge } from './StatusBadge.js';

/** Whether it delivers: only an active connection with credentials does. Revoked says it all. */
export function ConnectionDeliveryState({ connection }: { connection: Connection }) {
  if (connection.status !== 'active') return null;
  if (connection.deliveryEnabled) return <StatusBadge status="delivered" label="Delivery enabled" />;
  return <StatusBadge status="expired" label="Needs credentials" />;
}
