import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { updateStreakRows, type StreakChange, type StreakRow } from './store.js';

// A connection's run of failed deliveries (`failure_streak`, since `failure_streak_since`): the
// delivery worker's automatic pause (delivery/auto-pause.ts) decides what a batch of outcomes does
// to it and when it pauses; the columns are the connection's, so the write is here (decision 0071).

export type { StreakChange, StreakRow };

/**
 * Adds a batch's failures to each connection's run, or starts it again at a delivered one, in one
 * statement; answers each run as it now stands, with the connection's tenant and status.
 */
export function recordFailureStreaks(db: Kysely<DB>, changes: readonly StreakChange[]): Promise<StreakRow[]> {
  return updateStreakRows(db, changes);
}
