import { sql, type Kysely } from 'kysely';
import { systemScopeOf } from '../access/scope.js';
import type { DeliveryControl } from '../connections/connections.js';
import { pauseConnection, systemOrigin } from '../connections/state.js';
import type { DB, PausedReason } from '../db/schema.js';
import type { Outcome } from './outcomes.js';

// Automatic pause (docs/api/connections.md): a connection pauses itself, reason `failing`, after
// `pauseAfterFailures` deliveries in a row ended `failed`, the first of them at least
// `pauseAfterSeconds` before the last; and at once, reason `gone`, when its receiver answers 410.
// Each connection keeps its run (`failure_streak`, since `failure_streak_since`): a failed delivery
// adds one, a delivered one resets it.

/** What one batch of outcomes does to a connection's run of failures, in the batch's order. */
export interface StreakChange {
  connectionId: string;
  /** A delivery succeeded: the run starts again from the failures after it. */
  reset: boolean;
  failures: number;
  firstFailedAt: Date | null;
  /** A 410 Gone answer among the failures. */
  gone: boolean;
}

/**
 * The changes a batch makes, per connection: only those with a failure, or with a success where the
 * connection has a run to reset (`withRun`, read by the outcome write).
 */
export function streakChanges(
  outcomes: readonly Outcome[],
  withRun: ReadonlySet<string>,
  at: Date,
): StreakChange[] {
  const byConnection = new Map<string, StreakChange>();
  for (const outcome of outcomes) {
    const change = byConnection.get(outcome.connectionId) ?? {
      connectionId: outcome.connectionId,
      reset: false,
      failures: 0,
      firstFailedAt: null,
      gone: false,
    };
    if (outcome.status === 'delivered') {
      Object.assign(change, { reset: true, failures: 0, firstFailedAt: null, gone: false });
    } else if (outcome.status === 'failed' && outcome.attempt) {
      change.failures += 1;
      change.firstFailedAt ??= at;
      change.gone ||= outcome.attempt.response_status === 410;
    }
    byConnection.set(outcome.connectionId, change);
  }
  return [...byConnection.values()].filter((c) => c.failures > 0 || (c.reset && withRun.has(c.connectionId)));
}

/** A connection's run after a batch, as the update returns it. */
export interface StreakRow {
  id: string;
  tenant_id: string;
  status: string;
  failure_streak: number;
  failure_streak_since: Date | string | null;
  gone: boolean;
}

/** Whether the run pauses the connection now, and why; null when it does not. */
export function pauseReason(
  row: StreakRow,
  settings: { pauseAfterFailures: number; pauseAfterSeconds: number },
  now: Date,
): PausedReason | null {
  if (row.status !== 'active') return null;
  if (row.gone) return 'gone';
  const { pauseAfterFailures, pauseAfterSeconds } = settings;
  if (pauseAfterFailures === 0 || row.failure_streak < pauseAfterFailures || !row.failure_streak_since)
    return null;
  const lasted = now.getTime() - new Date(row.failure_streak_since).getTime();
  return lasted >= pauseAfterSeconds * 1000 ? 'failing' : null;
}

/** Applies the changes in one statement (connections only: no delivery row is locked here). */
export async function updateStreaks(db: Kysely<DB>, changes: readonly StreakChange[]): Promise<StreakRow[]> {
  if (changes.length === 0) return [];
  const of = <R>(pick: (c: StreakChange) => R) => changes.map(pick);
  const result = await sql<StreakRow>`
    update connections c set
      failure_streak = case when v.reset then v.failures else c.failure_streak + v.failures end,
      failure_streak_since = case when v.failures = 0 then null
        when v.reset or c.failure_streak = 0 then v.first_failed_at else c.failure_streak_since end
    from unnest(${of((c) => c.connectionId)}::text[], ${of((c) => c.reset)}::boolean[],
      ${of((c) => c.failures)}::int[], ${of((c) => c.firstFailedAt)}::timestamptz[], ${of((c) => c.gone)}::boolean[])
      as v(id, reset, failures, first_failed_at, gone)
    where c.id = v.id
    returning c.id, c.tenant_id, c.status, c.failure_streak, c.failure_streak_since, v.gone`.execute(db);
  return result.rows;
}

export interface AutoPauseDeps {
  db: Kysely<DB>;
  now: () => Date;
  settings: { pauseAfterFailures: number; pauseAfterSeconds: number };
  control: Pick<DeliveryControl, 'close' | 'drain'>;
}

/**
 * After a batch of outcomes is written: updates the runs of failures and pauses the connections
 * whose run (or a 410) calls for it, as the system, audited, without waiting for attempts in flight
 * (nobody waits for an answer; those attempts end as their outcome says). The `ConnectionPaused`
 * alert follows from the paused state (platform/alerting/conditions.ts).
 */
export async function applyStreaks(
  deps: AutoPauseDeps,
  outcomes: readonly Outcome[],
  withRun: readonly string[],
): Promise<void> {
  const now = deps.now();
  const changes = streakChanges(outcomes, new Set(withRun), now);
  for (const row of await updateStreaks(deps.db, changes)) {
    const reason = pauseReason(row, deps.settings, now);
    if (!reason) continue;
    await pauseConnection(deps.db, systemScopeOf(row.tenant_id), systemOrigin(now), row.id, reason, {
      ...deps.control,
      drainAfter: false,
    });
  }
}
