import type { Kysely, Selectable } from 'kysely';
import type {
  DB,
  DeliveriesTable,
  DeliveryAttemptsTable,
  DeliveryStatus,
  EventIdempotencyKeysTable,
  EventsTable,
} from '../db/schema.js';
import { type Cursor, newestFirstPage } from '../http/pagination.js';
import type { TenantScope } from '../tenants/scope.js';

export type EventRow = Selectable<EventsTable>;
export type DeliveryRow = Selectable<DeliveriesTable>;
export type AttemptRow = Selectable<DeliveryAttemptsTable>;
export type IdempotencyKeyRow = Selectable<EventIdempotencyKeysTable>;

/**
 * Deliveries that can still be sent: what revocation cancels. A claimed one (`delivering`) is
 * cancelled too; its worker checks the claim right before sending and sends nothing.
 */
export const OPEN_STATUSES: DeliveryStatus[] = ['pending', 'retrying', 'delivering'];

export function findIdempotencyKey(
  db: Kysely<DB>,
  scope: TenantScope,
  key: string,
): Promise<IdempotencyKeyRow | undefined> {
  return db
    .selectFrom('event_idempotency_keys')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** An expired key may be used again: the old event keeps its deliveries but lets go of the key. */
export async function releaseIdempotencyKey(db: Kysely<DB>, scope: TenantScope, key: string): Promise<void> {
  await db
    .deleteFrom('event_idempotency_keys')
    .where('tenant_id', '=', scope.tenantId)
    .where('key', '=', key)
    .execute();
}

/** Fails with a unique violation when another request took the key first. */
export async function insertIdempotencyKey(
  db: Kysely<DB>,
  scope: TenantScope,
  row: Omit<IdempotencyKeyRow, 'tenant_id'>,
): Promise<void> {
  await db
    .insertInto('event_idempotency_keys')
    .values({ ...row, tenant_id: scope.tenantId })
    .execute();
}

// PostgreSQL takes at most 65,535 parameters in one statement; a group stays well under it.
const MAX_PARAMETERS = 30_000;
const EVENT_COLUMNS = 8;
const DELIVERY_COLUMNS = 12;

/** Events of any tenants, each with its scope and deliveries, as a publish writes them. */
export interface ScopedEvent {
  scope: TenantScope;
  event: EventRow;
  deliveries: DeliveryRow[];
}

/**
 * Events and their deliveries, as few statements as their size allows: each statement inserts some
 * events and all of their deliveries together, so an event is never visible without them (atomic
 * without a transaction's extra round trips). An event too large for one statement alone (thousands
 * of connections) is written in a transaction.
 */
export async function insertEventGroup(db: Kysely<DB>, events: readonly ScopedEvent[]): Promise<void> {
  let chunk: ScopedEvent[] = [];
  let parameters = 0;
  const chunks: ScopedEvent[][] = [];
  for (const item of events) {
    const size = EVENT_COLUMNS + item.deliveries.length * DELIVERY_COLUMNS;
    if (chunk.length > 0 && parameters + size > MAX_PARAMETERS) {
      chunks.push(chunk);
      chunk = [];
      parameters = 0;
    }
    chunk.push(item);
    parameters += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  for (const part of chunks) {
    const size = part.reduce((n, e) => n + EVENT_COLUMNS + e.deliveries.length * DELIVERY_COLUMNS, 0);
    if (size <= MAX_PARAMETERS) await insertChunk(db, part);
    else await db.transaction().execute((trx) => insertLarge(trx, part[0]!));
  }
}

async function insertChunk(db: Kysely<DB>, part: readonly ScopedEvent[]): Promise<void> {
  const eventValues = part.map(({ scope, event }) => ({ ...event, tenant_id: scope.tenantId }));
  const deliveryValues = part.flatMap(({ scope, deliveries }) =>
    deliveries.map((d) => ({ ...d, tenant_id: scope.tenantId })),
  );
  if (deliveryValues.length === 0) {
    await db.insertInto('events').values(eventValues).execute();
    return;
  }
  await db
    .with('event', (qb) => qb.insertInto('events').values(eventValues))
    .insertInto('deliveries')
    .values(deliveryValues)
    .execute();
}

async function insertLarge(trx: Kysely<DB>, { scope, event, deliveries }: ScopedEvent): Promise<void> {
  await trx
    .insertInto('events')
    .values({ ...event, tenant_id: scope.tenantId })
    .execute();
  const perStatement = Math.floor(MAX_PARAMETERS / DELIVERY_COLUMNS);
  for (let i = 0; i < deliveries.length; i += perStatement) {
    await trx
      .insertInto('deliveries')
      .values(deliveries.slice(i, i + perStatement).map((d) => ({ ...d, tenant_id: scope.tenantId })))
      .execute();
  }
}

/** Revocation: nothing more is sent to the connection (contract §6). */
export async function cancelOpenDeliveries(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  at: Date,
): Promise<number> {
  const result = await db
    .updateTable('deliveries')
    .set({ status: 'cancelled', next_attempt_at: null, lease_until: null, leased_by: null, updated_at: at })
    .where('tenant_id', '=', scope.tenantId)
    .where('connection_id', '=', connectionId)
    .where('status', 'in', OPEN_STATUSES)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export function listDeliveryRows(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  status: DeliveryStatus | undefined,
  limit: number,
  after: Cursor | undefined,
): Promise<Array<DeliveryRow & { event_type: string }>> {
  let query = db
    .selectFrom('deliveries')
    .innerJoin('events', (join) =>
      join
        .onRef('events.id', '=', 'deliveries.event_id')
        .onRef('events.created_at', '=', 'deliveries.created_at'),
    )
    .selectAll('deliveries')
    .select('events.type as event_type')
    .where('deliveries.tenant_id', '=', scope.tenantId)
    .where('deliveries.connection_id', '=', connectionId);
  if (status) query = query.where('deliveries.status', '=', status);
  return newestFirstPage(query, limit, after, 'deliveries').execute();
}

/** The attempts of these deliveries, by delivery ID; their `created_at` picks the partitions to read. */
export async function attemptsOf(
  db: Kysely<DB>,
  deliveries: ReadonlyArray<Pick<DeliveryRow, 'id' | 'created_at'>>,
): Promise<Map<string, AttemptRow[]>> {
  const byDelivery = new Map<string, AttemptRow[]>();
  if (deliveries.length === 0) return byDelivery;
  const days = [...new Set(deliveries.map((d) => new Date(d.created_at).getTime()))].map((t) => new Date(t));
  const rows = await db
    .selectFrom('delivery_attempts')
    .selectAll()
    .where(
      'delivery_id',
      'in',
      deliveries.map((d) => d.id),
    )
    .where('delivery_created_at', 'in', days)
    .orderBy('number')
    .execute();
  for (const row of rows) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push(row);
    byDelivery.set(row.delivery_id, list);
  }
  return byDelivery;
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

/** A failed delivery of an active connection becomes due again now (manual retry). */
export async function requeueFailedDelivery(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  deliveryId: string,
  at: Date,
): Promise<DeliveryRow | undefined> {
  return db
    .updateTable('deliveries')
    .set({ status: 'pending', next_attempt_at: at, updated_at: at })
    .where('tenant_id', '=', scope.tenantId)
    .where('connection_id', '=', connectionId)
    .where('id', '=', deliveryId)
    .where('status', '=', 'failed')
    .returningAll()
    .executeTakeFirst();
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
