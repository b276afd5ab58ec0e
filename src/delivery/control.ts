import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DeliveryControl, HeldClaim } from '../connections/connections.js';
import type { DB, DeliveryStatus } from '../db/schema.js';
import { chainRequeued, lockConnectionHeads, type Requeued } from './ordering.js';

// What a connection's state changes do to its deliveries (docs/api/connections.md, docs/api/events.md). Each runs in the
// caller's transaction, after the caller locked the connection's row: pause, resume and revoke lock
// it for update, recover and retry for share, and every insert of deliveries locks it for share too
// (store.ts), so a state change and the deliveries it stops or restarts never interleave.

/** Recover takes at most this many deliveries per call (docs/api/events.md). */
export const MAX_RECOVERED = 10_000;

// Lock order of close() (docs/decisions/0059-ordered-delivery.md). Pause, resume, revoke, recover,
// retry and publish all lock the connection's row before any of its deliveries, so they never meet
// halfway through its deliveries. An outcome (outcomes.ts) does not: it locks the claimed deliveries
// it ends, then (releaseSuccessors) the deliveries waiting for them. So close() locks the open
// deliveries that wait for nothing first, then those that wait, each group oldest first:
// - A claimed delivery waits for nothing (a claim takes only rows with a `next_attempt_at`, which a
//   waiting one has not), and what an outcome locks second all wait. While close() takes the first
//   group it holds nothing the outcome locks second; it reaches the second group only once it holds
//   every delivery of the connection the outcome ends, so that outcome has not started on this
//   connection (it waits, holding nothing close() wants) or has ended. No cycle either way.
// - Age is not that order: a manual retry, recover or resume with replay chains an OLDER delivery
//   behind a newer one still open (chainRequeued). Oldest first, close() would lock the older one and
//   wait for the newer, which an outcome holds while it waits for the older one: 40P01.
// - Which group a delivery is in is read in close()'s snapshot: an outcome still running is seen as
//   before it (the claimed delivery free, its successor waiting); one that committed left no chain.
// - Several claimed deliveries of one connection that one outcome batch ends are locked oldest first
//   too (outcomes.ts, `locked`), whatever order their attempts ended in; unordered connections alike
//   (test/delivery/outcome-locks.test.ts).
// Requeue below locks the heads, then deliveries that ended (no outcome releases those), then, for
// share, the open last delivery of each key, as a publish does (ordering.ts).
/**
 * Stops the connection's open deliveries (`pending`, `retrying`, `delivering`): `cancelled` for a
 * revocation, `skipped` for a pause. A claimed one keeps its claim, which its worker releases when
 * it records the attempt under way (outcomes.ts). Returns how many it stopped, and every delivery of
 * the connection still held by a live claim, for `drain`: those it stopped now, and those an earlier
 * pause left held (the automatic pause does not wait for them).
 */
async function close(
  trx: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  at: Date,
  status: 'cancelled' | 'skipped',
): Promise<{ closed: number; inFlight: HeldClaim[] }> {
  const closed = await sql<{ n: string | number }>`
    with open as (
      select id, created_at from deliveries
      where tenant_id = ${scope.tenantId} and connection_id = ${connectionId}
        and status in ('pending', 'retrying', 'delivering')
      -- Those waiting for nothing first, then those that wait, each oldest first (lock order above).
      order by (waiting_for is not null), created_at, id
      for update),
    closed as (
      -- Every open delivery ends here, so none waits for another any more.
      update deliveries d set status = ${status}, next_attempt_at = null, waiting_for = null, updated_at = ${at}
      from open where d.id = open.id and d.created_at = open.created_at
      returning 1)
    select count(*) as n from closed`.execute(trx);
  // A statement of its own: it must see the rows the one above changed.
  const held = await sql<{ id: string; created_at: Date }>`
    select id, created_at from deliveries
    where tenant_id = ${scope.tenantId} and connection_id = ${connectionId}
      and status in ('pending', 'retrying', 'delivering', 'skipped', 'cancelled')
      and leased_by is not null and lease_until > ${at}`.execute(trx);
  return {
    closed: Number(closed.rows[0]?.n ?? 0),
    inFlight: held.rows.map((r) => ({ id: r.id, createdAt: r.created_at })),
  };
}

/** How long `drain` waits between looks: short at first, since most attempts end in milliseconds. */
const drainPause = (round: number): number => Math.min(100, 5 * 2 ** round);

/**
 * Waits until every claim in `inFlight` has ended: its worker recorded the attempt it was making (and
 * released the claim), or the claim ran out (its worker died). Runs after the state change
 * committed, so that the answer to pause or revoke comes only once nothing more can reach the
 * receiver. `maxMs` bounds it by the longest claim; `now` is the service's clock.
 */
