import type { Kysely } from 'kysely';
import type { UsageKind, UsageMeter } from '../context.js';
import type { DB } from '../db/schema.js';
import { addUsage, USAGE_KINDS, zeroCounts, type HourCounts } from './store.js';

// The usage meter (docs/decisions/0089-usage-counted-in-memory-flushed.md): what happened is counted
// in this process's memory per tenant, hour and kind, and added to usage_hourly once a second by one
// statement. A publish pays a map update, never a write of its own.

export const DEFAULT_USAGE_FLUSH_MS = 1_000;

const HOUR_MS = 3_600_000;

export interface UsageMeterService extends UsageMeter {
  /** Writes what was counted so far (the next flush's work, now); resolves once written or failed. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left (graceful shutdown). */
  close(): Promise<void>;
}

/** The pending counts of a tenant's hour, made at its first count. */
function entryOf(pending: Map<string, HourCounts>, tenantId: string, hour: Date): HourCounts {
  const key = `${tenantId}\u0000${hour.getTime()}`;
  let entry = pending.get(key);
  if (!entry) {
    entry = { tenantId, hour, counts: zeroCounts() };
    pending.set(key, entry);
  }
  return entry;
}

/**
 * Counts in memory, flushed every `flushMs`. A flush that fails keeps its counts for the next one
 * (added to what was counted meanwhile); one flush runs at a time. What a crash loses is what was
 * counted since the last flush: at most `flushMs` of this process's usage.
 */
export function createUsageMeter(
  db: Kysely<DB>,
  options: { flushMs?: number; onError: (error: unknown) => void },
): UsageMeterService {
  let pending = new Map<string, HourCounts>();
  let flushing: Promise<void> | undefined;

  const count = (tenantId: string, kind: UsageKind, n: number, at: Date) => {
    // Negative only to take back a count the rows no longer hold (a skipped delivery that arrived).
    if (n === 0) return;
    const hour = new Date(Math.floor(at.getTime() / HOUR_MS) * HOUR_MS);
    entryOf(pending, tenantId, hour).counts[kind] += n;
  };

  const flush = (): Promise<void> => {
    if (flushing) return flushing;
    if (pending.size === 0) return Promise.resolve();
    const batch = pending;
    pending = new Map();
    flushing = addUsage(db, [...batch.values()])
      .catch((error: unknown) => {
        // Kept for the next flush: nothing counted is dropped by a database that is away a while.
        for (const row of batch.values()) {
          const entry = entryOf(pending, row.tenantId, row.hour);
          for (const kind of USAGE_KINDS) entry.counts[kind] += row.counts[kind];
        }
        options.onError(error);
      })
      .finally(() => {
        flushing = undefined;
      });
    return flushing;
  };

  const timer = setInterval(() => void flush(), options.flushMs ?? DEFAULT_USAGE_FLUSH_MS);
  timer.unref();
  let closing: Promise<void> | undefined;
  return {
    count,
    flush,
    close: () =>
      (closing ??= (async () => {
        clearInterval(timer);
        await flushing;
        await flush();
      })()),
  };
}
