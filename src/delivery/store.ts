import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type {
  DB,
  DeliveriesTable,
  DeliveryAttemptsTable,
  DeliveryStatus,
  EventIdempotencyKeysTable,
  EventsTable,
} from '../db/schema.js';
import { chainNewDeliveries } from './ordering.js';

export type EventRow = Selectable<EventsTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;
export type AttemptRow = Selectable<DeliveryAttemptsTable>;
export type IdempotencyKeyRow = Selectable<EventIdempotencyKeysTable>;

/**
 * The tenant's stored keys among `keys`, in one statement for a whole batch (docs/api/events.md,
 * Idempotency). The keys go as one array, so the statement's text is the same for 1 key or 100.
 */
export function findIdempotencyKeys(
  db: Kysely<DB>,
  scope: TenantScope,
  keys: readonly string[],
): Promise<IdempotencyKeyRow[]> {
  if (keys.length === 0) return Promise.resolve([]);
  return db
    .selectFrom('event_idempotency_keys')
    .select(['tenant_id', 'key', 'request_hash', 'event_id', 'event_type', 'delivery_count', 'created_at'])
    .where('tenant_id', '=', scope.tenantId)
    .where('key', '=', (eb) => eb.fn.any(sql<string[]>`${[...keys]}::text[]`))
    .execute();
}

/**
 * Takes the new keys of a publish in one statement and answers the keys it took. A key that another
 * request holds is left as it is and missing from the answer (that request won the race), unless it
 * was created at or before `expiredBefore`: an expired key is released and taken over, and its old
 * event keeps its deliveries (docs/api/events.md: after 24 hours the key can be used again). The rows
 * are written in the order given: callers sort them, so two publishes that share keys lock them in
 * one order and never wait on each other in a cycle.
 */
export async function insertIdempotencyKeys(
  db: Kysely<DB>,
  scope: TenantScope,
  rows: ReadonlyArray<Omit<IdempotencyKeyRow, 'tenant_id'>>,
  expiredBefore: Date,
): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const column = <T>(pick: (row: (typeof rows)[number]) => T) => rows.map(pick);
  const taken = await db
    .insertInto('event_idempotency_keys')
    .columns(['tenant_id', 'key', 'request_hash', 'event_id', 'event_type', 'delivery_count', 'created_at'])
    .expression(
      // Columns named, not `k.*`: a statement of whole rows is never prepared (src/db/prepared.ts).
      sql`select ${scope.tenantId}::text, key, request_hash, event_id, event_type, delivery_count, created_at
        from unnest(${column((r) => r.key)}::text[], ${column((r) => r.request_hash)}::text[],
          ${column((r) => r.event_id)}::text[], ${column((r) => r.event_type)}::text[],
          ${column((r) => r.delivery_count)}::int[], ${column((r) => new Date(r.created_at))}::timestamptz[])
          as k(key, request_hash, event_id, event_type, delivery_count, created_at)`,
    )
    .onConflict((oc) =>
      oc
        .columns(['tenant_id', 'key'])
        .doUpdateSet((eb) => ({
          request_hash: eb.ref('excluded.request_hash'),
          event_id: eb.ref('excluded.event_id'),
          event_type: eb.ref('excluded.event_type'),
          delivery_count: eb.ref('excluded.delivery_count'),
          created_at: eb.ref('excluded.created_at'),
        }))
        .where('event_idempotency_keys.created_at', '<=', expiredBefore),
    )
    .returning('key')
    .execute();
  return new Set(taken.map((row) => row.key));
}

// A statement carries at most about this much sealed payload; a larger group is split.
const MAX_STATEMENT_BYTES = 8 * 1024 * 1024;

/** Events of any tenants, each with its scope and deliveries, as a publish writes them. */
export interface ScopedEvent {
  scope: TenantScope;
  event: EventRow;
  deliveries: DeliveryRow[];
}

/**
 * Events and their deliveries, in as few statements as their size allows: each inserts some events
 * and all of their deliveries together, so an event is never visible without them (atomic without a
 * transaction's extra round trips). The rows go as one array per column (`unnest`), so the statement's
 * text is the same for a group of 1 or of 500: PostgreSQL parses it once per connection.
 */
export async function insertEventGroup(
  db: Kysely<DB>,
  events: readonly ScopedEvent[],
  claim?: InsertedClaim,
): Promise<InsertedDelivery[]> {
  // Deliveries ordered by key are chained to their key's previous one in the same transaction as
  // their insert (ordering.ts); a group without any writes as it always did, without a transaction.
  if (events.some((e) => e.deliveries.some((d) => d.ordering_key !== null))) {
    const write = async (trx: Kysely<DB>) => {
      await chainNewDeliveries(
        trx,
        events.flatMap((e) => e.deliveries),
      );
      return insertInChunks(trx, events, claim);
    };
    return db.isTransaction ? write(db) : db.transaction().execute(write);
  }
  return insertInChunks(db, events, claim);
}

async function insertInChunks(
  db: Kysely<DB>,
  events: readonly ScopedEvent[],
  claim?: InsertedClaim,
): Promise<InsertedDelivery[]> {
  const inserted: InsertedDelivery[] = [];
  let chunk: ScopedEvent[] = [];
  let bytes = 0;
  for (const item of events) {
    if (chunk.length > 0 && bytes + item.event.payload_sealed.length > MAX_STATEMENT_BYTES) {
      inserted.push(...(await insertChunk(db, chunk, claim)));
      chunk = [];
      bytes = 0;
    }
    chunk.push(item);
    bytes += item.event.payload_sealed.length;
  }
  if (chunk.length > 0) inserted.push(...(await insertChunk(db, chunk, claim)));
  return inserted;
}