async function drain(db: Kysely<DB>, inFlight: readonly HeldClaim[], now: () => Date, maxMs: number) {
  if (inFlight.length === 0) return;
  const started = performance.now();
  for (let round = 0; performance.now() - started < maxMs; round++) {
    const held = await sql<{ n: string | number }>`
      select count(*) as n from deliveries
      where (id, created_at) in (select * from unnest(${inFlight.map((c) => c.id)}::text[],
          ${inFlight.map((c) => new Date(c.createdAt))}::timestamptz[]))
        and leased_by is not null and lease_until > ${now()}`.execute(db);
    if (Number(held.rows[0]?.n ?? 0) === 0) return;
    await sleep(drainPause(round));
  }
}

/**
 * Deliveries of the connection back to `pending`, oldest first, in publish order (same IDs, attempts
 * kept): `which` chooses them. Each is due a microsecond after the one before, so workers take them in order
 * without moving ahead of other connections' deliveries; one still held by a claim (a pause caught
 * it mid-attempt) is due only once that claim ends, so it is never sent twice at once.
 */
async function requeue(
  trx: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  at: Date,
  which: { statuses: DeliveryStatus[]; since?: Date; until?: Date; deliveryId?: string; limit?: number },
): Promise<number> {
  const range = sql.join(
    [
      sql`tenant_id = ${scope.tenantId}`,
      sql`connection_id = ${connectionId}`,
      sql`status = any(${which.statuses}::text[])`,
      ...(which.since ? [sql`created_at >= ${which.since}`] : []),
      ...(which.until ? [sql`created_at < ${which.until}`] : []),
      ...(which.deliveryId ? [sql`id = ${which.deliveryId}`] : []),
    ],
    sql` and `,
  );
  const limit = which.limit ? sql`limit ${which.limit}` : sql``;
  await lockConnectionHeads(trx, connectionId);
  // Sent again in publish order (`seq`, store.ts; see
  // docs/decisions/0064-queued-deliveries-keep-their-order-and-survive-a-new-host.md): the events of one
  // batch share one creation time and their IDs are random, so time and ID alone shuffled a batch's
  // key. Recover's limit cuts by time ("call again from the last one's time"), and within one time by
  // publish order, so a batch cut in two goes on where it stopped. The rows are locked by time and
  // ID, the order close() and an outcome lock them in (no cycle).
  const result = await sql<Requeued & { n: string | number }>`
    with picked as (
      select id, created_at from deliveries where ${range} order by created_at, seq, id ${limit}),
    chosen as (
      select d.id, d.created_at, d.seq from deliveries d
      join picked on d.id = picked.id and d.created_at = picked.created_at
      where d.status = any(${which.statuses}::text[])
      order by d.created_at, d.id for update of d),
    numbered as (select id, created_at, row_number() over (order by seq, created_at, id) as n from chosen)
    update deliveries d set status = 'pending', updated_at = ${at}, waiting_for = null,
      next_attempt_at = case when d.leased_by is not null and d.lease_until > ${at} then d.lease_until
        else ${at}::timestamptz + numbered.n * interval '1 microsecond' end
    from numbered where d.id = numbered.id and d.created_at = numbered.created_at
    returning d.id, d.created_at, d.ordering_key, numbered.n`.execute(trx);
  const requeued = [...result.rows].sort((a, b) => Number(a.n) - Number(b.n));
  // Per-key ordering: each goes to the end of its key's queue, in publish order (ordering.ts).
  await chainRequeued(trx, connectionId, requeued);
  return requeued.length;
}

/** The functions buildApp hands to the connection domain (which sits below delivery). */
export function deliveryControl(options: { now: () => Date; maxDrainMs: number }): DeliveryControl {
  return {
    close,
    drain: (db, inFlight) => drain(db, inFlight, options.now, options.maxDrainMs),
    replaySkipped: (trx, scope, connectionId, at) =>
      requeue(trx, scope, connectionId, at, { statuses: ['skipped'] }),
  };
}

/** Recover (docs/api/events.md): failed or skipped deliveries created in [since, until), at most MAX_RECOVERED. */
export function recoverRange(
  trx: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  at: Date,
  range: { since: Date; until: Date; statuses: DeliveryStatus[] },
): Promise<number> {
  return requeue(trx, scope, connectionId, at, { ...range, limit: MAX_RECOVERED });
}

/** Manual retry (docs/api/events.md): one failed delivery due again now. Returns whether it was failed. */
export async function requeueFailed(
  trx: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  deliveryId: string,
  at: Date,
): Promise<boolean> {
  return (await requeue(trx, scope, connectionId, at, { statuses: ['failed'], deliveryId })) > 0;
}
