import { sql, type Kysely } from 'kysely';

// Ordered delivery per key (docs/api/events.md, Ordering; docs/decisions/0059-ordered-delivery.md). A
// delivery of a `per-key` connection carries its event's `orderingKey` and, while the delivery before
// it in its key has not ended, that delivery's ID (`waiting_for`); a waiting delivery has no
// `next_attempt_at`, so the claim's index never holds it and the claim is unchanged. Both columns are
// added on the partitioned parent, nullable with no default: no row is rewritten, and every
// partition, now and later, has them.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`alter table deliveries add column ordering_key text, add column waiting_for text`);
  // The deliveries released when one ends. Unordered deliveries are not in it, so they never write it.
  await run(
    sql`create index deliveries_waiting_for_idx on deliveries (waiting_for) where waiting_for is not null`,
  );
  // The last delivery queued per connection and key: the row a publish locks to chain a new delivery
  // after it, so that concurrent publishes of one key form one chain, in the order they commit.
  await run(sql`create table ordering_heads (
    connection_id text not null references connections (id) on delete cascade,
    ordering_key text not null,
    delivery_id text,
    delivery_created_at timestamptz,
    constraint ordering_heads_pkey primary key (connection_id, ordering_key)
  )`);
}
