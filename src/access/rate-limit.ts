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
   * Counts a hit on `bucket`, whose limit per window is `limit` (buckets have limits of their own:
   * a key's, the tenant's). A promise only when the hit waits for a lease from the shared row (a
   * bucket's first hit in a window, and near its limit); otherwise the answer comes at once.
   */
  hit(bucket: string, now: Date, limit: number): Promise<RateLimitResult> | RateLimitResult;
  /**
   * What a bucket has left as this process knows it, less `reserved` hits the caller expects,
   * without counting a hit or asking the database: refusing a spent bucket costs nothing.
   */
  peek(bucket: string, now: Date, limit: number, reserved?: number): RateLimitResult;
  close(): Promise<void>;
}

interface BucketState {
  windowStart: number;
  /** The limit of the bucket's last hit; a change (a key's new limit) reopens a spent bucket. */
  limit: number;
  /** Hits this process has leased from the shared row in this window. */
  granted: number;
  /** Hits this process has admitted: never more than `granted`. */
  used: number;
  /** The shared row's count (every process's leases) as of this process's last lease. */
  shared: number;
  /** The shared row refused a lease of one: nothing is left in this window but this process's lease. */
  spent: boolean;
  /** The lease on its way, which every hit that finds no allowance waits for. */
  leasing: Promise<void> | undefined;
}

const WINDOW_MS = 60_000;
/** A lease is at most this share of the limit: what one process can hold unused (docs/decisions/0091-…). */
const SLICE_SHARE = 0.05;

const windowOf = (now: Date) => Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS;
const freshState = (windowStart: number, limit: number): BucketState => ({
  windowStart,
  limit,
  granted: 0,
  used: 0,
  shared: 0,
  spent: false,
  leasing: undefined,
});

/** What the bucket has left for this process: its own unused lease, and the shared row's rest. */
function remainingOf(state: BucketState): number {
  const unused = state.granted - state.used;
  return state.spent ? unused : Math.max(0, state.limit - state.shared) + unused;
}

/**
 * The size of the next lease: at most 5 % of the limit, a quarter of what the shared row had left
 * when last seen, and 1 near the end, so that what processes hold unused at the end is small.
 */
function sliceOf(state: BucketState): number {
  const most = Math.max(1, Math.ceil(state.limit * SLICE_SHARE));
  return Math.max(1, Math.min(most, Math.floor((state.limit - state.shared) / 4)));
}

function answerOf(state: BucketState, allowed: boolean, now: Date): RateLimitResult {
  return {
    allowed,
    limit: state.limit,
    remaining: remainingOf(state),
    resetSeconds: Math.max(1, Math.ceil((state.windowStart + WINDOW_MS - now.getTime()) / 1000)),
  };
}

/**
 * Reserves `n` hits of the window from the bucket's shared row, only if that keeps the row within
 * the limit: the row never counts more than the limit, so no process can admit beyond it. The
 * new count when granted, undefined when refused.
 */
async function reserve(
  db: Kysely<DB>,
  bucket: string,
  state: BucketState,
  n: number,
): Promise<number | undefined> {
  const result = await sql<{ hits: number }>`
    insert into rate_limit_windows (bucket, window_start, hits)
    values (${bucket}, ${new Date(state.windowStart)}, ${n})
    on conflict (bucket, window_start) do update set hits = rate_limit_windows.hits + excluded.hits
      where rate_limit_windows.hits + excluded.hits <= ${state.limit}
    returning hits`.execute(db);
  const hits = result.rows[0]?.hits;
  return hits === undefined ? undefined : Number(hits);
}

/**
 * Takes one lease for the bucket: a slice granted, or the bucket spent for the window. A refused
 * slice of more than one is tried again as one (the row had less left than the slice).
 */
async function lease(
  db: Kysely<DB>,
  bucket: string,
  state: BucketState,
  onError: (error: unknown) => void,
): Promise<void> {
  let n = sliceOf(state);
  for (;;) {
    let hits: number | undefined;
    try {
      hits = await reserve(db, bucket, state, n);
    } catch (error) {
      // Sharing the count is best effort: with the database gone, this process grants itself the
      // slice and counts on its own; the request goes on to answer for itself (503 where it needs
      // the database).
      // Counting alone still limits: once what it granted itself (with the row as last seen) reaches
      // the limit, the bucket is spent for the window here, and no further statement is sent.
      onError(error);
      const own = Math.min(n, state.limit - state.shared);
      if (own <= 0) {
        state.spent = true;
        return;
      }
      state.granted += own;
      state.shared += own;
      return;
    }
    if (hits !== undefined) {
      state.granted += n;
      state.shared = Math.max(state.shared, hits);
      return;
    }
    if (n === 1) {
      // Once the row refuses one, the window is spent: a flood of refused requests costs no write.
      state.spent = true;
      state.shared = state.limit;
      return;
    }
    state.shared = Math.max(state.shared, state.limit - n + 1);
    n = 1;
  }
}

