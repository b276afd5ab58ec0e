import { sql, type Kysely } from 'kysely';

// Events, deliveries and attempts partitioned by the day the event was published (declarative range
// partitioning, on PostgreSQL and PGlite alike), so retention drops a day's partitions whole instead
// of deleting rows one by one. A delivery's `created_at` is its event's, and an attempt carries it as
// `delivery_created_at`: a day's three partitions hold exactly one another's rows and go together.
// A key of a partitioned table must include the partition key, so the 24-hour idempotency keys move
// to a small table of their own. Rows of a day with no partition yet go to each table's default
// partition (see db/partitions.ts). Existing rows are copied into a partition per day.
export async function up(db: Kysely<unknown>): Promise<void> {
  await setAsideUnpartitioned(db);
  await createEvents(db);
  await createDeliveries(db);
  await createAttempts(db);
  await createDayPartitions(db);
  await createIdempotencyKeys(db);
  await copyRows(db);
}

const runner = (db: Kysely<unknown>) => (statement: ReturnType<typeof sql>) => statement.execute(db);

async function setAsideUnpartitioned(db: Kysely<unknown>): Promise<void> {
  const run = runner(db);
  await run(sql`alter table delivery_attempts rename to delivery_attempts_unpartitioned`);
  await run(sql`alter table deliveries rename to deliveries_unpartitioned`);
  await run(sql`alter table events rename to events_unpartitioned`);
  // Frees the names of their keys and indexes for the new tables.
  await run(sql`alter table delivery_attempts_unpartitioned drop constraint delivery_attempts_pk`);
  await run(sql`alter table deliveries_unpartitioned drop constraint deliveries_pkey cascade`);
  await run(sql`alter table events_unpartitioned drop constraint events_pkey cascade`);
  // deliveries_delivered_idx and deliveries_failed_idx (0005) were doubled by 0010's two; one of each
  // is made again below.
  await run(sql`drop index events_idempotency_idx, events_created_idx, deliveries_due_idx,
    deliveries_connection_idx, deliveries_tenant_updated_idx, deliveries_delivered_at_idx,
    deliveries_failed_at_idx, deliveries_delivered_idx, deliveries_failed_idx, delivery_attempts_started_idx`);
}

async function createEvents(db: Kysely<unknown>): Promise<void> {
  await sql`create table events (
    id text not null,
    tenant_id text not null references tenants (id) on delete cascade,
    type text not null,
    -- The event data, AES-256-GCM under the event-payload key, bound to the event ID.
    payload_sealed text not null,
    delivery_count integer not null,
    created_at timestamptz not null,
    constraint events_pkey primary key (id, created_at)
  ) partition by range (created_at)`.execute(db);
}

async function createDeliveries(db: Kysely<unknown>): Promise<void> {
  const run = runner(db);
  await run(sql`create table deliveries (
    id text not null,
    tenant_id text not null references tenants (id) on delete cascade,
    event_id text not null,
    connection_id text not null references connections (id) on delete cascade,
    status text not null,
    attempt_count integer not null default 0,
    next_attempt_at timestamptz,
    -- A worker's claim: until then no other worker takes it; after it, the delivery is due again.
    lease_until timestamptz,
    leased_by text,
    created_at timestamptz not null,
    updated_at timestamptz not null,
    delivered_at timestamptz,
    constraint deliveries_pkey primary key (id, created_at)
  ) partition by range (created_at)`);
  await run(sql`create index deliveries_due_idx on deliveries (next_attempt_at)
    where status in ('pending', 'retrying', 'delivering')`);
  await run(sql`create index deliveries_connection_idx on deliveries (connection_id, created_at, id)`);
  await run(sql`create index deliveries_tenant_updated_idx on deliveries (tenant_id, updated_at)`);
  await run(
    sql`create index deliveries_delivered_at_idx on deliveries (delivered_at) where status = 'delivered'`,
  );
  await run(sql`create index deliveries_failed_at_idx on deliveries (updated_at) where status = 'failed'`);
}

async function createAttempts(db: Kysely<unknown>): Promise<void> {
  const run = runner(db);
  await run(sql`create table delivery_attempts (
    delivery_id text not null,
    delivery_created_at timestamptz not null,
    number integer not null,
    started_at timestamptz not null,
    duration_ms integer not null,
    remote_address text,
    response_status integer,
    error text,
    error_detail text,
    constraint delivery_attempts_pk primary key (delivery_id, delivery_created_at, number)
  ) partition by range (delivery_created_at)`);
  // The failure-rate alert reads the attempts of its window; without this it would read them all.
  await run(sql`create index delivery_attempts_started_idx on delivery_attempts (started_at)`);
}

async function createDayPartitions(db: Kysely<unknown>): Promise<void> {
  const run = runner(db);
  for (const table of ['events', 'deliveries', 'delivery_attempts']) {
    await run(sql`create table ${sql.id(`${table}_default`)} partition of ${sql.id(table)} default`);
  }

  // One partition per UTC day that has rows, so the copied rows land where new ones would.
  const days = await sql<{ day: string }>`
    select distinct to_char(created_at at time zone 'UTC', 'YYYYMMDD') as day from events_unpartitioned
    union select distinct to_char(created_at at time zone 'UTC', 'YYYYMMDD') from deliveries_unpartitioned`.execute(
    db,
  );
  for (const { day } of days.rows) {
    const from = `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}T00:00:00Z`;
    const to = new Date(new Date(from).getTime() + 86_400_000).toISOString();
    for (const table of ['events', 'deliveries', 'delivery_attempts']) {
      await run(sql`create table ${sql.id(`${table}_p${day}`)} partition of ${sql.id(table)}
        for values from (${sql.lit(from)}) to (${sql.lit(to)})`);
    }
  }
}

async function createIdempotencyKeys(db: Kysely<unknown>): Promise<void> {
  const run = runner(db);
  // An Idempotency-Key answers its first event's result for 24 hours (docs/api/events.md).
  await run(sql`create table event_idempotency_keys (
    tenant_id text not null references tenants (id) on delete cascade,
    key text not null,
    request_hash text not null,
    event_id text not null,
    event_type text not null,
    delivery_count integer not null,
    created_at timestamptz not null,
    constraint event_idempotency_keys_pkey primary key (tenant_id, key)
  )`);
  await run(sql`create index event_idempotency_keys_created_idx on event_idempotency_keys (created_at)`);
}

async function copyRows(db: Kysely<unknown>): Promise<void> {
  const run = runner(db);
  await run(sql`insert into events (id, tenant_id, type, payload_sealed, delivery_count, created_at)
    select id, tenant_id, type, payload_sealed, delivery_count, created_at from events_unpartitioned`);
  await run(sql`insert into event_idempotency_keys
      (tenant_id, key, request_hash, event_id, event_type, delivery_count, created_at)
    select tenant_id, idempotency_key, coalesce(request_hash, ''), id, type, delivery_count, created_at
    from events_unpartitioned where idempotency_key is not null`);
  await run(sql`insert into deliveries
    select id, tenant_id, event_id, connection_id, status, attempt_count, next_attempt_at, lease_until,
      leased_by, created_at, updated_at, delivered_at
    from deliveries_unpartitioned`);
  await run(sql`insert into delivery_attempts
    select a.delivery_id, d.created_at, a.number, a.started_at, a.duration_ms, a.remote_address,
      a.response_status, a.error, a.error_detail
    from delivery_attempts_unpartitioned a join deliveries_unpartitioned d on d.id = a.delivery_id`);
  await run(sql`drop table delivery_attempts_unpartitioned, deliveries_unpartitioned, events_unpartitioned`);
}
