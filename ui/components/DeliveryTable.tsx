import type { Delivery, DeliveryStatus } from '../api-types.js';
import { DELIVERY_COLUMNS, DELIVERY_STATUS_WORDS } from './deliveryLog.js';
import { DeliveryRow } from './DeliveryRow.js';
import { DeliveryTableHead } from './DeliveryTableHead.js';

/** A page of the event log: one row per delivery, each with its attempts behind a disclosure. */
export function DeliveryTable({
  name,
  status,
  deliveries,
  expanded,
  onToggle,
  canRetry,
  retrying,
  onRetry,
}: {
  name: string;
  status: DeliveryStatus | null;
  deliveries: Delivery[];
  expanded: Set<string>;
  onToggle: (deliveryId: string) => void;
  canRetry: boolean;
  retrying: boolean;
  onRetry: (delivery: Delivery) => void;
}) {
  return (
    <div class="table-wrap">
      <table class="deliveries">
        <caption class="visually-hidden">
          Deliveries to {name}, newest first
          {status ? `, ${DELIVERY_STATUS_WORDS[status].toLowerCase()} only` : ''}
        </caption>
        <DeliveryTableHead />
        <tbody>
          {deliveries.map((delivery) => (
            <DeliveryRow
              key={delivery.id}
              delivery={delivery}
              expanded={expanded.has(delivery.id)}
              onToggle={() => onToggle(delivery.id)}
              canRetry={canRetry}
              retrying={retrying}
              onRetry={() => onRetry(delivery)}
            />
          ))}
          {deliveries.length === 0 ? (
            <tr>
              <td colSpan={DELIVERY_COLUMNS} class="muted">
                Nothing more on this page.
              </td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </div>
  );
}
