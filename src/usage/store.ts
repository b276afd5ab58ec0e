import { sql, type Kysely } from 'kysely';
import type { UsageKind } from '../context.js';
import type { DB } from '../db/schema.js';

// usage_hourly's queries (usage/ owns it): the meter's additive upsert, the routes' reads, retention.

/** Every kind, in the order of the CSV columns (docs/api/usage.md). */
export const USAGE_KINDS = [
  'eventsPublished',
  'delivered',
  'failed',
  'skipped',
  'attempts',
  'proxyCalls',
  'ingested',
] as const satisfies readonly UsageKind[];

/** The column of each kind. */
const COLUMNS = {
  eventsPublished: 'events_published',
  delivered: 'delivered',
  failed: 'failed',
  skipped: 'skipped',
  attempts: 'attempts',
  proxyCalls: 'proxy_calls',
  ingested: 'ingested',
} as const satisfies Record<UsageKind, string>;

export type UsageCounts = Record<UsageKind, number>;

/** What one tenant did in one hour, as the meter gathered it. */
export interface HourCounts {
  tenantId: string;
  hour: Date;
  counts: UsageCounts;
}

export const zeroCounts = (): UsageCounts => ({
  eventsPublished: 0,
  delivered: 0,
  failed: 0,
  skipped: 0,
  attempts: 0,
  proxyCalls: 0,
  ingested: 0,
});

/**
 * One statement for a whole flush: each (tenant, hour) row inserted, or its counts added to the row
 * there. Additions commute, so processes flushing the same rows at once never lose a count; the
 * rows go in key order, so two flushes lock shared rows in one order and never deadlock.
 */
export async function addUsage(db: Kysely<DB>, rows: readonly HourCounts[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) =>
    a.tenantId !== b.tenantId ? (a.tenantId < b.tenantId ? -1 : 1) : a.hour.getTime() - b.hour.getTime(),
  );
  const column = (kind: UsageKind) => sql`${sorted.map((r) => r.counts[kind])}::bigint[]`;
  const names = USAGE_KINDS.map((kind) => sql.ref(COLUMNS[kind]));
  const added = sql.join(
    USAGE_KINDS.map(
      (kind) =>
        sql`${sql.ref(COLUMNS[kind])} = usage_hourly.${sql.ref(COLUMNS[kind])} + excluded.${sql.ref(COLUMNS[kind])}`,
    ),
  );
  await sql`
    insert into usage_hourly (tenant_id, hour, ${sql.join(names)})
    select * from unnest(${sorted.map((r) => r.tenantId)}::text[], ${sorted.map((r) => r.hour)}::timestamptz[],
      ${sql.join(USAGE_KINDS.map(column))})
    on conflict (tenant_id, hour) do update set ${added}`.execute(db);
}

/** A stored hour's counts. */
export interface UsageRow {
  tenantId: string;
  hour: Date;
  counts: UsageCounts;
}

/**
 * The hours in [from, until) of one tenant, or of every tenant when `tenantId` is undefined (the
 * platform's view), ordered by tenant and hour.
 */
export async function usageRows(
  db: Kysely<DB>,
  tenantId: string | undefined,
  from: Date,
  until: Date,
): Promise<UsageRow[]> {
  let query = db
    .selectFrom('usage_hourly')
    .selectAll()
    .where('hour', '>=', from)
    .where('hour', '<', until)
    .orderBy('tenant_id')
    .orderBy('hour');
  if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
  const rows = await query.execute();
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    hour: new Date(row.hour),
    counts: Object.fromEntries(USAGE_KINDS.map((kind) => [kind, Number(row[COLUMNS[kind]])])) as UsageCounts,
  }));
}

/** How many tenants counted anything in [from, until): what a platform answer without a tenant spans. */
export async function usageTenantCount(db: Kysely<DB>, from: Date, until: Date): Promise<number> {
  const row = await db
    .selectFrom('usage_hourly')
    .select((eb) => eb.fn.count<string>('tenant_id').distinct().as('n'))
    .where('hour', '>=', from)
    .where('hour', '<', until)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Deletes the hours before `cutoff` (retention.ts); returns how many. */
export async function purgeUsage(db: Kysely<DB>, cutoff: Date): Promise<number> {
  const result = await db.deleteFrom('usage_hourly').where('hour', '<', cutoff).executeTakeFirst();
  return Number(result.numDeletedRows);
}
