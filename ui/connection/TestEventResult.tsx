import type { ComponentChildren } from 'preact';
import type { Delivery } from '../api-types.js';
import { attemptErrorText } from '../components/DeliveryAttemptRow.js';
import { Time } from '../components/Time.js';
import type { TestEvent } from './useTestEvent.js';

/** What the last attempt of the test came to, in a sentence; the start of a refusal's body. */
function AttemptSummary({ delivery }: { delivery: Delivery }) {
  const last = delivery.attempts[delivery.attempts.length - 1];
  if (!last) return null;
  const answered = last.responseStatus === null ? null : `The receiver answered ${last.responseStatus}`;
  const error = last.error && last.error !== 'http_status' ? attemptErrorText(last.error) : null;
  const body = delivery.status === 'delivered' ? null : last.response?.body;
  return (
    <>
      <p>
        {[answered, error].filter(Boolean).join('. ') || 'No answer'} in {last.durationMs.toLocaleString()}{' '}
        ms.
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

/** "in 4 seconds", or "in a moment" when it is about now. */
function Soon({ at }: { at: string }) {
  return Math.abs(new Date(at).getTime() - Date.now()) < 5000 ? <>in a moment</> : <Time at={at} />;
}

const HEADLINES: Record<string, string> = {
  delivered: 'The test event was delivered.',
  failed: 'The test event was not delivered.',
  retrying: 'The test event was not delivered yet: the receiver refused it.',
  cancelled: 'The test event was cancelled.',
  skipped: 'The test event was skipped: the connection is paused.',
};

function Landed({ delivery, detailHref }: { delivery: Delivery; detailHref: string }) {
  return (
    <>
      <p class="test-headline">
        <strong>{HEADLINES[delivery.status] ?? 'The test event is on its way.'}</strong>
      </p>
      <AttemptSummary delivery={delivery} />
      {delivery.status === 'retrying' && delivery.nextAttemptAt ? (
        <p>
          hubgate tries again <Soon at={delivery.nextAttemptAt} />.
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
          {state.phase === 'sending'
            ? 'Sending a test event…'
            : 'Test event sent; waiting for the receiver’s answer…'}
        </p>
      ),
    };
  }
  if ((state.phase === 'landed' || state.phase === 'waiting') && state.delivery) {
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
