import type { ComponentChildren } from 'preact';
import type { DeliveryDetail } from '../api-types.js';
import { DELIVERY_STATUS_WORDS } from '../components/deliveryLog.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { Time } from '../components/Time.js';
import { deliveryPage } from './paths.js';

function Fact({ label, children, wide }: { label: string; children: ComponentChildren; wide?: boolean }) {
  return (
    <div class={wide ? 'connection-fact-wide' : undefined}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** What a delivery is and where it stands: status, when, how many attempts, what it waits for. */
export function DeliveryFacts({
  delivery,
  connectionId,
}: {
  delivery: DeliveryDetail;
  connectionId: string;
}) {
  const waiting = delivery.status === 'pending' || delivery.status === 'retrying';
  return (
    <section class="card" aria-label="Delivery">
      <dl class="connection-facts">
        <Fact label="Status">
          <StatusBadge status={delivery.status} label={DELIVERY_STATUS_WORDS[delivery.status]} />
          {delivery.test ? <span class="tag">test</span> : null}
        </Fact>
        <Fact label="Created">
          <Time at={delivery.createdAt} mode="absolute" />
        </Fact>
        {delivery.deliveredAt ? (
          <Fact label="Delivered">
            <Time at={delivery.deliveredAt} mode="absolute" />
          </Fact>
        ) : null}
        {waiting && delivery.nextAttemptAt ? (
          <Fact label="Next attempt">
            <Time at={delivery.nextAttemptAt} />
          </Fact>
        ) : null}
        <Fact label="Attempts">{delivery.attemptCount}</Fact>
        {delivery.waitingFor ? (
          <Fact label="Waits for">
            <a class="mono" href={deliveryPage(connectionId, delivery.waitingFor)}>
              {delivery.waitingFor}
            </a>{' '}
            <span class="muted">(the earlier event of its ordering key)</span>
          </Fact>
        ) : null}
        <Fact label="Event ID" wide>
          <span class="mono break">{delivery.eventId}</span>
        </Fact>
        <Fact label="Delivery ID" wide>
          <span class="mono break">{delivery.id}</span>
        </Fact>
      </dl>
    </section>
  );
}
