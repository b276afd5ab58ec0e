// "Send test event" (docs/api/events.md): the request, then its delivery followed until it lands, and the
// outcome said next to the connection's status.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, type Answer } from '../common/api.js';
import { Due } from '../common/format.js';
import { routes, type Delivery } from '../common/routes.js';
import { attemptDestination, type Destination } from '../connections/destination.js';
import { attemptErrorText } from './attempts.js';

type TestEventAnswer = Answer<typeof routes.deliveries.test>;

/**
 * Statuses after which nothing more happens to the test. A refusal (`retrying`) is said at once and
 * followed on, so that the banner says when the test was delivered or failed for good.
 */
const FINAL = new Set(['delivered', 'failed', 'cancelled', 'skipped']);
const POLL_MS = 800;
/** After this, the outcome is left to the event log (a slow receiver, a long queue). */
const GIVE_UP_MS = 60_000;

type TestEvent =
  | { phase: 'idle' }
  | { phase: 'sending' }
  | {
      phase: 'waiting' | 'refusedOnce' | 'landed' | 'slow';
      sent: TestEventAnswer;
      delivery: Delivery | null;
    }
  | { phase: 'refused'; error: ApiError }
  | { phase: 'unreadable'; sent: TestEventAnswer; error: ApiError };

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  });

/** Reads the delivery until it lands (or it is time to give up), telling `show` each answer. */
async function follow(
  id: string,
  sent: TestEventAnswer,
  signal: AbortSignal,
  show: (state: TestEvent) => void,
): Promise<void> {
  const started = Date.now();
  let delivery: Delivery | null = null;
  while (!signal.aborted) {
    await sleep(POLL_MS, signal);
    if (signal.aborted) return;
    try {
      delivery = await api(routes.deliveries.get, { params: { id, deliveryId: sent.deliveryId }, signal });
    } catch (error) {
      // A moment offline, or too many requests, is tried again on the next turn; a refusal is final.
      const final =
        error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
      if (final && !signal.aborted) return show({ phase: 'unreadable', sent, error });
    }
    if (signal.aborted) return;
    if (delivery && FINAL.has(delivery.status)) return show({ phase: 'landed', sent, delivery });
    const refused = delivery?.status === 'retrying';
    // Past the time to give up, a refused test stays said as it is (its next attempt "shortly" at worst).
    if (Date.now() - started > GIVE_UP_MS)
      return show({ phase: refused ? 'landed' : 'slow', sent, delivery });
    show({ phase: refused ? 'refusedOnce' : 'waiting', sent, delivery });
  }
}

/** "Send test event" to connection `id`: the request, then its delivery followed until it lands. */
export function useTestEvent(id: string, onLanded: () => void) {
  const [state, setState] = useState<TestEvent>({ phase: 'idle' });
  const running = useRef<AbortController | null>(null);
  const landed = useRef(onLanded);
  landed.current = onLanded;
  useEffect(() => () => running.current?.abort(), []);

  async function send() {
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    setState({ phase: 'sending' });
    try {
      const sent = await api(routes.deliveries.test, { params: { id }, body: {} });
      setState({ phase: 'waiting', sent, delivery: null });
      landed.current();
      let said = '';
      await follow(id, sent, controller.signal, (next) => {
        setState(next);
        // The log is read again when the outcome changes, not at every turn of a refused test.
        const outcome = `${next.phase}:${'delivery' in next ? (next.delivery?.status ?? '') : ''}`;
        if (next.phase !== 'waiting' && outcome !== said) landed.current();
        said = outcome;
      });
    } catch (error) {
      if (controller.signal.aborted) return;
      setState({
        phase: 'refused',
        error: error instanceof ApiError ? error : new ApiError(0, 'unknown', String(error)),
      });
    }
  }
  const dismiss = () => {
    running.current?.abort();
    setState({ phase: 'idle' });
  };
  return { state, send, dismiss, busy: state.phase === 'sending' || state.phase === 'waiting' };
}

