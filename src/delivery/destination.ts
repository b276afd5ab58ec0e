import type { Budget } from '../deadline.js';
import type { SendError, SendResult } from '../outbound/sender.js';
import type { PreparedRequest } from './prepare.js';

// An attempt's send phase (attempt.ts): the one place a kind of destination plugs in. Everything
// around it (the claim, prepare, record, retries, automatic pause, ordering, the throttle, the
// attempt's span) is the worker's, the same for every kind (docs/decisions/0072).

/**
 * How an attempt ended, what its outcome is recorded from (record.ts): what the destination saw, or
 * a worker that died mid-attempt (`interruptedResult`). `ok` is delivered; otherwise `error` (one of a
 * closed set, docs/api/events.md) and `errorDetail` say why, and `retryAfterSeconds`, when the
 * destination said when to try again, moves the retry. `status` and `response` are what an answer
 * said, for the event log; `remoteAddress` where it went; `durationMs` the whole attempt's time.
 */
export type AttemptResult = Omit<SendResult, 'error'> & { error: SendError | 'interrupted' | null };

/**
 * Where a delivery goes: HTTP (http-destination.ts) or a broker (amqp-destination.ts), chosen by what
 * the connector rendered (destinations.ts, docs/decisions/0080). A destination gets the prepared delivery
 * (the connector's rendered and signed request: where, headers, body; the connection's secrets,
 * which what it keeps of an answer must not show) and the attempt's budget, which every call it
 * makes draws on and none outlives (claim.ts, `attemptDeadline`). It touches no database and never
 * throws for what the receiver or the network did: every failure is a result, timed.
 */
export interface Destination {
  send(prepared: PreparedRequest, budget: Budget): Promise<AttemptResult>;
  /** Closes what it holds open (a connection pool, a broker's session), once the worker has stopped. */
  close(): Promise<void>;
}

/**
 * The attempt of a claim that ran out with no outcome recorded: its worker died (or lost the
 * database) mid-attempt, and the receiver may have had the request. It counts like any failed one,
 * as long as the claim lasted, so attempt numbers match what the receiver may have seen.
 */
export function interruptedResult(claimedAt: Date, claimEnded: Date): AttemptResult {
  const heldMs = Math.max(0, claimEnded.getTime() - claimedAt.getTime());
  return {
    ok: false,
    status: null,
    remoteAddress: null,
    error: 'interrupted',
    errorDetail: `the worker stopped before recording an outcome; its claim expired after ${Math.round(heldMs / 1000)} s`,
    retryAfterSeconds: null,
    durationMs: heldMs,
  };
}
