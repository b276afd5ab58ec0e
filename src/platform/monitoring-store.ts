import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

/**
 * The platform-wide figures that monitoring (GET /api/v1/platform/monitoring) and the scrape-time
 * gauges of GET /metrics read from the database. Not tenant-scoped on purpose: platform operators
 * see the whole installation. Every figure is a count or an aggregate, never a row.
 */

/** Deliveries waiting or being sent, and how long the oldest due one has waited. */
export interface QueueFigures {
  pending: number;
  retrying: number;
  /** Claimed by a worker (status `delivering`). */
  inFlight: number;
  /**
   * Seconds since the oldest due pending or retrying delivery became due (its `next_attempt_at`);
   * 0 when none is due, as Sidekiq's queue latency: an empty queue has no backlog age.
   */
  oldestPendingAgeSeconds: number;
}

/** Deliveries that ended in the window, and publish-to-delivered latency percentiles (ms). */
export interface DeliveryWindowFigures {
  delivered: number;
  failed: number;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
}

export interface InstallationFigures {
  tenants: number;
  connections: { active: number; disabled: number };
}

/** Counts come back as bigint strings from pg and as numbers from PGlite. */
const count = (value: string | number | null | undefined): number => Number(value ?? 0);
const numberOrNull = (value: string | number | null | undefined): number | null =>
  value === null || value === undefined ? null : Number(value);
export const roundTo3 = (value: number): number => Math.round(value * 1000) / 1000;

/**
 * The queue in one statement. The WHERE clause matches the partial index `deliveries_due_idx`, so the
 * read is as large as the queue, not the table. "Due" is the workers' claim condition (delivery/claim.ts).
 */
export async function readQueue(db: Kysely<DB>, now: Date): Promise<QueueFigures> {
  const { rows } = await sql<{
    pending: string | number;
    retrying: string | number;
    delivering: string | number;
    oldest_due: Date | string | null;
  }>`
    select count(*) filter (where status = 'pending') as pending,
      count(*) filter (where status = 'retrying') as retrying,
      count(*) filter (where status = 'delivering') as delivering,
      min(next_attempt_at) filter (where status in ('pending', 'retrying') and next_attempt_at <= ${now})
        as oldest_due
    from deliveries
    where status in ('pending', 'retrying', 'delivering')`.execute(db);
  const row = rows[0];
  const oldestDue = row?.oldest_due ? new Date(row.oldest_due).getTime() : null;
  return {
    pending: count(row?.pending),
    retrying: count(row?.retrying),
    inFlight: count(row?.delivering),
    oldestPendingAgeSeconds:
      oldestDue === null ? 0 : roundTo3(Math.max(0, (now.getTime() - oldestDue) / 1000)),
  };
}

/**
 * Deliveries that succeeded (`delivered_at`) or reached `failed` (`updated_at`, the moment of the last
 * write, which for a failed delivery is when it failed) after `since`. Latency is publish to success,
 * `delivered_at - created_at` (a delivery is created with its event), with percentile_cont (interpolated, as PostgreSQL computes it).
 */
export async function readDeliveryWindow(db: Kysely<DB>, since: Date): Promise<DeliveryWindowFigures> {
  const { rows } = await sql<{
    delivered: string | number;
    failed: string | number;
    p50: string | number | null;
    p95: string | number | null;
    p99: string | number | null;
  }>`
    with ended as (
      select d.status,
        case when d.status = 'delivered'
          then extract(epoch from (d.delivered_at - d.created_at))::float8 * 1000 end as latency_ms
      from deliveries d
      where (d.status = 'delivered' and d.delivered_at > ${since})
         or (d.status = 'failed' and d.updated_at > ${since}))
    select count(*) filter (where status = 'delivered') as delivered,
      count(*) filter (where status = 'failed') as failed,
      percentile_cont(0.5) within group (order by latency_ms) as p50,
      percentile_cont(0.95) within group (order by latency_ms) as p95,
      percentile_cont(0.99) within group (order by latency_ms) as p99
    from ended`.execute(db);
  const row = rows[0];
  const ms = (value: string | number | null | undefined) => {
    const n = numberOrNull(value);
    return n === null ? null : roundTo3(n);
  };
  return {
    delivered: count(row?.delivered),
    failed: count(row?.failed),
    latencyMs: { p50: ms(row?.p50), p95: ms(row?.p95), p99: ms(row?.p99) },
  };
}

/** Tenants, and connections by status, across the installation. */
export async function readInstallation(db: Kysely<DB>): Promise<InstallationFigures> {
  const { rows } = await sql<{
    tenants: string | number;
    active: string | number;
    disabled: string | number;
  }>`
    select (select count(*) from tenants) as tenants,
      -- A paused connection is still provisioned (not revoked): it counts as active here.
      count(*) filter (where status in ('active', 'paused')) as active,
      count(*) filter (where status = 'disabled') as disabled
    from connections`.execute(db);
  const row = rows[0];
  return {
    tenants: count(row?.tenants),
    connections: { active: count(row?.active), disabled: count(row?.disabled) },
  };
}
