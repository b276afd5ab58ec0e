import type { Insertable } from 'kysely';
import type { AppContext } from '../context.js';
import { isDatabaseUnavailable } from '../db/database.js';
import type { DeliveryAttemptsTable } from '../db/schema.js';
import type { DeliveryOutcome, Metrics } from '../http/metrics.js';
import { errorFields } from '../logger.js';
import type { ClaimedRow } from './claim.js';
import type { AttemptResult } from './destination.js';
import type { Outcome, OutcomeWriter } from './outcomes.js';
import type { RequestRecord } from './prepare.js';
import { retryDelaySeconds } from './retry.js';

/** A delivery's state after an attempt: what the outcome write sets while the claim holds. */
export interface Decision {
  status: Exclude<DeliveryOutcome, 'cancelled' | 'skipped'>;
  attemptCount: number;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
}

/**
 * The next state after attempt number `attemptCount + 1` ended with `result` at `now` (docs/api/events.md):
 * delivered; retrying after the schedule's delay (a Retry-After honoured, see retry.ts); or failed
 * once the schedule is spent, or at once on 410 Gone, the receiver saying it will never take it.
 */
export function decideOutcome(
  attemptCount: number,
  result: AttemptResult,
  schedule: readonly number[],
  now: Date,
  random: () => number = Math.random,
): Decision {
  const number = attemptCount + 1;
  const ended = { attemptCount: number, nextAttemptAt: null, deliveredAt: null };
  if (result.ok) return { ...ended, status: 'delivered', deliveredAt: now };
  const delay =
    result.status === 410 ? null : retryDelaySeconds(number, schedule, result.retryAfterSeconds, random);
  if (delay === null) return { ...ended, status: 'failed' };
  return { ...ended, status: 'retrying', nextAttemptAt: new Date(now.getTime() + delay * 1000) };
}

/** The attempt's row in the delivery log, with what was sent (when known) and what was answered. */
export function attemptRow(
  row: ClaimedRow,
  startedAt: Date,
  result: AttemptResult,
  sent?: RequestRecord,
): Insertable<DeliveryAttemptsTable> {
  return {
    delivery_id: row.id,
    delivery_created_at: row.created_at,
    number: row.attempt_count + 1,
    started_at: startedAt,
    duration_ms: result.durationMs,
    remote_address: result.remoteAddress,
    response_status: result.status,
    error: result.error,
    error_detail: result.errorDetail,
    request: sent ? JSON.stringify(sent) : null,
    response: result.response ? JSON.stringify(result.response) : null,
  };
}

/** What the outcome write gets: the new state, and the attempt that ended the claim (if any). */
export function outcomeOf(
  row: ClaimedRow,
  decision: Decision | { status: 'cancelled' | 'skipped' },
  attempt?: Insertable<DeliveryAttemptsTable>,
): Outcome {
  const ended = 'attemptCount' in decision ? decision : undefined;
  return {
    deliveryId: row.id,
    connectionId: row.connection_id,
    createdAt: row.created_at,
    status: decision.status,
    attemptCount: ended?.attemptCount ?? row.attempt_count,
    nextAttemptAt: ended?.nextAttemptAt ?? null,
    deliveredAt: ended?.deliveredAt ?? null,
    attempt,
    // Only an ordered delivery says so: its end releases the next of its key (ordering.ts).
    ...(row.ordering_key ? { ordered: true } : {}),
  };
}

/** An attempt's metrics: outcomes, attempt durations, and the time from publish to delivery. */
export function countAttempt(
  metrics: Pick<Metrics, 'deliveries' | 'deliveryAttemptDuration' | 'deliveryLatency'>,
  row: ClaimedRow,
  result: AttemptResult,
  outcome: DeliveryOutcome,
  now: Date,
): void {
  metrics.deliveries.inc({ outcome });
  // How long an interrupted attempt took is not known; the claim's length would skew the histogram.
  if (result.error !== 'interrupted') {
    metrics.deliveryAttemptDuration.observe({ outcome }, result.durationMs / 1000);
  }
  if (outcome === 'delivered') {
    const published = new Date(row.event_created_at).getTime();
    metrics.deliveryLatency.observe((now.getTime() - published) / 1000);
  }
}

/**
 * Ends claims (see outcomes.ts): each outcome goes with the next batch, and `record` returns at
 * once. A write that fails is logged, not retried: the claim runs out and the delivery is retaken,
 * with this attempt logged as interrupted. `settled` waits for the writes under way.
 */
export function createRecorder(writer: Pick<OutcomeWriter, 'record'>, log: AppContext['log']) {
  const recording = new Set<Promise<void>>();
  return {
    record(outcome: Outcome): void {
      const written = writer
        .record(outcome)
        .catch((error: unknown) => {
          const fields = { ...errorFields(error), deliveryId: outcome.deliveryId };
          // Expected during an outage: the claim runs out, and the delivery is retaken with this
          // attempt logged as interrupted.
          if (isDatabaseUnavailable(error))
            log.warn(fields, 'delivery outcome not recorded: database unavailable');
          else log.error(fields, 'delivery outcome not recorded');
        })
        .finally(() => recording.delete(written));
      recording.add(written);
    },
    settled: () => Promise.all(recording),
  };
}

export type Recorder = ReturnType<typeof createRecorder>;

export interface RecordDeps {
  ctx: Pick<AppContext, 'metrics' | 'now'>;
  retryScheduleSeconds: readonly number[];
  recorder: Pick<Recorder, 'record'>;
}

/** Records an attempt: counts it, and queues its outcome (the new state and the attempt's row). */
export function recordAttempt(
  deps: RecordDeps,
  row: ClaimedRow,
  startedAt: Date,
  result: AttemptResult,
  sent?: RequestRecord,
): void {
  const now = deps.ctx.now();
  const decision = decideOutcome(row.attempt_count, result, deps.retryScheduleSeconds, now);
  countAttempt(deps.ctx.metrics, row, result, decision.status, now);
  deps.recorder.record(outcomeOf(row, decision, attemptRow(row, startedAt, result, sent)));
}

/** A delivery whose connection cannot take it now: cancelled (or skipped while paused), no attempt made. */
export function recordCancelled(
  deps: Omit<RecordDeps, 'retryScheduleSeconds'>,
  row: ClaimedRow,
  status: 'cancelled' | 'skipped' = 'cancelled',
): void {
  deps.ctx.metrics.deliveries.inc({ outcome: status });
  deps.recorder.record(outcomeOf(row, { status }));
}
