import { sql, type Kysely } from 'kysely';
import type { DB, DeliveryStatus } from '../db/schema.js';

// Ordered delivery per key (docs/api/events.md, Ordering; docs/decisions/0059-ordered-delivery.md).
// On a `per-key` connection, a delivery of an event with an `orderingKey` waits for the one queued
// before it in its key (`waiting_for`) until that one ends. A waiting delivery has no
// `next_attempt_at`, so no claim ever sees it; whatever ends a delivery (an outcome, a pause or
// revocation) releases its successor in the same transaction. Locks are taken in one order
// everywhere: the connection, then its `ordering_heads` rows, then deliveries; an outcome takes
// deliveries only, and nothing that holds a delivery's lock waits for a head.

/** A delivery is over (docs/api/events.md): its successor in its key may be attempted. */
export const ENDED_STATUSES: readonly DeliveryStatus[] = ['delivered', 'failed', 'skipped', 'cancelled'];

/** The key a delivery to this connection is ordered by: the event's, when the connection is `per-key`. */
export function orderingKeyFor(
  config: Record<string, unknown>,
  orderingKey: string | null | undefined,
): string | null {
  return config.ordering === 'per-key' && orderingKey ? orderingKey : null;
}

/** A new delivery with an ordering key, as a publish makes it; its `waiting_for` is set here. */
export interface ChainedDelivery {
  id: string;
  connection_id: string;
  created_at: Date | string;
  ordering_key: string | null;
  waiting_for: string | null;
}

/**
 * Chains new deliveries after the last queued delivery of their connection and key, in the order
 * given (publish order), inside the caller's transaction and before they are inserted. The
 * connections are locked for share first (as the insert does), then the key's head row for update,
 * so concurrent publishes of one key chain in the order they commit; the previous delivery is read
 * locked for share, so an outcome ending it either committed before (it is over: nothing to wait
 * for) or waits for this transaction and then finds the new delivery to release. Unordered
 * deliveries are not touched, and a publish with none makes no statement here.
 */
export async function chainNewDeliveries(
  trx: Kysely<DB>,
  deliveries: readonly ChainedDelivery[],
): Promise<void> {
  const ordered = deliveries.filter((d) => d.ordering_key !== null);
  if (ordered.length === 0) return;
  const connectionIds = [...new Set(ordered.map((d) => d.connection_id))].sort();
  await sql`select id from connections where id = any(${connectionIds}::text[]) order by id for share`.execute(
    trx,
  );
  const heads = [...new Map(ordered.map((d) => [headKey(d.connection_id, d.ordering_key!), d])).values()]
    .map((d) => ({ connectionId: d.connection_id, key: d.ordering_key! }))
    .sort((a, b) => compare(a.connectionId, b.connectionId) || compare(a.key, b.key));
  const last = await lockHeads(
    trx,
    heads.map((h) => h.connectionId),
    heads.map((h) => h.key),
  );
  const open = await openDeliveries(trx, [...last.values()]);
  const tail = new Map<string, ChainedDelivery['id'] | null>();
  for (const [head, previous] of last) tail.set(head, previous && open.has(previous.id) ? previous.id : null);
  const newest = new Map<string, ChainedDelivery>();
  for (const d of ordered) {
    const head = headKey(d.connection_id, d.ordering_key!);
    d.waiting_for = tail.get(head) ?? null;
    tail.set(head, d.id);
    newest.set(head, d);
  }
  await setHeads(trx, [...newest.values()]);
}

const headKey = (connectionId: string, key: string) => `${connectionId}\u0000${key}`;
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface Queued {
  id: string;
  createdAt: Date;
}

/**
 * Makes sure each (connection, key) has its head row and locks it: the no-op update of a conflict
 * locks the row as it is after any concurrent publish committed, and returns its delivery unchanged.
 * The pairs come sorted, so two publishes lock them in one order.
 */
async function lockHeads(
  trx: Kysely<DB>,
  connectionIds: readonly string[],
  keys: readonly string[],
): Promise<Map<string, Queued | null>> {
  const result = await sql<{
    connection_id: string;
    ordering_key: string;
    delivery_id: string | null;
    delivery_created_at: Date | null;
  }>`
    insert into ordering_heads (connection_id, ordering_key)
    select connection_id, ordering_key
    from unnest(${[...connectionIds]}::text[], ${[...keys]}::text[]) as h(connection_id, ordering_key)
    on conflict (connection_id, ordering_key) do update set ordering_key = excluded.ordering_key
    returning connection_id, ordering_key, delivery_id, delivery_created_at`.execute(trx);
  return new Map(
    result.rows.map((r) => [
      headKey(r.connection_id, r.ordering_key),
      r.delivery_id && r.delivery_created_at
        ? { id: r.delivery_id, createdAt: new Date(r.delivery_created_at) }
        : null,
    ]),
  );
}

