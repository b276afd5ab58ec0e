import type { Delivery } from '../api-types.js';
import { DELIVERY_COLUMNS } from './deliveryLog.js';
import { DeliveryRow } from './DeliveryRow.js';
import { DeliveryTableHead } from './DeliveryTableHead.js';

/** A page of the event log: one row per delivery, each with its attempts behind a disclosure. */
export function DeliveryTable({
  name,
  filtered,
  deliveries,
  expanded,
  onToggle,
  detailHref,
  canRetry,
  retrying,
  onRetry,
}: {
  name: string;
  filtered: boolean;
  deliveries: Delivery[];
  expanded: Set<string>;
  onToggle: (deliveryId: string) => void;
  detailHref: (delivery: Delivery) => string;
  canRetry: boolean;
  retrying: boolean;
  onRetry: (delivery: Delivery) => void;
}) {
  return (
    <div class="table-wrap">
      <table class="deliveries">
        <caption class="visually-hidden">
          Deliveries to {name}, newest first{filtered ? ', filtered' : ''}
        </caption>
        <DeliveryTableHead />
        <tbody>
          {deliveries.map((delivery) => (
            <DeliveryRow
              key={delivery.id}
              delivery={delivery}
              expanded={expanded.has(delivery.id)}
              onToggle={() => onToggle(delivery.id)}
              detailHref={detailHref(delivery)}
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
