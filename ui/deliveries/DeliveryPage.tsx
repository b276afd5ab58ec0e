// One delivery's page (docs/api/events.md): where it stands, the payload as delivered, and each attempt's
// request and response; followed live while it is still moving.
import type { ComponentChildren } from 'preact';
import { useLocation, useRoute } from 'preact-iso';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { api, withQuery } from '../common/api.js';
import { Due, formatPreciseDate, Time } from '../common/format.js';
import { HeaderTable, readable } from '../common/HeaderTable.js';
import { useResource, type Resource } from '../common/hooks.js';
import { PageHeader } from '../common/Layout.js';
import { ErrorNotice, Loading, Notice, StatusBadge } from '../common/Notice.js';
import {
  routes,
  type AttemptRequest,
  type AttemptResponse,
  type DeliveryAttempt,
  type DeliveryDetail,
} from '../common/routes.js';
import { mayOperate, pageUrl } from '../common/viewer.js';
import { attemptDestination, type Destination } from '../connections/destination.js';
import { attemptErrorText, DeliveryRetryButton, useDeliveryRetry } from './attempts.js';
import { DELIVERY_STATUS_WORDS, deliveryPage } from './log.js';

/**
 * Copies `text` to the clipboard; where the browser refuses, selects the element in `target` so that
 * Ctrl+C does it. `copied` says which happened, for a few seconds.
 */
function useCopy<T extends HTMLElement>(text: string) {
  const target = useRef<T>(null);
  const [copied, setCopied] = useState<'yes' | 'select' | null>(null);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(null), 4000);
    return () => clearTimeout(timer);
  }, [copied]);

  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      const element = target.current;
      if (element) {
        const range = document.createRange();
        range.selectNodeContents(element);
        const selection = window.getSelection();
        selection?.removeAllRanges();
        selection?.addRange(range);
      }
      setCopied('select');
    }
  }
  return { target, copied, copy };
}

/** The body as delivered, formatted, with a copy button (the copy is the formatted JSON). */
function PayloadView({ payload, eventId }: { payload: Record<string, unknown>; eventId: string }) {
  const text = JSON.stringify(payload, null, 2);
  const { target, copied, copy } = useCopy<HTMLPreElement>(text);
  const id = useId();
  return (
    <section class="card detail-section" aria-labelledby={id}>
      <div class="card-head">
        <h2 id={id}>Payload</h2>
        <div class="row">
          <span class={copied === 'select' ? 'copy-status' : 'visually-hidden'} role="status">
            {copied === 'yes'
              ? 'Copied to the clipboard'
              : copied === 'select'
                ? 'Selected: press Ctrl+C to copy'
                : ''}
          </span>
          <button type="button" class="button button-small" onClick={() => void copy()}>
            {copied === 'yes' ? 'Copied' : 'Copy payload'}
          </button>
        </div>
      </div>
      <p class="muted detail-lead">
        The body exactly as it was (or will be) delivered for <span class="mono">{eventId}</span>.
      </p>
      {/* Scrolls on its own when wide: a named region that takes the focus, so a keyboard scrolls it too. */}
      <pre ref={target} class="code-block" tabIndex={0} role="region" aria-label="Payload JSON">
        <code>{text}</code>
      </pre>
    </section>
  );
}

function RequestPart({ request, number }: { request: AttemptRequest | null; number: number }) {
  return (
    <section class="exchange-part" aria-label={`Request of attempt ${number}`}>
      <h3>Request</h3>
      {request ? (
        <>
          <p class="mono exchange-line">
            <strong>{request.method}</strong> <span class="break">{request.url}</span>
          </p>
          <HeaderTable headers={request.headers} caption={`Request headers of attempt ${number}`} />
        </>
      ) : (
        <p class="muted">Not recorded for this attempt.</p>
      )}
    </section>
  );
}

/** Said when an attempt got no answer: a receiver answers a request, a broker acknowledges a message. */
const NO_ANSWER: Record<Destination, string> = {
  receiver: 'No answer: the receiver was not reached, or did not answer.',
  broker: 'No acknowledgement: the broker was not reached, or did not acknowledge the message.',
};

function ResponsePart({
  response,
  status,
  number,
  to,
}: {
  response: AttemptResponse | null;
  status: number | null;
  number: number;
  to: Destination;
}) {
  return (
    <section class="exchange-part" aria-label={`Response of attempt ${number}`}>
      <h3>Response</h3>
      {response ? (
        <>
          {status !== null ? (
            <p class="mono exchange-line">
              <span class={status < 300 ? 'http-ok' : 'http-bad'}>{status}</span>
            </p>
          ) : null}
          <HeaderTable headers={response.headers} caption={`Response headers of attempt ${number}`} />
          <h4 class="exchange-body-title">Body</h4>
          {response.body === null || response.body === '' ? (
            <p class="muted">{response.body === null ? 'Not kept.' : 'Empty.'}</p>
          ) : (
            <pre
              class="code-block"
              tabIndex={0}
              role="region"
              aria-label={`Response body of attempt ${number}`}
            >
              <code>{readable(response.body, response.bodyTruncated)}</code>
            </pre>
          )}
          {response.bodyTruncated ? (
            <p class="field-hint">Only the start of the body is kept; the rest was cut.</p>
          ) : null}
        </>
      ) : (
        <p class="muted">{NO_ANSWER[to]}</p>
      )}
    </section>
  );
}