/** Rows of finished windows are deleted about once a window, and this process's old buckets forgotten. */
function startSweeper(
  db: Kysely<DB>,
  buckets: Map<string, BucketState>,
  sweepMs: number,
  onError: (error: unknown) => void,
): NodeJS.Timeout {
  let ticks = 0;
  const timer = setInterval(() => {
    const cutoff = Date.now() - WINDOW_MS * 2;
    for (const [bucket, state] of buckets) if (state.windowStart < cutoff) buckets.delete(bucket);
    if (++ticks % Math.max(1, Math.round(WINDOW_MS / sweepMs)) === 0) {
      sql`delete from rate_limit_windows where window_start < ${new Date(cutoff)}`.execute(db).catch(onError);
    }
  }, sweepMs);
  timer.unref();
  return timer;
}

/** The bucket's state in this window (a new window starts from nothing), at the hit's limit. */
function stateOf(buckets: Map<string, BucketState>, bucket: string, now: Date, limit: number): BucketState {
  const windowStart = windowOf(now);
  let state = buckets.get(bucket);
  if (!state || state.windowStart !== windowStart) {
    state = freshState(windowStart, limit);
    buckets.set(bucket, state);
  } else if (state.limit !== limit) {
    // A changed limit (a key's, a tenant's) applies from its next lease; a higher one reopens.
    if (limit > state.limit) state.spent = false;
    state.limit = limit;
  }
  return state;
}

/**
 * A fixed one-minute window per bucket (a credential, a tenant, a client address), shared by every
 * process through one row per bucket and window (docs/api/rate-limits.md,
 * docs/decisions/0091-rate-limits-leased-across-processes.md). A process leases slices of the
 * window's allowance from the row with a conditional upsert that never takes the row past the
 * limit, and admits locally within its slices: the hot path is a map lookup, one statement per
 * slice (at most 5 % of the limit, 1 near the end), and once the row refuses a slice of one the
 * bucket is spent for the window in this process, with no further writes. Processes together
 * never admit more than the limit; they admit less only by what they hold unused when traffic stops.
 */
export function createRateLimiter(
  db: Kysely<DB>,
  options: { syncMs?: number; onError?: (error: unknown) => void } = {},
): RateLimiter {
  const buckets = new Map<string, BucketState>();
  const onError = options.onError ?? (() => {});
  const timer = startSweeper(db, buckets, options.syncMs ?? 1_000, onError);

  const startLease = (bucket: string, state: BucketState): Promise<void> =>
    (state.leasing ??= lease(db, bucket, state, onError).finally(() => {
      state.leasing = undefined;
    }));

  /** Admits from the lease at hand, or refuses a spent bucket; a promise while a lease is needed. */
  const take = (
    bucket: string,
    state: BucketState,
    now: Date,
  ): Promise<RateLimitResult> | RateLimitResult => {
    if (state.used < state.granted) {
      state.used += 1;
      // Before the lease runs out, the next one is asked for without holding up this request, so a
      // steady stream of hits never waits; not near the end, where slices are of one.
      const slice = sliceOf(state);
      if (!state.spent && slice > 1 && state.granted - state.used <= slice / 2) {
        startLease(bucket, state).catch(onError);
      }
      return answerOf(state, true, now);
    }
    if (state.spent) return answerOf(state, false, now);
    return startLease(bucket, state).then(() => take(bucket, state, now));
  };

  return {
    hit(bucket, now, limit) {
      return take(bucket, stateOf(buckets, bucket, now, limit), now);
    },
    peek(bucket, now, limit, reserved = 0) {
      const known = buckets.get(bucket);
      const state =
        known?.windowStart === windowOf(now) ? { ...known, limit } : freshState(windowOf(now), limit);
      const answer = answerOf(state, true, now);
      const remaining = Math.max(0, answer.remaining - reserved);
      return { ...answer, allowed: remaining > 0, remaining };
    },
    async close() {
      clearInterval(timer);
      await Promise.allSettled([...buckets.values()].map((state) => state.leasing));
    },
  };
}