/** Which of these deliveries have not ended, read locked for share (see chainNewDeliveries). */
async function openDeliveries(trx: Kysely<DB>, queued: ReadonlyArray<Queued | null>): Promise<Set<string>> {
  const known = queued.filter((q): q is Queued => q !== null);
  if (known.length === 0) return new Set();
  const result = await sql<{ id: string; status: DeliveryStatus }>`
    select id, status from deliveries
    where (id, created_at) in (select * from unnest(${known.map((q) => q.id)}::text[],
      ${known.map((q) => q.createdAt)}::timestamptz[]))
    order by id
    for share`.execute(trx);
  // A delivery removed by retention ended long ago.
  return new Set(result.rows.filter((r) => !ENDED_STATUSES.includes(r.status)).map((r) => r.id));
}

/** Each key's head row now names its newest delivery, which the next one of the key will wait for. */
async function setHeads(trx: Kysely<DB>, newest: readonly ChainedDelivery[]): Promise<void> {
  if (newest.length === 0) return;
  await sql`
    update ordering_heads h set delivery_id = n.id, delivery_created_at = n.created_at
    from unnest(${newest.map((d) => d.connection_id)}::text[], ${newest.map((d) => d.ordering_key)}::text[],
      ${newest.map((d) => d.id)}::text[], ${newest.map((d) => new Date(d.created_at))}::timestamptz[])
      as n(connection_id, ordering_key, id, created_at)
    where h.connection_id = n.connection_id and h.ordering_key = n.ordering_key`.execute(trx);
}

/**
 * Frees the deliveries waiting for any of `ended` that did end (an outcome's write may have been
 * refused: a claim that was lost): each is due at `at`, or when a claim still held on it runs out.
 * Runs in the transaction that ended them, after the statement that did, so it sees every delivery
 * chained to them by a publish that committed meanwhile (see chainNewDeliveries).
 */
export async function releaseSuccessors(trx: Kysely<DB>, ended: readonly string[], at: Date): Promise<void> {
  if (ended.length === 0) return;
  await sql`
    update deliveries s set waiting_for = null,
      next_attempt_at = case when s.status <> 'pending' then s.next_attempt_at
        when s.leased_by is not null and s.lease_until > ${at} then s.lease_until else ${at} end
    where s.waiting_for = any(${[...ended]}::text[])
      and exists (select 1 from deliveries p where p.id = s.waiting_for
        and p.status = any(${ENDED_STATUSES}::text[]))`.execute(trx);
}

/** A delivery put back to `pending` (manual retry, recover, replay of skipped), in publish order. */
export interface Requeued {
  id: string;
  created_at: Date | string;
  ordering_key: string | null;
}

/**
 * Locks the connection's head rows before a requeue chooses its deliveries: the same order as a
 * publish (connection, heads, deliveries), so the two never wait on each other in a cycle.
 */
export async function lockConnectionHeads(trx: Kysely<DB>, connectionId: string): Promise<void> {
  await sql`select 1 from ordering_heads where connection_id = ${connectionId}
    order by ordering_key for update`.execute(trx);
}

/**
 * Deliveries put back to `pending` with an ordering key go to the end of their key's queue in the
 * order given, their publish order (control.ts): each waits for the one before it, the first for the key's last queued delivery if that has
 * not ended, so one attempt at most is in flight per key again (docs/decisions/0059-ordered-delivery.md).
 * The caller locked the heads (lockConnectionHeads) before requeueing.
 */
export async function chainRequeued(
  trx: Kysely<DB>,
  connectionId: string,
  requeued: readonly Requeued[],
): Promise<void> {
  const ordered = requeued.filter((d) => d.ordering_key !== null);
  if (ordered.length === 0) return;
  const chained: ChainedDelivery[] = ordered.map((d) => ({
    id: d.id,
    connection_id: connectionId,
    created_at: d.created_at,
    ordering_key: d.ordering_key,
    waiting_for: null,
  }));
  const keys = [...new Set(chained.map((d) => d.ordering_key!))].sort(compare);
  const last = await lockHeads(
    trx,
    keys.map(() => connectionId),
    keys,
  );
  // A requeued delivery was over before this transaction; its row reads `pending` now.
  const mine = new Set(chained.map((d) => d.id));
  const others = [...last.values()].filter((q) => q !== null && !mine.has(q.id));
  const open = await openDeliveries(trx, others);
  const tail = new Map<string, string | null>();
  for (const [head, previous] of last) tail.set(head, previous && open.has(previous.id) ? previous.id : null);
  const newest = new Map<string, ChainedDelivery>();
  for (const d of chained) {
    const head = headKey(connectionId, d.ordering_key!);
    d.waiting_for = tail.get(head) ?? null;
    tail.set(head, d.id);
    newest.set(head, d);
  }
  const waiting = chained.filter((d) => d.waiting_for !== null);
  if (waiting.length > 0) {
    await sql`
      update deliveries d set waiting_for = w.waiting_for, next_attempt_at = null
      from unnest(${waiting.map((d) => d.id)}::text[], ${waiting.map((d) => new Date(d.created_at))}::timestamptz[],
        ${waiting.map((d) => d.waiting_for)}::text[]) as w(id, created_at, waiting_for)
      where d.id = w.id and d.created_at = w.created_at`.execute(trx);
  }
  await setHeads(trx, [...newest.values()]);
}
