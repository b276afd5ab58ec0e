import type { Delivery } from '../api-types.js';
import { formatPreciseDate } from '../format.js';

type Attempt = Delivery['attempts'][number];

/** The `error` codes of an attempt (contract §7), in words. */
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

export const attemptErrorText = (code: string): string => ERROR_WORDS[code] ?? `Failed (${code})`;

const succeeded = (attempt: Attempt): boolean =>
  attempt.error === null && attempt.responseStatus !== null && attempt.responseStatus < 300;

function Outcome({ attempt }: { attempt: Attempt }) {
  if (succeeded(attempt)) return <span class="attempt-ok">Delivered</span>;
  return (
    <>
      <span class="attempt-error">{attempt.error ? attemptErrorText(attempt.error) : 'Failed'}</span>
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