/** What the last attempt of the test came to, in a sentence; the start of a refusal's body. */
function AttemptSummary({ delivery }: { delivery: Delivery }) {
  const last = delivery.attempts[delivery.attempts.length - 1];
  if (!last) return null;
  const to = attemptDestination(last);
  const answered = last.responseStatus === null ? null : `The receiver answered ${last.responseStatus}`;
  const error = last.error && last.error !== 'http_status' ? attemptErrorText(last.error, to) : null;
  const body = delivery.status === 'delivered' ? null : last.response?.body;
  return (
    <>
      <p>
        {[answered, error].filter(Boolean).join('. ') || (to === 'broker' ? 'Acknowledged' : 'No answer')} in{' '}
        {last.durationMs.toLocaleString()} ms.
      </p>
      {last.errorDetail && last.error !== 'http_status' ? (
        <p class="mono attempt-detail">{last.errorDetail}</p>
      ) : null}
      {body ? (
        <pre class="test-body mono">
          {body.slice(0, 300)}
          {body.length > 300 || last.response?.bodyTruncated ? '…' : ''}
        </pre>
      ) : null}
    </>
  );
}

const HEADLINES: Record<string, string> = {
  delivered: 'The test event was delivered.',
  failed: 'The test event was not delivered: hubgate gave up, it will not try again.',
  retrying: 'The test event was not delivered yet: the receiver refused it.',
  cancelled: 'The test event was cancelled.',
  skipped: 'The test event was skipped: the connection is paused.',
};

/** A broker's failure is as often one not reached as one that refused (docs/api/brokers.md). */
const BROKER_HEADLINES: Record<string, string> = {
  retrying: 'The test event was not delivered yet: the broker was not reached, or did not acknowledge it.',
};

function headline(delivery: Delivery): string {
  const last = delivery.attempts[delivery.attempts.length - 1];
  const to: Destination = last ? attemptDestination(last) : 'receiver';
  return (
    (to === 'broker' ? BROKER_HEADLINES[delivery.status] : undefined) ??
    HEADLINES[delivery.status] ??
    'The test event is on its way.'
  );
}

function Landed({ delivery, detailHref }: { delivery: Delivery; detailHref: string }) {
  return (
    <>
      <p class="test-headline">
        <strong>{headline(delivery)}</strong>
      </p>
      <AttemptSummary delivery={delivery} />
      {delivery.status === 'retrying' && delivery.nextAttemptAt ? (
        <p>
          hubgate tries again <Due at={delivery.nextAttemptAt} />.
        </p>
      ) : null}
      <a href={detailHref}>View the test delivery</a>
    </>
  );
}

const TONE: Record<string, string> = { delivered: 'success', failed: 'error', retrying: 'error' };

/** What to say at each step, and in which tone. */
function describe(
  state: TestEvent,
  detailHref: (deliveryId: string) => string,
): { tone: string; body: ComponentChildren } {
  if (state.phase === 'sending' || (state.phase === 'waiting' && !state.delivery?.attempts.length)) {
    return {
      tone: 'info',
      body: (
        <p class="loading-inline">
          <span class="spinner" aria-hidden="true" />
          {state.phase === 'sending' ? 'Sending a test event…' : 'Test event sent; waiting for its outcome…'}
        </p>
      ),
    };
  }
  if (
    (state.phase === 'landed' || state.phase === 'waiting' || state.phase === 'refusedOnce') &&
    state.delivery
  ) {
    return {
      tone: TONE[state.delivery.status] ?? 'info',
      body: <Landed delivery={state.delivery} detailHref={detailHref(state.sent.deliveryId)} />,
    };
  }
  if (state.phase === 'slow') {
    return {
      tone: 'info',
      body: (
        <p>
          The test event is still on its way. Its outcome will show in the event log below,{' '}
          <a href={detailHref(state.sent.deliveryId)}>and on its own page</a>.
        </p>
      ),
    };
  }
  if (state.phase === 'refused' || state.phase === 'unreadable') {
    const headline =
      state.phase === 'refused'
        ? 'The test event was not sent.'
        : 'The test event was sent, but its outcome could not be read.';
    return {
      tone: 'error',
      body: (
        <p>
          <strong>{headline}</strong> {state.error.message}
        </p>
      ),
    };
  }
  return { tone: 'info', body: null };
}

/** The outcome of "Send test event", from sent to landed; announced as it changes. */
export function TestEventResult({
  state,
  detailHref,
  onDismiss,
}: {
  state: TestEvent;
  detailHref: (deliveryId: string) => string;
  onDismiss: () => void;
}) {
  const { tone, body } = describe(state, detailHref);
  return (
    <div role="status" class="test-result-region">
      {body ? (
        <section class={`notice notice-${tone} test-result`} aria-label="Test event">
          <div class="test-result-body">{body}</div>
          <button type="button" class="button button-small button-quiet" onClick={onDismiss}>
            Dismiss<span class="visually-hidden"> the test result</span>
          </button>
        </section>
      ) : null}
    </div>
  );
}
