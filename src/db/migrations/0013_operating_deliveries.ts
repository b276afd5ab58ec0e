import { sql, type Kysely } from 'kysely';

// Operating deliveries (docs/api/connections.md): pausing a connection (by hand, or by itself when its receiver
// fails for long or answers 410), the run of failed deliveries that decides the automatic pause, test
// deliveries, what each attempt sent and was answered, the last answer's status for the log's filter,
// and the per-second counters of the throttle (`maxPerSecond`).
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`alter table connections
    add column paused_at timestamptz,
    add column paused_reason text,
    add column failure_streak integer not null default 0,
    add column failure_streak_since timestamptz`);
  await run(sql`alter table deliveries
    add column test boolean not null default false,
    add column last_response_status integer`);
  await run(sql`alter table delivery_attempts
    add column request text,
    add column response text`);
  // A filtered page of one connection's log (status, and recover's statuses over a time range) reads
  // this index in order instead of every delivery of the connection.
  await run(
    sql`create index deliveries_connection_status_idx on deliveries (connection_id, status, created_at, id)`,
  );
  // The log's other filters, each read in the page's order (docs/benchmarks.md, "Event log filters"):
  // test deliveries are a handful among thousands, so a partial index of them only;
  await run(sql`create index deliveries_connection_test_idx on deliveries (connection_id, created_at, id)
    where test`);
  // a failing answer's class (`4xx`, `5xx`, or one code within it), indexed for answers of 300 and up
  // only: 2xx is most of a log and found at once in time order, and leaving it out keeps the index off
  // the path of nearly every delivery's writes;
  await run(sql`create index deliveries_connection_answer_idx
    on deliveries (connection_id, (last_response_status / 100), created_at, id)
    where last_response_status >= 300`);
  // the event type, which lives on the event: the tenant's events of a type (or of a pattern's literal
  // start, hence the C collation, whose order is the bytes') newest first, each then found among the
  // connection's deliveries by its time.
  await run(sql`create index events_tenant_type_idx on events (tenant_id, type collate "C", created_at)
    include (id)`);
  // Attempts started per connection and second, across every process (the throttle). Rows older than
  // a minute are deleted by the retention run.
  await run(sql`create table connection_send_permits (
    connection_id text not null,
    second bigint not null,
    used integer not null,
    constraint connection_send_permits_pkey primary key (connection_id, second)
  )`);
}
