// Words and sizes shared by the parts of a connection's event log.
import type { DeliveryStatus } from '../api-types.js';

/** Each delivery status (contract §7), as the log and its filter say it. */
export const DELIVERY_STATUS_WORDS: Record<DeliveryStatus, string> = {
  pending: 'Pending',
  delivering: 'Delivering',
  retrying: 'Retrying',
  delivered: 'Delivered',
  failed: 'Failed',
  cancelled: 'Cancelled',
  skipped: 'Skipped',
};

/** The number of columns of the log's table, which the attempts row spans. */
export const DELIVERY_COLUMNS = 7;

/** Every delivery status, in the order the log's filter offers them. */
export const DELIVERY_STATUSES = Object.keys(DELIVERY_STATUS_WORDS) as DeliveryStatus[];
