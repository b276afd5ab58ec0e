import { sql, type Kysely } from 'kysely';

// Usage per tenant and hour (docs/api/usage.md, docs/decisions/0089-usage-counted-in-memory-flushed.md):
// usage/ owns it. Each process adds what it counted to its rows once a second (an additive upsert on
// the primary key), so several processes count one tenant without losing any. No foreign key to
// tenants: a tenant deleted keeps its usage for its 400 days, and a flush for it never fails.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table usage_hourly (
    tenant_id text not null,
    hour timestamptz not null,
    events_published bigint not null default 0,
    delivered bigint not null default 0,
    failed bigint not null default 0,
    skipped bigint not null default 0,
    attempts bigint not null default 0,
    proxy_calls bigint not null default 0,
    ingested bigint not null default 0,
    constraint usage_hourly_pkey primary key (tenant_id, hour)
  )`.execute(db);
  // The platform's view across tenants and the retention read by hour.
  await sql`create index usage_hourly_hour on usage_hourly (hour)`.execute(db);
}
