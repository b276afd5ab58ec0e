import type { ConnectorCatalog } from '../connections/catalog.js';
import type { AppContext } from '../context.js';
import { budgetOf, type Budget } from '../deadline.js';
import { untracedTraceparent } from '../telemetry/start.js';
import type { AttemptSpan } from '../telemetry/types.js';
import { attemptDeadline, leaseDuration, leaseEnd, type ClaimedRow } from './claim.js';
import { interruptedResult, type AttemptResult, type Destination } from './destination.js';
import { prepare, triage, type PreparedRequest } from './prepare.js';
import { recordAttempt, recordCancelled, type Recorder } from './record.js';
import { deferredOutcome, throttleOf, type Throttle } from './throttle.js';

// A delivery attempt, phase by phase (docs/decisions/0072-publish-and-attempt-phases.md):
//
//   claim    the delivery is this worker's until its lease ends: claimed with others by the claim
//            loop (claim.ts, `claimerFor`), or inserted claimed by its publish (direct dispatch,
//            dispatch.ts) and given its lease (claim.ts, `withDispatchLease`)
//   prepare  what to do with it (prepare.ts, `triage`), the `maxPerSecond` gate (throttle.ts), then
//            the request: decrypt, render, sign (prepare.ts, `prepare`)
//   send     the destination sends it within the attempt's budget (destination.ts): the one phase a
//            kind of destination implements: HTTP or a broker (destinations.ts)
//   record   its outcome counted and queued for the next batch of outcome writes (record.ts), which
//            retries, the automatic pause and ordering follow from (outcomes.ts, worker.ts)

/** What one attempt's phases after the claim need (prepare, send, record). */
export interface AttemptDeps {
  ctx: Pick<AppContext, 'keyring' | 'metrics' | 'now' | 'tracing'>;
  catalog: Pick<ConnectorCatalog, 'get'>;
  destination: Pick<Destination, 'send'>;
  recorder: Pick<Recorder, 'record'>;
  retryScheduleSeconds: readonly number[];
  /** DELIVERY_TIMEOUT_MS: the time one attempt may take, all its calls together. */
  timeoutMs: number;
  /** The `maxPerSecond` gate (none: nothing is throttled). */
  throttle?: Pick<Throttle, 'admit'>;
}

/** A claimed delivery prepared to send, with its attempt's span (tracing on). */
interface Ready {
  prepared: PreparedRequest;
  span: AttemptSpan | undefined;
}

/**
 * One claimed delivery: prepare, send, record. A delivery retaken from an expired claim sends
 * nothing now: its lost attempt is recorded as `interrupted` and counts like any failed one, so
 * attempt numbers match what the receiver may have seen, the retry schedule goes on from there, and
 * a delivery that keeps killing its worker ends `failed` instead of looping. Throws only on a bug (a
 * payload that does not open): the claim then runs out.
 */
export async function attemptDelivery(deps: AttemptDeps, row: ClaimedRow): Promise<void> {
  const ready = await prepareAttempt(deps, row);
  if (!ready) return;
  const result = await sendAttempt(deps, row, ready);
  recordAttempt(deps, row, ready.prepared.startedAt, result, ready.prepared.record);
}

/**
 * Prepare: the delivery's request, or nothing to send (its outcome recorded already): a lost
 * attempt (interrupted), a connection that cannot take it now (cancelled, skipped), or the
 * connection's `maxPerSecond` spent (deferred, no attempt counted).
 */
async function prepareAttempt(deps: AttemptDeps, row: ClaimedRow): Promise<Ready | undefined> {
  const plan = triage(row, deps.catalog);
  if (plan.kind === 'interrupted') {
    recordAttempt(deps, row, plan.claimedAt, interruptedResult(plan.claimedAt, plan.claimEnded));
    return undefined;
  }
  if (plan.kind === 'cancelled' || plan.kind === 'skipped') {
    recordCancelled(deps, row, plan.kind);
    return undefined;
  }
  const max = throttleOf(row.config);
  if (max !== null && deps.throttle) {
    const until = await deps.throttle.admit(row, max);
    if (until) {
      deps.recorder.record(deferredOutcome(row, until));
      return undefined;
    }
  }
  // A span of its own per attempt, linked to the publish (tracing on); a traceparent either way.
  const span = deps.ctx.tracing?.startAttempt(row);
  try {
    const prepared = prepare(
      row,
      plan,
      deps.ctx.keyring,
      deps.ctx.now(),
      span?.traceparent ?? untracedTraceparent(),
    );
    return { prepared, span };
  } catch (error) {
    span?.failed(error);
    throw error;
  }
}

/** Send: the destination, within the attempt's budget. */
async function sendAttempt(deps: AttemptDeps, row: ClaimedRow, ready: Ready): Promise<AttemptResult> {
  const { prepared, span } = ready;
  const budget = attemptBudget(deps, row, prepared.startedAt);
  const result = await deps.destination.send(prepared, budget);
  span?.sent(prepared.request.method, prepared.request.url, result);
  return result;
}

/**
 * The attempt's budget: until its deadline (claim.ts, `attemptDeadline`), DELIVERY_TIMEOUT_MS from
 * the start of sending and before the claim runs out, reckoned on the service's clock as the claim
 * is. A row without its lease (made by hand) is taken as claimed now.
 */
function attemptBudget(deps: AttemptDeps, row: ClaimedRow, startedAt: Date): Budget {
  const leaseUntil = row.lease_until
    ? new Date(row.lease_until)
    : leaseEnd(startedAt, leaseDuration(deps.timeoutMs));
  const deadline = attemptDeadline(startedAt, leaseUntil, deps.timeoutMs);
  return budgetOf(deadline.getTime() - deps.ctx.now().getTime());
}
