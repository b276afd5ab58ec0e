import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { fieldProblem } from '../http/problem.js';
import { USAGE_KINDS, usageRows, usageTenantCount, zeroCounts, type UsageCounts } from './store.js';

// The usage routes' answers (docs/api/usage.md): the buckets of a range, every one of them, zeros
// included, summed from the hours usage_hourly holds.

export type Granularity = 'hour' | 'day';

export interface UsageQuery {
  from?: string;
  to?: string;
  granularity?: Granularity;
}

export interface UsageBucket {
  start: string;
  eventsPublished: number;
  deliveries: { delivered: number; failed: number; skipped: number };
  attempts: number;
  proxyCalls: number;
  ingested: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The longest range a request may ask for: as long as usage is kept (retention.ts). */
export const MAX_RANGE_DAYS = 400;
/** The most buckets (tenants × buckets) one platform answer without a `tenantId` holds. */
export const MAX_PLATFORM_BUCKETS = 100_000;
const STEP: Record<Granularity, number> = { hour: HOUR_MS, day: DAY_MS };
/** What `from` is when left out: 30 days before `to` by day, 24 hours by hour. */
const DEFAULT_SPAN: Record<Granularity, number> = { hour: 24 * HOUR_MS, day: 30 * DAY_MS };

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** An ISO 8601 date (its UTC midnight) or date-time with an offset; else 400 naming the field. */
function instantOf(field: 'from' | 'to', value: string): Date {
  const at = DATE.test(value)
    ? new Date(`${value}T00:00:00Z`)
    : DATE_TIME.test(value)
      ? new Date(value)
      : null;
  if (!at || Number.isNaN(at.getTime())) {
    throw fieldProblem(field, 'must be an ISO 8601 date (2026-12-01) or date-time (2026-12-01T10:00:00Z)');
  }
  return at;
}

/** A request's range: its buckets' starts, from the bucket holding `from` to the one holding `to`. */
export interface UsageRange {
  granularity: Granularity;
  starts: Date[];
  /** The end of the last bucket: the rows read are those in [starts[0], until). */
  until: Date;
}

export function usageRange(query: UsageQuery, now: Date): UsageRange {
  const granularity = query.granularity ?? 'day';
  const step = STEP[granularity];
  const to = query.to === undefined ? now : instantOf('to', query.to);
  const from =
    query.from === undefined
      ? new Date(to.getTime() - DEFAULT_SPAN[granularity])
      : instantOf('from', query.from);
  if (from > to) throw fieldProblem('from', 'must not be after to');
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS) {
    throw fieldProblem('from', `the range from from to to is at most ${MAX_RANGE_DAYS} days`);
  }
  const first = Math.floor(from.getTime() / step) * step;
  const last = Math.floor(to.getTime() / step) * step;
  const starts: Date[] = [];
  for (let at = first; at <= last; at += step) starts.push(new Date(at));
  return { granularity, starts, until: new Date(last + step) };
}

const bucketOf = (start: Date, c: UsageCounts): UsageBucket => ({
  start: start.toISOString(),
  eventsPublished: c.eventsPublished,
  deliveries: { delivered: c.delivered, failed: c.failed, skipped: c.skipped },
  attempts: c.attempts,
  proxyCalls: c.proxyCalls,
  ingested: c.ingested,
});

/**
 * Every bucket of the range for each tenant: one tenant's (all zeros if it counted nothing), or,
 * with `tenantId` undefined, each tenant that counted anything in the range, ordered by tenant.
 */
export async function usageBuckets(
  db: Kysely<DB>,
  tenantId: string | undefined,
  range: UsageRange,
): Promise<Array<{ tenantId: string; buckets: UsageBucket[] }>> {
  const { starts, until } = range;
  if (tenantId === undefined) {
    // Every tenant's every bucket is built in memory: bounded, so that one platform request cannot
    // hold the process (a 400-day hourly range is 9,601 buckets a tenant).
    const tenants = await usageTenantCount(db, starts[0]!, until);
    if (tenants * starts.length > MAX_PLATFORM_BUCKETS) {
      throw fieldProblem(
        'from',
        `${tenants} tenants × ${starts.length} buckets is more than ${MAX_PLATFORM_BUCKETS}: ` +
          'narrow the range, ask by day, or name a tenantId',
      );
    }
  }
  const first = starts[0]!.getTime();
  const step = STEP[range.granularity];
  const rows = await usageRows(db, tenantId, starts[0]!, until);
  const byTenant = new Map<string, UsageCounts[]>();
  if (tenantId !== undefined) byTenant.set(tenantId, starts.map(zeroCounts));
  for (const row of rows) {
    let counts = byTenant.get(row.tenantId);
    if (!counts) {
      counts = starts.map(zeroCounts);
      byTenant.set(row.tenantId, counts);
    }
    const bucket = counts[Math.floor((row.hour.getTime() - first) / step)];
    if (bucket) for (const kind of USAGE_KINDS) bucket[kind] += row.counts[kind];
  }
  return [...byTenant.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, counts]) => ({ tenantId: id, buckets: counts.map((c, i) => bucketOf(starts[i]!, c)) }));
}

const CSV_COLUMNS = 'start,eventsPublished,delivered,failed,skipped,attempts,proxyCalls,ingested';

const csvLine = (b: UsageBucket): string =>
  [
    b.start,
    b.eventsPublished,
    b.deliveries.delivered,
    b.deliveries.failed,
    b.deliveries.skipped,
    b.attempts,
    b.proxyCalls,
    b.ingested,
  ].join(',');

/** The tenant's buckets as CSV: a header row, then one line per bucket (docs/api/usage.md). */
export function tenantCsv(buckets: readonly UsageBucket[]): string {
  return [CSV_COLUMNS, ...buckets.map(csvLine)].join('\n') + '\n';
}

/** The platform's rows as CSV, with the tenant's ID first. Tenant IDs hold no comma or quote. */
export function platformCsv(tenants: ReadonlyArray<{ tenantId: string; buckets: UsageBucket[] }>): string {
  const lines = tenants.flatMap(({ tenantId, buckets }) => buckets.map((b) => `${tenantId},${csvLine(b)}`));
  return [`tenantId,${CSV_COLUMNS}`, ...lines].join('\n') + '\n';
}

/** Whether the request asks for CSV (`Accept: text/csv`). */
/**
 * Whether the client asked for CSV: `text/csv` listed with a weight above 0 and at least that of
 * `application/json` it lists (`Accept: application/json, text/csv;q=0.1` stays JSON).
 */
export function wantsCsv(accept: string | undefined): boolean {
  let csv = 0;
  let json = 0;
  for (const part of (accept ?? '').split(',')) {
    const [type = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (!Number.isFinite(weight)) continue;
    if (type === 'text/csv') csv = Math.max(csv, weight);
    else if (type === 'application/json') json = Math.max(json, weight);
  }
  return csv > 0 && csv >= json;
}
