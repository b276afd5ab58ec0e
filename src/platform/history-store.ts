import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

/**
 * Monitoring history (docs/operators/monitoring.md) in the database: a row per minute, rolled up from the deliveries
 * that ended in it, and the queue depth sampled in it. Not tenant-scoped: platform operators see the
 * whole installation.
 */

export interface MinuteFigures {
  /** The start of the UTC minute. */
  minute: Date;
  delivered: number;
  failed: number;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
}

export interface StoredMinute extends MinuteFigures {
  queueDepth: number | null;
}

const num = (value: string | number | null | undefined): number | null =>
  value === null || value === undefined ? null : Number(value);
const round3 = (value: number | null): number | null =>
  value === null ? null : Math.round(value * 1000) / 1000;

/**
 * Deliveries that ended in [from, to), grouped by minute, with publish-to-delivered latency
 * percentiles, as GET /api/v1/platform/monitoring computes its window. The minute is taken from the
 * epoch (not `date_trunc`, which follows the session's time zone).
 */
export async function aggregateMinutes(db: Kysely<DB>, from: Date, to: Date): Promise<MinuteFigures[]> {
  const { rows } = await sql<{
    minute: Date | string;
    delivered: string | number;
    failed: string | number;
    p50: string | number | null;
    p95: string | number | null;
    p99: string | number | null;
  }>`
    with ended as (
      select to_timestamp(floor(extract(epoch from d.delivered_at) / 60) * 60) as minute,
        true as ok,
        extract(epoch from (d.delivered_at - d.created_at))::float8 * 1000 as latency_ms
      from deliveries d
      where d.status = 'delivered' and d.delivered_at >= ${from} and d.delivered_at < ${to}
      union all
      select to_timestamp(floor(extract(epoch from d.updated_at) / 60) * 60), false, null
      from deliveries d
      where d.status = 'failed' and d.updated_at >= ${from} and d.updated_at < ${to})
    select minute,
      count(*) filter (where ok) as delivered,
      count(*) filter (where not ok) as failed,
      percentile_cont(0.5) within group (order by latency_ms) as p50,
      percentile_cont(0.95) within group (order by latency_ms) as p95,
      percentile_cont(0.99) within group (order by latency_ms) as p99
    from ended
    group by minute
    order by minute`.execute(db);
  return rows.map((row) => ({
    minute: new Date(row.minute),
    delivered: Number(row.delivered),
    failed: Number(row.failed),
    latencyMs: { p50: round3(num(row.p50)), p95: round3(num(row.p95)), p99: round3(num(row.p99)) },
  }));
}

/** Where the rollup has got to: minutes before it are in monitoring_minutes. Null: never run. */
export async function rolledUpTo(db: Kysely<DB>): Promise<Date | null> {
  const row = await db
    .selectFrom('monitoring_rollup')
    .select('rolled_up_to')
    .where('id', '=', 1)
    .executeTakeFirst();
  return row ? new Date(row.rolled_up_to) : null;
}

/**
 * Writes the figures of the minutes in [from, to) and moves the watermark to `to`, in one
 * transaction; several processes may do it at once, and write the same figures.
 */
export async function storeRollup(db: Kysely<DB>, figures: MinuteFigures[], to: Date): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const f of figures) {
      const values = {
        delivered: f.delivered,
        failed: f.failed,
        latency_p50_ms: f.latencyMs.p50,
        latency_p95_ms: f.latencyMs.p95,
        latency_p99_ms: f.latencyMs.p99,
      };
      await trx
        .insertInto('monitoring_minutes')
        .values({ minute: f.minute, queue_depth: null, ...values })
        .onConflict((oc) => oc.column('minute').doUpdateSet(values))
        .execute();
    }
    await trx
      .insertInto('monitoring_rollup')
      .values({ id: 1, rolled_up_to: to })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({
          rolled_up_to: sql`greatest(monitoring_rollup.rolled_up_to, excluded.rolled_up_to)`,
        }),
      )
      .execute();
  });
}

/** Records a queue depth sample in its minute; the minute keeps the largest sample (a spike counts). */
export async function recordQueueDepth(db: Kysely<DB>, minute: Date, depth: number): Promise<void> {
  await db
    .insertInto('monitoring_minutes')
    .values({
      minute,
      queue_depth: depth,
      delivered: null,
      failed: null,
      latency_p50_ms: null,
      latency_p95_ms: null,
      latency_p99_ms: null,
    })
    .onConflict((oc) =>
      oc.column('minute').doUpdateSet({
        queue_depth: sql`greatest(coalesce(monitoring_minutes.queue_depth, 0), excluded.queue_depth)`,
      }),
    )
    .execute();
}

/** The stored minutes in [from, to]. */
export async function storedMinutes(db: Kysely<DB>, from: Date, to: Date): Promise<StoredMinute[]> {
  const rows = await db
    .selectFrom('monitoring_minutes')
    .selectAll()
    .where('minute', '>=', from)
    .where('minute', '<=', to)
    .execute();
  return rows.map((row) => ({
    minute: new Date(row.minute),
    delivered: row.delivered ?? 0,
    failed: row.failed ?? 0,
    latencyMs: {
      p50: num(row.latency_p50_ms),
      p95: num(row.latency_p95_ms),
      p99: num(row.latency_p99_ms),
    },
    queueDepth: num(row.queue_depth),
  }));
}

/** The due deliveries now (pending or retrying, due): the queue depth of docs/operators/monitoring.md. */
export async function dueDeliveries(db: Kysely<DB>, now: Date): Promise<number> {
  const { rows } = await sql<{ due: string | number }>`
    select count(*) as due from deliveries
    where status in ('pending', 'retrying') and next_attempt_at <= ${now}`.execute(db);
  return Number(rows[0]?.due ?? 0);
}

/** Minutes older than the deliveries kept are of no use: they go with them. */
export async function deleteMinutesBefore(db: Kysely<DB>, cutoff: Date): Promise<void> {
  await db.deleteFrom('monitoring_minutes').where('minute', '<', cutoff).execute();
}
