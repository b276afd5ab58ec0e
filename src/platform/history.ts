import type { AppContext } from '../context.js';
import { errorFields } from '../logger.js';
import { runEvery } from '../periodic.js';
import {
  aggregateMinutes,
  deleteMinutesBefore,
  dueDeliveries,
  recordQueueDepth,
  rolledUpTo,
  storedMinutes,
  storeRollup,
  type MinuteFigures,
} from './history-store.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** The most minutes one answer holds (docs/operators/monitoring.md): a day. */
export const MAX_HISTORY_MINUTES = 1440;
// A minute is rolled up once it has been over this long: a delivery stamped by another process's
// clock a little behind still lands in the minute it belongs to.
const SETTLE_MS = 10_000;
/** How often each worker process samples the queue and rolls up finished minutes. */
export const SAMPLE_INTERVAL_MS = 15_000;

export const minuteOf = (at: Date): Date => new Date(Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS);

export interface HistoryPoint {
  at: string;
  delivered: number;
  failed: number;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  queueDepth: number | null;
}

/**
 * One sample: the queue depth in this minute, then every finished minute not yet rolled up (at most
 * a day of them) written to its row. Idempotent: processes that run it at once write the same rows.
 */
export async function sampleHistory(ctx: Pick<AppContext, 'db' | 'config'>, now: Date): Promise<void> {
  await recordQueueDepth(ctx.db, minuteOf(now), await dueDeliveries(ctx.db, now));
  const to = minuteOf(new Date(now.getTime() - SETTLE_MS));
  const since = await rolledUpTo(ctx.db);
  const from = new Date(Math.max(since?.getTime() ?? 0, to.getTime() - MAX_HISTORY_MINUTES * MINUTE_MS));
  if (from < to) await storeRollup(ctx.db, await aggregateMinutes(ctx.db, from, to), to);
  await deleteMinutesBefore(ctx.db, new Date(now.getTime() - ctx.config.delivery.retentionDays * DAY_MS));
}

/** Samples every 15 s beside the delivery workers of a process (serve and worker). */
export function startHistorySampler(
  ctx: Pick<AppContext, 'db' | 'config' | 'log' | 'now'>,
  intervalMs = SAMPLE_INTERVAL_MS,
): { stop(): Promise<void> } {
  return runEvery(intervalMs, () =>
    sampleHistory(ctx, ctx.now()).catch((error: unknown) =>
      ctx.log.warn(errorFields(error), 'monitoring history sample failed'),
    ),
  );
}

/**
 * The last `minutes` minutes, oldest first, the last one the current (partial) minute (docs/operators/monitoring.md).
 * Rolled-up minutes come from their rows; the minutes since (normally the last one or two) are
 * aggregated from the deliveries at the call, so a delivery shows at once. Minutes without
 * deliveries have zero counts and null latencies; a minute nobody sampled has a null queue depth.
 */
export async function readHistory(
  ctx: Pick<AppContext, 'db'>,
  now: Date,
  minutes: number,
): Promise<HistoryPoint[]> {
  const current = minuteOf(now);
  const start = new Date(current.getTime() - (minutes - 1) * MINUTE_MS);
  const [stored, watermark] = await Promise.all([storedMinutes(ctx.db, start, current), rolledUpTo(ctx.db)]);
  const liveFrom = new Date(Math.max(start.getTime(), watermark?.getTime() ?? start.getTime()));
  const live = await aggregateMinutes(ctx.db, liveFrom, new Date(current.getTime() + MINUTE_MS));

  const byMinute = new Map(stored.map((row) => [row.minute.getTime(), row]));
  const liveByMinute = new Map<number, MinuteFigures>(live.map((row) => [row.minute.getTime(), row]));
  const points: HistoryPoint[] = [];
  for (let i = 0; i < minutes; i++) {
    const at = start.getTime() + i * MINUTE_MS;
    const row = byMinute.get(at);
    const figures = at >= liveFrom.getTime() ? liveByMinute.get(at) : row;
    points.push({
      at: new Date(at).toISOString(),
      delivered: figures?.delivered ?? 0,
      failed: figures?.failed ?? 0,
      latencyMs: figures?.latencyMs ?? { p50: null, p95: null, p99: null },
      queueDepth: row?.queueDepth ?? null,
    });
  }
  return points;
}
