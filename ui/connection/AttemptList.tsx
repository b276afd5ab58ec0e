import { useId } from 'preact/hooks';
import type { DeliveryAttempt, DeliveryDetail } from '../api-types.js';
import { attemptErrorText } from '../components/DeliveryAttemptRow.js';
import { Time } from '../components/Time.js';
import { formatPreciseDate } from '../format.js';
import { AttemptExchange } from './AttemptExchange.js';

const succeeded = (attempt: DeliveryAttempt): boolean =>
  attempt.error === null && attempt.responseStatus !== null && attempt.responseStatus < 300;

/** "Delivered 200", "Refused 503", or why no answer came. */
function Outcome({ attempt }: { attempt: DeliveryAttempt }) {
  const status = attempt.responseStatus;
  if (succeeded(attempt)) return <span class="attempt-ok">Delivered · {status}</span>;
  if (attempt.error === 'http_status' && status !== null) {
    return <span class="attempt-error">Answered {status}</span>;
  }
  return (
    <span class="attempt-error">
      {attempt.error ? attemptErrorText(attempt.error) : 'Failed'}
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
          />
        </div>
      </details>
    </li>
  );
}

/** Every attempt, newest first; the newest is open, since it is what the receiver says now. */
export function AttemptList({ delivery }: { delivery: DeliveryDetail }) {
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
              The first is due <Time at={delivery.nextAttemptAt} />.
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
