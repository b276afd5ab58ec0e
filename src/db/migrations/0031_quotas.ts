import { sql, type Kysely } from 'kysely';

// Tenant quotas (docs/api/quotas.md, docs/decisions/0090-tenant-quotas.md): quotas/ owns these tables.
// - tenant_quotas: the limits the platform set for a tenant; null is no limit. No row: none set.
// - tenant_event_days: the events a tenant with an `eventsPerDay` quota has reserved on a UTC day,
//   seeded with the events it had already published that day; the row is what makes two processes agree.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create table tenant_quotas (
    tenant_id text primary key references tenants (id) on delete cascade,
    events_per_day integer check (events_per_day >= 1),
    connections integer check (connections >= 1),
    requests_per_minute integer check (requests_per_minute between 1 and 1000000),
    retention_days integer check (retention_days between 1 and 365),
    updated_at timestamptz not null
  )`);
  await run(sql`create table tenant_event_days (
    tenant_id text not null references tenants (id) on delete cascade,
    day date not null,
    events integer not null,
    constraint tenant_event_days_pkey primary key (tenant_id, day)
  )`);
}
