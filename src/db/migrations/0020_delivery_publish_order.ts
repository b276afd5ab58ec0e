import { sql, type Kysely } from 'kysely';

// A delivery's place in publish order (see
// docs/decisions/0064-queued-deliveries-keep-their-order-and-survive-a-new-host.md). The events of one
// batch share one `created_at`, and a delivery's ID is random, so `created_at, id` shuffled a batch's
// key when recover or resume with replay sent it again. `seq` comes from one sequence, taken by the
// insert in publish order (store.ts); it is added on the partitioned parent, so every partition, now
// and later, has it.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create sequence deliveries_seq as bigint`);
  await run(sql`alter table deliveries add column seq bigint`);
  // Existing rows that may still be ordered (open, or sent again by recover or a replay) get their
  // numbers in the order they were created; a delivered or cancelled one is never ordered again, and
  // is left null rather than rewritten. A volatile function in the select list is evaluated after
  // the sort (PostgreSQL's SELECT, "output list"), so the numbers follow `created_at, id`.
  await run(sql`update deliveries d set seq = o.seq
    from (select id, created_at, nextval('deliveries_seq') as seq from deliveries
      where status not in ('delivered', 'cancelled') order by created_at, id) o
    where d.id = o.id and d.created_at = o.created_at`);
  // A row inserted without one (a process of the previous release still running) is numbered too.
  await run(sql`alter table deliveries alter column seq set default nextval('deliveries_seq')`);
}
