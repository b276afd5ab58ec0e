import { useLocation, useRoute } from 'preact-iso';
import { useEffect } from 'preact/hooks';
import type { Connection, DeliveryDetail } from '../api-types.js';
import { api, withQuery } from '../api.js';
import { DeliveryRetryButton } from '../components/DeliveryRetryButton.js';
import { Loading } from '../components/Loading.js';
import { ErrorNotice, Notice } from '../components/Notice.js';
import { PageHeader } from '../components/PageHeader.js';
import { useDeliveryRetry } from '../components/useDeliveryRetry.js';
import { useResource, type Resource } from '../hooks.js';
import { session } from '../session.js';
import { AttemptList } from './AttemptList.js';
import { DeliveryFacts } from './DeliveryFacts.js';
import { connectionApi } from './paths.js';
import { PayloadView } from './PayloadView.js';

const IN_FLIGHT = new Set(['pending', 'delivering', 'retrying']);

/** A delivery on its way is followed live while the tab is visible. */
function useLiveDetail(delivery: Resource<DeliveryDetail>) {
  const inFlight = Boolean(delivery.data && IN_FLIGHT.has(delivery.data.status));
  useEffect(() => {
    if (!inFlight) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') delivery.reload();
    }, 2000);
    return () => clearInterval(timer);
  }, [inFlight, delivery.reload]);
}

function DeliveryMissing({
  back,
  error,
}: {
  back: { href: string; label: string };
  error: Resource<unknown>['error'];
}) {
  const missing = error?.code === 'not_found';
  return (
    <>
      <PageHeader title={missing ? 'Delivery not found' : 'Delivery'} back={back} />
      {missing ? (
        <section class="card card-narrow">
          <p>There is no delivery at this address for this connection. It may have been mistyped.</p>
          <a class="button button-primary" href={back.href}>
            Back to the event log
          </a>
        </section>
      ) : error ? (
        <ErrorNotice error={error} title="The delivery could not be loaded." />
      ) : (
        <Loading what="Loading the delivery" />
      )}
    </>
  );
}

/** One delivery (contract §15): where it stands, the payload as delivered, each attempt's request and response. */
export function DeliveryPage() {
  const { params } = useRoute();
  const { query } = useLocation();
  const id = params.id ?? '';
  const deliveryId = params.deliveryId ?? '';
  const base = connectionApi(id);
  const connection = useResource((signal) => api<Connection>('GET', base, { signal }), `connection ${id}`);
  const delivery = useResource(
    (signal) => api<DeliveryDetail>('GET', `${base}/events/${encodeURIComponent(deliveryId)}`, { signal }),
    `delivery ${id} ${deliveryId}`,
  );
  useLiveDetail(delivery);
  const retry = useDeliveryRetry(base, () => undefined, delivery.reload);
  // "Back" returns to the log as it was left: its filters and page ride along in this page's URL.
  const back = {
    href: withQuery(`/connections/${encodeURIComponent(id)}/events`, query),
    label: connection.data ? connection.data.displayName : 'Event log',
  };
  const current = delivery.data;
  if (!current || delivery.error?.code === 'not_found')
    return <DeliveryMissing back={back} error={delivery.error} />;

  const canRetry =
    session.value?.user.role !== 'MEMBER' &&
    connection.data?.status === 'active' &&
    current.status === 'failed';
  return (
    <>
      <PageHeader
        title={current.eventType}
        description={`Delivery of ${current.eventId}${connection.data ? ` to “${connection.data.displayName}”` : ''}.`}
        back={back}
        actions={
          canRetry ? (
            <DeliveryRetryButton
              eventId={current.eventId}
              retrying={retry.action.busy}
              onRetry={() => void retry.action.run(current)}
            />
          ) : null
        }
      />
      {retry.retried ? (
        <div ref={retry.notice} tabIndex={-1} class="focus-target">
          <Notice tone="success">The delivery is queued again.</Notice>
        </div>
      ) : null}
      <ErrorNotice error={retry.action.error} title="The delivery was not retried." />
      <ErrorNotice error={delivery.error} title="The delivery could not be loaded again." />
      <DeliveryFacts delivery={current} connectionId={id} />
      <PayloadView payload={current.payload} eventId={current.eventId} />
      <AttemptList delivery={current} />
    </>
  );
}
