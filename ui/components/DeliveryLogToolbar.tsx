import type { DeliveryStatus } from '../api-types.js';
import { DELIVERY_STATUS_WORDS, DELIVERY_STATUSES } from './deliveryLog.js';

/** The event log's heading, its status filter and its Refresh button. */
export function DeliveryLogToolbar({
  filterId,
  status,
  onStatus,
  refreshing,
  onRefresh,
}: {
  filterId: string;
  status: DeliveryStatus | null;
  onStatus: (status: string | undefined) => void;
  refreshing: boolean;
  onRefresh: () => void;
}) {
  return (
    <div class="log-toolbar">
      <h2 id={`${filterId}-title`}>Deliveries</h2>
      <div class="row">
        <label for={filterId}>Status</label>
        <select
          id={filterId}
          class="select-inline"
          value={status ?? ''}
          onChange={(event) => onStatus(event.currentTarget.value || undefined)}
        >
          <option value="">All statuses</option>
          {DELIVERY_STATUSES.map((s) => (
            <option key={s} value={s}>
              {DELIVERY_STATUS_WORDS[s]}
            </option>
          ))}
        </select>
        <button type="button" class="button" onClick={onRefresh} aria-busy={refreshing}>
          {refreshing ? 'Refreshing…' : 'Refresh'}
        </button>
      </div>
    </div>
  );
}
