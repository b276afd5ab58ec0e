import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts a hit. A promise only when the count waits for the shared one (a bucket's first hit in
   * a window, then at most once per sync interval); otherwise the answer comes at once.
   */
  hit(bucket: string, now: Date): Promise<RateLimitResult> | RateLimitResult;
  /**
   * What a bucket has left as this process knows it, less `reserved` hits the caller expects,
   * without counting a hit or asking the database: refusing a spent bucket costs nothing.
   */
  peek(bucket: string, now: Date, reserved?: number): RateLimitResult;
  close(): Promise<void>;
}

interface BucketState {
  windowStart: number;
  /** The shared count as of the last exchange with the database (every process's hits). */
  shared: number;
  /** Hits of this process not yet added to the shared count. */
  pending: number;
  /** Hits on their way to the shared row: counted until the answer includes them. */
  sending: number;
  syncedAt: number;
}

const WINDOW_MS = 60_000;

const windowOf = (now: Date) => Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS;
const counted = (state: BucketState) => state.shared + state.sending + state.pending;

function answerOf(
  limit: number,
  allowed: boolean,
  total: number,
  windowStart: number,
  now: Date,
): RateLimitResult {
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - total),
    resetSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_MS - now.getTime()) / 1000)),
  };
}

/** Adds this process's unshared hits to the bucket's shared row and reads back every process's total. */
async function exchangeCount(db: Kysely<DB>, bucket: string, state: BucketState): Promise<void> {
  const add = state.pending;
  state.pending = 0;
  state.sending += add;
  state.syncedAt = Date.now();
  try {
    const result = await sql<{ hits: number }>`
      insert into rate_limit_windows (bucket, window_start, hits)
      values (${bucket}, ${new Date(state.windowStart)}, ${add})
      on conflict (bucket, window_start) do update set hits = rate_limit_windows.hits + excluded.hits
      returning hits`.execute(db);
    state.shared = Math.max(state.shared, Number(result.rows[0]?.hits ?? 0));
  } catch (error) {
    // Not shared this time: count them again with the next exchange.
    state.pending += add;
    throw error;
  } finally {
    state.sending -= add;
  }
}

/**
 * Pending hits reach the shared row even when this process sees no more traffic for a bucket;
 * about once a window, rows of finished windows are deleted.
 */
function startSweeper(
  db: Kysely<DB>,
  buckets: Map<string, BucketState>,
  syncMs: number,
  onError: (error: unknown) => void,
): NodeJS.Timeout {
  let ticks = 0;
  const timer = setInterval(() => {
    const cutoff = Date.now() - WINDOW_MS * 2;
    for (const [bucket, state] of buckets) {
      if (state.windowStart < cutoff) buckets.delete(bucket);
      else if (state.pending > 0) exchangeCount(db, bucket, state).catch(onError);
    }
    if (++ticks % Math.max(1, Math.round(WINDOW_MS / syncMs)) === 0) {
      sql`delete from rate_limit_windows where window_start < ${new Date(cutoff)}`.execute(db).catch(onError);
    }
  }, syncMs);
  timer.unref();
  return timer;
}

/**
 * A fixed one-minute window per credential, shared by every process through PostgreSQL (docs/api/rate-limits.md:
 * RATE_LIMIT_PER_MINUTE, per credential). A process counts locally and exchanges its count with
 * the shared row at most once per `syncMs` per bucket, so the hot path costs a map lookup, not a
 * write; a bucket's first hit in a window always asks the database, and so does every hit that
 * brings this process's unshared count to a quarter of what was left. Several processes can
 * overshoot the limit by what they admit between two exchanges, and no more.
 */
export function createRateLimiter(
  db: Kysely<DB>,
  limit: number,
  options: { syncMs?: number; onError?: (error: unknown) => void } = {},
): RateLimiter {
  const syncMs = options.syncMs ?? 1_000;
  const buckets = new Map<string, BucketState>();

  const exchange = (bucket: string, state: BucketState) => exchangeCount(db, bucket, state);

  const onError = options.onError ?? (() => {});
  const timer = startSweeper(db, buckets, syncMs, onError);

  const answer = (allowed: boolean, total: number, windowStart: number, now: Date) =>
    answerOf(limit, allowed, total, windowStart, now);

  return {
    hit(bucket, now) {
      const windowStart = windowOf(now);
      let known = buckets.get(bucket);
      if (!known || known.windowStart !== windowStart) {
        known = { windowStart, shared: 0, pending: 0, sending: 0, syncedAt: 0 };
        buckets.set(bucket, known);
      }
      const state = known;
      state.pending += 1;
      const count = counted(state);
      const settled = () => {
        const total = Math.max(count, counted(state));
        return answer(total <= limit, total, windowStart, now);
      };
      // Once over, a bucket stays over for its window: the shared row has nothing to add, and a
      // flood of refused requests must not cost a write each.
      // Sharing the count is best effort: with the database gone, this process still counts on its
      // own, and the request goes on to answer for itself (503 where it needs the database).
      if (count <= limit && Date.now() - state.syncedAt >= syncMs) {
        return exchange(bucket, state).catch(onError).then(settled);
      } else if (count <= limit && state.sending === 0 && state.pending >= (limit - state.shared) / 4) {
        // Near the limit, a process shares its count sooner: once it has admitted a quarter of what
        // was left at its last exchange, without holding up this request. Several processes
        // hammering one credential then see one another's hits before each could admit the limit;
        // far from the limit this costs nothing.
        exchange(bucket, state).catch(onError);
      }
      return settled();
    },
    peek(bucket, now, reserved = 0) {
      const windowStart = windowOf(now);
      const state = buckets.get(bucket);
      const total = (state?.windowStart === windowStart ? counted(state) : 0) + reserved;
      return answer(total < limit, total, windowStart, now);
    },
    async close() {
      clearInterval(timer);
      await Promise.all(
        [...buckets].filter(([, s]) => s.pending > 0).map(([bucket, state]) => exchange(bucket, state)),
      );
    },
  };
}
