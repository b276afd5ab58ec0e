// A delivery's attempts and its retry, as the event log, the delivery page and the test event's
// outcome show them.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError } from '../common/api.js';
import { formatPreciseDate } from '../common/format.js';
import { useAction } from '../common/hooks.js';
import { routes, type Delivery } from '../common/routes.js';
import { attemptDestination, type Destination } from '../connections/destination.js';

type Attempt = Delivery['attempts'][number];

/** The `error` codes of an attempt (docs/api/events.md), in words: a request to a receiver. */
const ERROR_WORDS: Record<string, string> = {
  timeout: 'The receiver did not answer in time',
  connection_error: 'The connection to the receiver failed',
  dns_failure: 'The receiver’s host name could not be resolved',
  tls_error: 'The secure (TLS) connection to the receiver failed',
  destination_forbidden: 'The address is refused by hubgate’s outbound policy',
  interrupted: 'The attempt was interrupted (hubgate stopped during it) and is tried again',
  redirect_refused: 'The receiver answered with a redirect, which hubgate does not follow',
  http_status: 'The receiver answered with an error status',
};

/**
 * The codes a message to a broker fails with (contract §21, docs/api/brokers.md), where they differ: no
 * HTTP, and `connection_error` is as much a broker that refused or did not acknowledge the message as one
 * not reached (`errorDetail` says which).
 */
const BROKER_ERROR_WORDS: Record<string, string> = {
  timeout: 'The broker did not acknowledge the message in time',
  connection_error: 'The broker was not reached, or did not acknowledge the message',
  dns_failure: 'The broker’s host name could not be resolved',
  tls_error: 'The secure (TLS) connection to the broker failed',
};

/** An attempt's error code in words, for where it was sent (destination.ts). */
export const attemptErrorText = (code: string, to: Destination = 'receiver'): string =>
  (to === 'broker' ? BROKER_ERROR_WORDS[code] : undefined) ?? ERROR_WORDS[code] ?? `Failed (${code})`;

// A broker's acknowledgement has no HTTP status (docs/api/brokers.md): no error is what delivered means.
const succeeded = (attempt: Attempt): boolean =>
  attempt.error === null && (attempt.responseStatus === null || attempt.responseStatus < 300);

function Outcome({ attempt }: { attempt: Attempt }) {
  if (succeeded(attempt)) return <span class="attempt-ok">Delivered</span>;
  return (
    <>
      <span class="attempt-error">
        {attempt.error ? attemptErrorText(attempt.error, attemptDestination(attempt)) : 'Failed'}
      </span>
      {attempt.errorDetail ? <span class="attempt-detail mono">{attempt.errorDetail}</span> : null}
    </>
  );
}

/** One attempt of a delivery: its number, start, duration, remote address, response and outcome. */
export function DeliveryAttemptRow({ attempt }: { attempt: Attempt }) {
  return (
    <tr>
      <th scope="row" class="num">
        {attempt.number}
      </th>
      <td>
        <time dateTime={attempt.startedAt}>{formatPreciseDate(attempt.startedAt)}</time>
      </td>
      <td class="num">{attempt.durationMs.toLocaleString()} ms</td>
      <td class="mono">{attempt.remoteAddress ?? <span class="muted">—</span>}</td>
      <td class="num">
        {attempt.responseStatus === null ? (
          <span class="muted">—</span>
        ) : (
          <span class={attempt.responseStatus < 300 ? 'http-ok mono' : 'http-bad mono'}>
            {attempt.responseStatus}
          </span>
        )}
      </td>
      <td class="attempt-outcome">
        <Outcome attempt={attempt} />
      </td>
    </tr>
  );
}

/** Retry of a failed delivery, named by its event ID for a screen reader. */
export function DeliveryRetryButton({
  eventId,
  retrying,
  onRetry,
}: {
  eventId: string;
  retrying: boolean;
  onRetry: () => void;
}) {
  return (
    <button
      type="button"
      class="button button-small"
      onClick={onRetry}
      disabled={retrying}
      aria-busy={retrying}
    >
      {retrying ? 'Retrying…' : 'Retry'}
      <span class="visually-hidden"> delivery of {eventId}</span>
    </button>
  );
}

/** A retry refused (409), in words: a revoked connection, or a delivery that is no longer failed. */
function retryFailure(error: ApiError): ApiError {
  if (error.code !== 'conflict' || !/disabled/.test(error.message)) return error;
  return new ApiError(
    error.status,
    error.code,
    'The connection is revoked, so nothing is sent to it any more.',
    error.fieldErrors,
    error.requestId,
  );
}

/**
 * Retrying a failed delivery of connection `id`: the row is assumed "pending" (`onQueued`) until
 * the log is loaded again (`reload`), and a notice naming the event says it is queued.
 */
export function useDeliveryRetry(id: string, onQueued: (deliveryId: string) => void, reload: () => void) {
  const [retried, setRetried] = useState<string | null>(null);
  // The retried row may leave the list (filtered by "failed"): the notice takes the focus instead.
  const notice = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (retried) notice.current?.focus();
  }, [retried]);

  const action = useAction(async (delivery: Delivery) => {
    setRetried(null);
    try {
      await api(routes.deliveries.retry, { params: { id, deliveryId: delivery.id } });
    } catch (error) {
      throw error instanceof ApiError ? retryFailure(error) : error;
    }
    onQueued(delivery.id);
    setRetried(delivery.eventId);
    reload();
  });
  return { action, retried, notice };
}
