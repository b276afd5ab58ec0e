import { Fragment } from 'preact';
import type { Delivery } from '../api-types.js';
import { DeliveryAttemptsRow } from './DeliveryAttemptsRow.js';
import { DELIVERY_STATUS_WORDS } from './deliveryLog.js';
import { DeliveryRetryButton } from './DeliveryRetryButton.js';
import { StatusBadge } from './StatusBadge.js';
import { Time } from './Time.js';

/** A long event type may break after each dot (`employee.contract.signed`), never inside a word. */
function breakable(type: string) {
  return type.split('.').map((part, index) => (
    <Fragment key={index}>
      {index > 0 ? (
        <>
          .<wbr />
        </>
      ) : null}
      {part}
    </Fragment>
  ));
}

function LastAndNext({ delivery }: { delivery: Delivery }) {
  const last = delivery.attempts[delivery.attempts.length - 1];
  const waiting = delivery.status === 'pending' || delivery.status === 'retrying';
  if (!last && !(waiting && delivery.nextAttemptAt)) return <span class="muted">—</span>;
  return (
    <span class="last-next">
      {last ? <Time at={last.startedAt} /> : null}
      {waiting && delivery.nextAttemptAt ? (
        <span class="muted">
          Next <Time at={delivery.nextAttemptAt} />
        </span>
      ) : null}
    </span>
  );
}

/** The event: its type (tagged when it is a test) and, under it, its ID, which leads to the delivery's page. */
function DeliveryEventCell({ delivery, detailHref }: { delivery: Delivery; detailHref: string }) {
  return (
    <th scope="row" class="event-cell">
      <span class="mono event-type">
        {breakable(delivery.eventType)}
        {delivery.test ? <span class="tag">test</span> : null}
      </span>
      <a class="mono event-id" href={detailHref}>
        <span class="visually-hidden">Details of </span>
        {delivery.eventId}
      </a>
    </th>
  );
}

/** One delivery of the event log and, when expanded, its attempts. */
export function DeliveryRow({
  delivery,
  expanded,
  onToggle,
  detailHref,
  canRetry,
  retrying,
  onRetry,
}: {
  delivery: Delivery;
  expanded: boolean;
  onToggle: () => void;
  /** The delivery's own page: payload, each attempt's request and response. */
  detailHref: string;
  canRetry: boolean;
  retrying: boolean;
  onRetry: () => void;
}) {
  const attemptsId = `attempts-${delivery.id}`;
  return (
    <>
      <tr class={expanded ? 'delivery delivery-open' : 'delivery'}>
        <td class="disclosure-cell">
          <button
            type="button"
            class="disclosure"
            aria-expanded={expanded}
            aria-controls={attemptsId}
            onClick={onToggle}
          >
            <span class="disclosure-icon" aria-hidden="true" />
            <span class="visually-hidden">Show attempts of {delivery.eventId}</span>
          </button>
        </td>
        <DeliveryEventCell delivery={delivery} detailHref={detailHref} />
        <td>
          <StatusBadge status={delivery.status} label={DELIVERY_STATUS_WORDS[delivery.status]} />
        </td>
        <td class="num">{delivery.attemptCount}</td>
        <td class="delivery-time">
          <Time at={delivery.createdAt} />
        </td>
        <td>
          <LastAndNext delivery={delivery} />
        </td>
        <td class="actions">
          {canRetry && delivery.status === 'failed' ? (
            <DeliveryRetryButton eventId={delivery.eventId} retrying={retrying} onRetry={onRetry} />
          ) : null}
        </td>
      </tr>
      {expanded ? <DeliveryAttemptsRow delivery={delivery} id={attemptsId} /> : null}
    </>
  );
}
