import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

// The queries of tenant quotas (docs/api/quotas.md). quotas/ owns tenant_quotas and tenant_event_days;
// it reads tenants, events and connections with plain SQL, which the layers let it do (it may not
// import their folders, which sit above it).

export interface QuotaRow {
  events_per_day: number | null;
  connections: number | null;
  requests_per_minute: number | null;
  retention_days: number | null;
}

export async function findQuotaRow(db: Kysely<DB>, tenantId: string): Promise<QuotaRow | undefined> {
  return db
    .selectFrom('tenant_quotas')
    .select(['events_per_day', 'connections', 'requests_per_minute', 'retention_days'])
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
}

/** The tenant's quota row, locked until the transaction ends: connection creates take turns on it. */
export async function lockQuotaRow(db: Kysely<DB>, tenantId: string): Promise<QuotaRow | undefined> {
  return db
    .selectFrom('tenant_quotas')
    .select(['events_per_day', 'connections', 'requests_per_minute', 'retention_days'])
    .where('tenant_id', '=', tenantId)
    .forUpdate()
    .executeTakeFirst();
}

export async function tenantExists(db: Kysely<DB>, tenantId: string): Promise<boolean> {
  const row = await db.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
  return row !== undefined;
}

export async function upsertQuotaRow(
  db: Kysely<DB>,
  tenantId: string,
  row: QuotaRow,
  at: Date,
): Promise<void> {
  await db
    .insertInto('tenant_quotas')
    .values({ tenant_id: tenantId, ...row, updated_at: at })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ ...row, updated_at: at }))
    .execute();
}

/** The tenant's events created since `since` (the start of a UTC day), counted from the rows. */
export async function countEventsSince(db: Kysely<DB>, tenantId: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The tenant's connections not revoked (`disabled` is revoked, docs/api/connections.md). */
export async function countLiveConnections(db: Kysely<DB>, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('connections')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('status', '<>', 'disabled')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * One statement: adds `n` to the tenant's row of `day` if the sum stays within `limit`, and says
 * whether the row was there at all (a missing row is seeded, a full one refuses). The update is atomic
 * per row, so two processes reserving at once never pass the limit together.
 */
export async function reserveOnDay(
  db: Kysely<DB>,
  tenantId: string,
  day: string,
  n: number,
  limit: number,
): Promise<{ reserved: boolean; present: boolean }> {
  const { rows } = await sql<{ reserved: number | null; present: boolean }>`
    with taken as (
      update tenant_event_days set events = events + ${n}
      where tenant_id = ${tenantId} and day = ${day}::date and events + ${n} <= ${limit}
      returning events)
    select (select events from taken) as reserved,
      exists (select 1 from tenant_event_days where tenant_id = ${tenantId} and day = ${day}::date) as present`.execute(
    db,
  );
  const row = rows[0];
  return { reserved: row?.reserved != null, present: row?.present === true };
}

/**
 * The day's row, seeded with the events the tenant already published that day (a quota set mid-day
 * counts them); the tenant's earlier days go. Another process may seed it first: then its row stays.
 */
export async function seedDay(db: Kysely<DB>, tenantId: string, day: string, dayStart: Date): Promise<void> {
  await db.deleteFrom('tenant_event_days').where('tenant_id', '=', tenantId).where('day', '<', day).execute();
  await sql`insert into tenant_event_days (tenant_id, day, events)
    select ${tenantId}, ${day}::date, count(*)::int from events
    where tenant_id = ${tenantId} and created_at >= ${dayStart}
    on conflict (tenant_id, day) do nothing`.execute(db);
}

/** Gives back reservations of events that were not written (a failed write, an idempotent replay). */
export async function releaseOnDay(db: Kysely<DB>, tenantId: string, day: string, n: number): Promise<void> {
  await db
    .updateTable('tenant_event_days')
    .set((eb) => ({ events: sql<number>`greatest(${eb.ref('events')} - ${n}, 0)` }))
    .where('tenant_id', '=', tenantId)
    .where('day', '=', day)
    .execute();
}

/** Forgets the tenant's reserved days: the next reservation seeds again from the events rows. */
export async function forgetDays(db: Kysely<DB>, tenantId: string): Promise<void> {
  await db.deleteFrom('tenant_event_days').where('tenant_id', '=', tenantId).execute();
}
