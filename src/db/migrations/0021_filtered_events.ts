import { sql, type Kysely } from 'kysely';

// What a connection's payload filter dropped (docs/api/events.md, Filtered events;
// docs/decisions/0067-filtered-events-and-ordering-key-shown.md). A filtered event gets no delivery,
// so without this nothing told a tenant it was ever dropped. Per connection: a count (one row,
// `filter_counts`) and the most recent events (`filtered_events`), a ring of 100 slots: the n-th
// event counted takes slot (n - 1) % 100 and overwrites the event 100 before it, so the table never
// holds more than 100 rows per connection and needs no pruning by count. Both go with the connection.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create table filter_counts (
    connection_id text primary key references connections (id) on delete cascade,
    tenant_id text not null,
    total bigint not null,
    since timestamptz not null,
    last_at timestamptz not null
  )`);
  await run(sql`create table filtered_events (
    connection_id text not null references connections (id) on delete cascade,
    slot smallint not null,
    tenant_id text not null,
    event_id text not null,
    event_type text not null,
    created_at timestamptz not null,
    constraint filtered_events_pkey primary key (connection_id, slot)
  )`);
  // Retention forgets the events older than its cutoff (retention.ts).
  await run(sql`create index filtered_events_created_at_idx on filtered_events (created_at)`);
}
