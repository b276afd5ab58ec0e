import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

const DAY_MS = 86_400_000;

/** The tables partitioned by the day an event was published, children first, and their partition keys. */
export const DAY_PARTITIONED = [
  { table: 'delivery_attempts', key: 'delivery_created_at' },
  { table: 'deliveries', key: 'created_at' },
  { table: 'events', key: 'created_at' },
] as const;

// One process at a time changes partitions (any number may try): a transaction-scoped advisory lock,
// which a pooler in transaction mode (PgBouncer) carries correctly, unlike a session lock.
const MAINTENANCE_LOCK = 0x68756267; // "hubg"

/** Takes the maintenance lock for the rest of the transaction, if no other process holds it. */
async function tryMaintenanceLock(trx: Kysely<DB>): Promise<boolean> {
  const locked = await sql<{
    ok: boolean;
  }>`select pg_try_advisory_xact_lock(${MAINTENANCE_LOCK}) as ok`.execute(trx);
  return locked.rows[0]?.ok === true;
}

/** `20261124` for any moment of that UTC day. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10).replaceAll('-', '');

const startOf = (day: string): Date =>
  new Date(`${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}T00:00:00Z`);

/** The days that have partitions, from the deliveries table's (the three tables always match). */
export async function partitionDays(db: Kysely<DB>): Promise<string[]> {
  const result = await sql<{ name: string }>`
    select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'deliveries'::regclass`.execute(db);
  return result.rows
    .map((r) => /^deliveries_p(\d{8})$/.exec(r.name)?.[1])
    .filter((d): d is string => d !== undefined)
    .sort();
}

/**
 * How the day-partitioned tables are laid out on each engine. PostgreSQL: a partition per day, made
 * ahead and dropped whole by retention. PGlite: the default partitions only, every day in them, and
 * retention deletes their rows in batches (retention.ts), as it does for rows that found no day.
 * PGlite keeps fewer than 50 files open at once, and a statement over every day (the claim, the
 * outcome write) reads ten files per day of deliveries alone, so with a week of day partitions it
 * closed and reopened about a hundred files for each such statement (docs/decisions/0051-embedded-database-on-its-own-thread-with-one-partition.md).
 * An embedded database made by an earlier version has its day partitions folded into the defaults.
 */
export function layOutPartitions(
  db: Kysely<DB>,
  engine: 'pglite' | 'postgres',
  now: Date,
): Promise<string[]> {
  return engine === 'pglite' ? foldDayPartitions(db) : ensurePartitions(db, now);
}

/** Moves every day partition's rows into the default partitions and drops it; the days folded. */
export async function foldDayPartitions(db: Kysely<DB>): Promise<string[]> {
  const days = await partitionDays(db);
  if (days.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    if (!(await tryMaintenanceLock(trx))) return [];
    const folded = await partitionDays(trx);
    for (const day of folded) {
      for (const { table } of DAY_PARTITIONED) {
        const partition = sql.id(`${table}_p${day}`);
        // Once detached, the day's range belongs to no partition, so its rows go to the default one.
        await sql`alter table ${sql.id(table)} detach partition ${partition}`.execute(trx);
        await sql`insert into ${sql.id(table)} select * from ${partition}`.execute(trx);
        await sql`drop table ${partition}`.execute(trx);
      }
    }
    return folded;
  });
}

/**
 * Makes sure each day from yesterday to `daysAhead` days from now has its partitions, so rows never
 * wait on a partition being made. Rows that reached a default partition because their day had none
 * yet (a maintenance run missed, a clock moved) are moved into the new one in the same transaction.
 * Returns the days created.
 */
export async function ensurePartitions(db: Kysely<DB>, now: Date, daysAhead = 7): Promise<string[]> {
  const have = new Set(await partitionDays(db));
  const today = startOf(dayOf(now)).getTime();
  const wanted: string[] = [];
  for (let d = -1; d <= daysAhead; d++) {
    const day = dayOf(new Date(today + d * DAY_MS));
    if (!have.has(day)) wanted.push(day);
  }
  if (wanted.length === 0) return [];
  return db.transaction().execute(async (trx) => {
    if (!(await tryMaintenanceLock(trx))) return [];
    const made = new Set(await partitionDays(trx));
    const created: string[] = [];
    for (const day of wanted.filter((d) => !made.has(d))) {
      await createDay(trx, day);
      created.push(day);
    }
    return created;
  });
}

/** A day's three partitions, also for a day in the past whose rows sit in the default partitions. */
export async function createDay(trx: Kysely<DB>, day: string): Promise<void> {
  const from = startOf(day);
  const to = new Date(from.getTime() + DAY_MS);
  for (const { table, key } of DAY_PARTITIONED) {
    const parent = sql.id(table);
    const partition = sql.id(`${table}_p${day}`);
    const fallback = sql.id(`${table}_default`);
    const inRange = sql`${sql.ref(key)} >= ${from} and ${sql.ref(key)} < ${to}`;
    const stray = await sql`select 1 from ${fallback} where ${inRange} limit 1`.execute(trx);
    const bounds = sql`for values from (${sql.lit(from.toISOString())}) to (${sql.lit(to.toISOString())})`;
    if (stray.rows.length === 0) {
      await sql`create table ${partition} partition of ${parent} ${bounds}`.execute(trx);
      continue;
    }
    // PostgreSQL refuses a partition whose rows sit in the default one: take the default out, make the
    // partition, move the rows through the parent, and put the default back.
    await sql`alter table ${parent} detach partition ${fallback}`.execute(trx);
    await sql`create table ${partition} partition of ${parent} ${bounds}`.execute(trx);
    await sql`insert into ${parent} select * from ${fallback} where ${inRange}`.execute(trx);
    await sql`delete from ${fallback} where ${inRange}`.execute(trx);
    await sql`alter table ${parent} attach partition ${fallback} default`.execute(trx);
  }
}

/**
 * Drops the partitions of every day that ended before `cutoff` and has nothing left to send (no
 * delivery pending, retrying or being sent: a manual retry can reopen an old one). Dropping a table
 * costs the same whatever it holds, where deleting 100 million rows would take hours and bloat the
 * table. Returns the days dropped.
 */
export async function dropExpiredPartitions(db: Kysely<DB>, cutoff: Date): Promise<string[]> {
  const expired = (await partitionDays(db)).filter(
    (day) => startOf(day).getTime() + DAY_MS <= cutoff.getTime(),
  );
  const dropped: string[] = [];
  for (const day of expired) {
    const done = await db.transaction().execute(async (trx) => {
      if (!(await tryMaintenanceLock(trx))) return false;
      const open = await sql`select 1 from ${sql.id(`deliveries_p${day}`)}
        where status in ('pending', 'retrying', 'delivering') limit 1`.execute(trx);
      if (open.rows.length > 0) return false;
      for (const { table } of DAY_PARTITIONED) {
        await sql`drop table if exists ${sql.id(`${table}_p${day}`)}`.execute(trx);
      }
      return true;
    });
    if (done) dropped.push(day);
  }
  return dropped;
}
