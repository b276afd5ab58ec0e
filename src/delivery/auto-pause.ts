import type { Kysely } from 'kysely';
import { systemScopeOf } from '../access/scope.js';
import type { DeliveryControl } from '../connections/connections.js';
import { recordFailureStreaks, type StreakChange, type StreakRow } from '../connections/failure-streak.js';
import { pauseConnection, systemOrigin } from '../connections/state.js';
import type { UsageMeter } from '../context.js';
import type { DB, PausedReason } from '../db/schema.js';
import type { Outcome } from './outcomes.js';

// Automatic pause (docs/api/connections.md): a connection pauses itself, reason `failing`, after
// `pauseAfterFailures` deliveries in a row ended `failed`, the first of them at least
// `pauseAfterSeconds` before the last; and at once, reason `gone`, when its receiver answers 410.
// Each connection keeps its run (`failure_streak`, since `failure_streak_since`): a failed delivery
// adds one, a delivered one resets it. This module decides; connections/ writes the run.

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

export interface AutoPauseDeps {
  db: Kysely<DB>;
  /** Counts the deliveries a pause skips (docs/api/usage.md). */
  usage: UsageMeter;
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
  for (const row of await recordFailureStreaks(deps.db, changes)) {
    const reason = pauseReason(row, deps.settings, now);
    if (!reason) continue;
    await pauseConnection(deps, systemScopeOf(row.tenant_id), systemOrigin(now), row.id, reason, {
      ...deps.control,
      drainAfter: false,
    });
  }
}
