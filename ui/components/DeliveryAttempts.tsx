import type { Delivery } from '../api-types.js';
import { DeliveryAttemptRow } from './DeliveryAttemptRow.js';
import { Time } from './Time.js';

/** Every attempt of one delivery: when, how long, where to, what came back, and why it failed. */
export function DeliveryAttempts({ delivery }: { delivery: Delivery }) {
  if (delivery.attempts.length === 0) {
    return (
      <p class="attempts-none">
        No attempt yet.
        {delivery.nextAttemptAt ? (
          <>
            {' '}
            The first is due <Time at={delivery.nextAttemptAt} />.
          </>
        ) : null}
      </p>
    );
  }
  return (
    <table class="attempts">
      <caption>Attempts of {delivery.eventId}</caption>
      <thead>
        <tr>
          <th scope="col" class="num">
            Attempt
          </th>
          <th scope="col">Started</th>
          <th scope="col" class="num">
            Duration
          </th>
          <th scope="col">Remote address</th>
          <th scope="col" class="num">
            Response
          </th>
          <th scope="col">Outcome</th>
        </tr>
      </thead>
      <tbody>
        {delivery.attempts.map((attempt) => (
          <DeliveryAttemptRow key={attempt.number} attempt={attempt} />
        ))}
      </tbody>
    </table>
  );
}
