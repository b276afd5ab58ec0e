import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import type { ClaimedRow } from './claim.js';
import type { Outcome } from './outcomes.js';

// The throttle (docs/api/connections.md): a connection's `maxPerSecond` bounds the attempts that start in each
// whole second, across every process, by a counter per connection and second in the database. An
// attempt over the limit is not made: its delivery goes back to wait for a later second (no attempt
// recorded, none counted), and the log's nextAttemptAt says when. Any window of N whole seconds then
// holds at most maxPerSecond × (N + 1) starts.

/** The connection's limit, or null when it has none. */
export function throttleOf(config: Record<string, unknown>): number | null {
  const max = config.maxPerSecond;
  return typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null;
}

/**
 * Takes one start in the current second for the connection; false when `max` were taken already.
 * One statement: the counter is created or raised only while under the limit.
 */
export async function takePermit(
  db: Kysely<DB>,
  connectionId: string,
  max: number,
  now: Date,
): Promise<boolean> {
  const second = Math.floor(now.getTime() / 1000);
  const result = await sql<{ used: number }>`
    insert into connection_send_permits (connection_id, second, used) values (${connectionId}, ${second}, 1)
    on conflict (connection_id, second) do update set used = connection_send_permits.used + 1
      where connection_send_permits.used < ${max}
    returning used`.execute(db);
  return result.rows.length > 0;
}

/**
 * When a delivery over the limit tries again: some moment of a later second, spread over that second
 * so the waiting ones do not all come back at its first instant. `waiting` deliveries of the same
 * connection already deferred in this process push it further, one second per `max` of them.
 */
export function deferredUntil(
  now: Date,
  max: number,
  waiting: number,
  random: () => number = Math.random,
): Date {
  const nextSecond = (Math.floor(now.getTime() / 1000) + 1 + Math.floor(waiting / max)) * 1000;
  return new Date(nextSecond + Math.floor(random() * 1000));
}

/** The outcome of an attempt not made: back to waiting, state and attempts as they were. */
export function deferredOutcome(row: ClaimedRow, until: Date): Outcome {
  return {
    deliveryId: row.id,
    connectionId: row.connection_id,
    createdAt: row.created_at,
    status: row.attempt_count > 0 ? 'retrying' : 'pending',
    attemptCount: row.attempt_count,
    nextAttemptAt: until,
    deliveredAt: null,
  };
}

/** Deletes counters of seconds long past (the retention run). */
export async function purgePermits(db: Kysely<DB>, now: Date): Promise<void> {
  const before = Math.floor(now.getTime() / 1000) - 60;
  await db.deleteFrom('connection_send_permits').where('second', '<', before).execute();
}

/**
 * A worker's gate on throttled connections: `admit` answers null when the attempt may start now, or
 * when to try again. Counts the deliveries it deferred per connection in the current second, so that
 * a burst waits in turns of `max` instead of all coming back in the next second. A counter that
 * cannot be read defers too (the database is what the outcome needs as well).
 */
export function createThrottle(db: Kysely<DB>, now: () => Date) {
  let second = 0;
  const deferred = new Map<string, number>();
  return {
    async admit(row: ClaimedRow, max: number): Promise<Date | null> {
      const at = now();
      const taken = await takePermit(db, row.connection_id, max, at).catch(() => false);
      if (taken) return null;
      const current = Math.floor(at.getTime() / 1000);
      if (current !== second) {
        second = current;
        deferred.clear();
      }
      const waiting = deferred.get(row.connection_id) ?? 0;
      deferred.set(row.connection_id, waiting + 1);
      return deferredUntil(at, max, waiting);
    },
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