/** Deliveries inserted already claimed by a worker of this process (direct dispatch). */
export interface InsertedClaim {
  deliveryIds: ReadonlySet<string>;
  workerId: string;
  leaseUntil: Date;
}

async function insertChunk(
  db: Kysely<DB>,
  part: readonly ScopedEvent[],
  claim?: InsertedClaim,
): Promise<InsertedDelivery[]> {
  const column = <T>(pick: (e: ScopedEvent) => T) => part.map(pick);
  const deliveries = part.flatMap(({ scope, deliveries }) => deliveries.map((d) => ({ scope, d })));
  const deliveryColumn = <T>(pick: (x: { scope: TenantScope; d: DeliveryRow }) => T) => deliveries.map(pick);
  const connectionIds = [...new Set(deliveries.map((x) => x.d.connection_id))];
  // The connections are read again here, locked for share: a pause or revoke (which locks the row
  // for update) either committed before, and its state decides each delivery's status, or waits for
  // this statement and then finds the deliveries it inserted. What the fan-out read earlier only
  // chose the candidates; no delivery is ever inserted sendable to a connection that was stopped.
  const result = await sql<InsertedDelivery>`
    with event as (
      insert into events (id, tenant_id, type, payload_sealed, delivery_count, created_at, trace_context)
      select id, tenant_id, type, payload_sealed, delivery_count, created_at, trace_context
      from unnest(${column((e) => e.event.id)}::text[], ${column((e) => e.scope.tenantId)}::text[],
        ${column((e) => e.event.type)}::text[], ${column((e) => e.event.payload_sealed)}::text[],
        ${column((e) => e.event.delivery_count)}::int[], ${column((e) => new Date(e.event.created_at))}::timestamptz[],
        ${column((e) => e.event.trace_context)}::text[])
        as e(id, tenant_id, type, payload_sealed, delivery_count, created_at, trace_context)),
    target as (
      select id, status, credentials_sealed is not null as bound
      from connections where id = any(${connectionIds}::text[]) order by id for share)
    insert into deliveries (id, tenant_id, event_id, connection_id, status, attempt_count, next_attempt_at,
      lease_until, leased_by, created_at, updated_at, test, ordering_key, waiting_for, seq)
    select d.id, d.tenant_id, d.event_id, d.connection_id, s.status, 0,
      case when s.status in ('pending', 'delivering') and d.waiting_for is null then d.created_at end,
      case when s.status = 'delivering' then ${claim?.leaseUntil ?? null}::timestamptz end,
      case when s.status = 'delivering' then ${claim?.workerId ?? null}::text end, d.created_at, d.created_at, d.test,
      d.ordering_key, case when s.status = 'pending' then d.waiting_for end, nextval('deliveries_seq')
    from unnest(${deliveryColumn((x) => x.d.id)}::text[], ${deliveryColumn((x) => x.scope.tenantId)}::text[],
      ${deliveryColumn((x) => x.d.event_id)}::text[], ${deliveryColumn((x) => x.d.connection_id)}::text[],
      ${deliveryColumn((x) => new Date(x.d.created_at))}::timestamptz[],
      ${deliveryColumn((x) => claim?.deliveryIds.has(x.d.id) ?? false)}::boolean[],
      ${deliveryColumn((x) => x.d.test)}::boolean[], ${deliveryColumn((x) => x.d.ordering_key)}::text[],
      ${deliveryColumn((x) => x.d.waiting_for)}::text[]) with ordinality
      as d(id, tenant_id, event_id, connection_id, created_at, claimed, test, ordering_key, waiting_for, n)
    join target t on t.id = d.connection_id
    -- A delivery waiting for the one before it in its key is never inserted claimed (ordering.ts).
    -- Credentials unbound since the fan-out read them (an edit moved the URL to another host) keep the
    -- delivery as a pause would, skipped and replayable once they are bound again.
    cross join lateral (select case
      when t.status = 'active' and not t.bound then 'skipped'
      when t.status = 'active' then case when d.claimed and d.waiting_for is null then 'delivering' else 'pending' end
      when t.status = 'paused' then 'skipped' else 'cancelled' end as status) s
    -- Publish order: a volatile function in the select list is evaluated after the sort (PostgreSQL's
    -- SELECT, "output list"), so seq numbers the deliveries in the order given, after any statement
    -- before (a chunk, a group inserted earlier) and, for a key, after the publish that chained before.
    order by d.n
    returning id, status`.execute(db);
  return result.rows;
}

/** A delivery as inserted: its status decided by its connection's state at that moment. */
export interface InsertedDelivery {
  id: string;
  status: DeliveryStatus;
}

/** Deliveries of the tenant finished or waiting in the last 24 hours, for the hub overview. */
export async function deliveryCounts24h(
  db: Kysely<DB>,
  scope: TenantScope,
  now: Date,
): Promise<{ delivered: number; failed: number; pending: number }> {
  const since = new Date(now.getTime() - 24 * 60 * 60 * 1000);
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => [
      eb.fn.countAll<string>().filterWhere('status', '=', 'delivered').as('delivered'),
      eb.fn.countAll<string>().filterWhere('status', '=', 'failed').as('failed'),
      eb.fn
        .countAll<string>()
        .filterWhere('status', 'in', ['pending', 'retrying', 'delivering'])
        .as('pending'),
    ])
    .where('tenant_id', '=', scope.tenantId)
    .where('updated_at', '>=', since)
    .executeTakeFirstOrThrow();
  return { delivered: Number(row.delivered), failed: Number(row.failed), pending: Number(row.pending) };
}

export function findDeliveryRow(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  deliveryId: string,
): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('connection_id', '=', connectionId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}
