import type { Delivery } from '../api-types.js';
import { formatPreciseDate, plural } from '../format.js';
import { DeliveryAttempts } from './DeliveryAttempts.js';
import { DELIVERY_COLUMNS } from './deliveryLog.js';

/** The row under an expanded delivery: its attempts, their count, when it was delivered, its ID. */
export function DeliveryAttemptsRow({ delivery, id }: { delivery: Delivery; id: string }) {
  return (
    <tr class="attempts-row" id={id}>
      <td colSpan={DELIVERY_COLUMNS}>
        <DeliveryAttempts delivery={delivery} />
        <p class="attempts-summary muted">
          {plural(delivery.attemptCount, 'attempt')}
          {delivery.deliveredAt ? (
            <>
              {' '}
              · delivered{' '}
              <time dateTime={delivery.deliveredAt}>{formatPreciseDate(delivery.deliveredAt)}</time>
            </>
          ) : null}{' '}
          · delivery ID <span class="mono">{delivery.id}</span>
        </p>
      </td>
    </tr>
  );
}