/** What one attempt sent and what came back. */
function AttemptExchange({
  request,
  response,
  status,
  number,
  to,
}: {
  request: AttemptRequest | null;
  response: AttemptResponse | null;
  status: number | null;
  number: number;
  to: Destination;
}) {
  return (
    <div class="exchange">
      <RequestPart request={request} number={number} />
      <ResponsePart response={response} status={status} number={number} to={to} />
    </div>
  );
}

// A broker's acknowledgement has no HTTP status (docs/api/brokers.md): no error is what delivered means.
const succeeded = (attempt: DeliveryAttempt): boolean =>
  attempt.error === null && (attempt.responseStatus === null || attempt.responseStatus < 300);

/** "Delivered 200", "Refused 503", or why no answer came. */
function Outcome({ attempt }: { attempt: DeliveryAttempt }) {
  const status = attempt.responseStatus;
  if (succeeded(attempt))
    return <span class="attempt-ok">{status === null ? 'Delivered' : `Delivered · ${status}`}</span>;
  if (attempt.error === 'http_status' && status !== null) {
    return <span class="attempt-error">Answered {status}</span>;
  }
  return (
    <span class="attempt-error">
      {attempt.error ? attemptErrorText(attempt.error, attemptDestination(attempt)) : 'Failed'}
      {status !== null ? ` · ${status}` : ''}
    </span>
  );
}

/** One attempt: a line that says how it went, opening to its request and response. */
function Attempt({ attempt, open }: { attempt: DeliveryAttempt; open: boolean }) {
  return (
    <li>
      <details class="attempt-card" open={open}>
        <summary>
          <span class="attempt-title">Attempt {attempt.number}</span>
          <Outcome attempt={attempt} />
          <span class="attempt-meta muted">
            <time dateTime={attempt.startedAt} title={formatPreciseDate(attempt.startedAt)}>
              {formatPreciseDate(attempt.startedAt)}
            </time>{' '}
            · {attempt.durationMs.toLocaleString()} ms
            {attempt.remoteAddress ? (
              <>
                {' '}
                · <span class="mono">{attempt.remoteAddress}</span>
              </>
            ) : null}
          </span>
        </summary>
        <div class="attempt-card-body">
          {attempt.errorDetail && attempt.error !== 'http_status' ? (
            <p class="attempt-detail mono">{attempt.errorDetail}</p>
          ) : null}
          <AttemptExchange
            request={attempt.request}
            response={attempt.response}
            status={attempt.responseStatus}
            number={attempt.number}
            to={attemptDestination(attempt)}
          />
        </div>
      </details>
    </li>
  );
}

/** Every attempt, newest first; the newest is open, since it is what the receiver (or broker) says now. */
function AttemptList({ delivery }: { delivery: DeliveryDetail }) {
  const id = useId();
  const attempts = [...delivery.attempts].sort((a, b) => b.number - a.number);
  return (
    <section class="detail-section" aria-labelledby={id}>
      <h2 id={id}>Attempts</h2>
      {attempts.length === 0 ? (
        <p class="empty-inline">
          No attempt yet.
          {delivery.nextAttemptAt ? (
            <>
              {' '}
              The first is due <Due at={delivery.nextAttemptAt} />.
            </>
          ) : null}
        </p>
      ) : (
        <ol class="attempt-list">
          {attempts.map((attempt, index) => (
            <Attempt key={attempt.number} attempt={attempt} open={index === 0} />
          ))}
        </ol>
      )}
    </section>
  );
}

function Fact({ label, children, wide }: { label: string; children: ComponentChildren; wide?: boolean }) {
  return (
    <div class={wide ? 'connection-fact-wide' : undefined}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** What a delivery is and where it stands: status, when, how many attempts, what it waits for. */
function DeliveryFacts({ delivery, connectionId }: { delivery: DeliveryDetail; connectionId: string }) {
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
            <Due at={delivery.nextAttemptAt} />
          </Fact>
        ) : null}
        <Fact label="Attempts">{delivery.attemptCount}</Fact>
        {delivery.orderingKey !== null ? (
          <Fact label="Ordering key" wide>
            <span class="mono break">{delivery.orderingKey}</span>{' '}
            <span class="muted">(its key’s deliveries go one at a time, in publish order)</span>
          </Fact>
        ) : null}
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

/**
 * One delivery (docs/api/events.md): where it stands, the payload as delivered, each attempt's request and
 * response.
 */
export function DeliveryPage() {
  const { params } = useRoute();
  const { query } = useLocation();
  const id = params.id ?? '';
  const deliveryId = params.deliveryId ?? '';
  const connection = useResource(
    (signal) => api(routes.connections.get, { params: { id }, signal }),
    `connection ${id}`,
  );
  const delivery = useResource(
    (signal) => api(routes.deliveries.get, { params: { id, deliveryId }, signal }),
    `delivery ${id} ${deliveryId}`,
  );
  useLiveDetail(delivery);
  const retry = useDeliveryRetry(id, () => undefined, delivery.reload);
  // "Back" returns to the log as it was left: its filters and page ride along in this page's URL.
  const back = {
    href: withQuery(pageUrl(`/connections/${encodeURIComponent(id)}/events`), query),
    label: connection.data ? connection.data.displayName : 'Event log',
  };
  const current = delivery.data;
  if (!current || delivery.error?.code === 'not_found')
    return <DeliveryMissing back={back} error={delivery.error} />;

  const canRetry = mayOperate() && connection.data?.status === 'active' && current.status === 'failed';
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
