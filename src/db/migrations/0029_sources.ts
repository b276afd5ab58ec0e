import { sql, type Kysely } from 'kysely';

// Incoming webhooks (docs/api/sources.md, docs/decisions/0088-…): sources/ owns these tables.
// - sources: a tenant's source, its scheme and the scheme's fields, its secret sealed (and the
//   previous one during a rotation's overlap). Deleting a source deletes its log and its IDs.
// - source_deliveries: the provider delivery IDs seen in the last 7 days, one row per ID and
//   source: the primary key is what makes two processes agree on the first.
// - source_requests: the request log, kept as long as deliveries.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create table sources (
    id text primary key,
    tenant_id text not null references tenants (id) on delete cascade,
    name text not null,
    scheme text not null,
    type_prefix text not null,
    config jsonb not null,
    secret_sealed text not null,
    previous_secret_sealed text,
    previous_valid_until timestamptz,
    status text not null check (status in ('active', 'paused')),
    max_per_second integer not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`);
  await run(sql`create index sources_tenant on sources (tenant_id, created_at, id)`);
  await run(sql`create table source_deliveries (
    source_id text not null references sources (id) on delete cascade,
    provider_delivery_id text not null,
    event_id text,
    received_at timestamptz not null,
    constraint source_deliveries_pkey primary key (source_id, provider_delivery_id)
  )`);
  await run(sql`create index source_deliveries_received_at on source_deliveries (received_at)`);
  await run(sql`create table source_requests (
    id text primary key,
    tenant_id text not null,
    source_id text not null references sources (id) on delete cascade,
    received_at timestamptz not null,
    outcome text not null,
    event_id text,
    provider_delivery_id text,
    event_type text,
    headers jsonb not null,
    body text not null,
    body_truncated boolean not null
  )`);
  await run(
    sql`create index source_requests_source on source_requests (source_id, received_at desc, id desc)`,
  );
  await run(sql`create index source_requests_received_at on source_requests (received_at)`);
}
