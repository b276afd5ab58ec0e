import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DB, DeliveriesTable, DeliveryAttemptsTable, DeliveryStatus } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';

/** A delivery as the event log shows it, with its event's type. */
export type LogRow = Pick<
  Selectable<DeliveriesTable>,
  | 'id'
  | 'event_id'
  | 'status'
  | 'attempt_count'
  | 'created_at'
  | 'updated_at'
  | 'next_attempt_at'
  | 'delivered_at'
  | 'test'
  | 'waiting_for'
  | 'ordering_key'
> & { event_type: string };

export type LogAttemptRow = Omit<Selectable<DeliveryAttemptsTable>, 'delivery_created_at'>;

/** The log's filters (docs/api/events.md) as the query applies them; each is optional. */
export interface LogFilters {
  statuses?: readonly DeliveryStatus[];
  /** `eventType` as a LIKE pattern, `\` escaping `%` and `_`. */
  eventTypeLike?: string;
  /** The event of `eventId`, as findEventTime found it: a delivery has its event's `created_at`. */
  event?: { id: string; createdAt: Date };
  /** Created at or after. */
  since?: Date;
  /** Created before. */
  until?: Date;
  test?: boolean;
  /** The last attempt's answer status, bounds included, within one class (`5xx`: 500–599; `404`: 404–404). */
  responseStatus?: { min: number; max: number };
}

const LOG_COLUMNS = [
  'deliveries.id',
  'deliveries.event_id',
  'deliveries.status',
  'deliveries.attempt_count',
  'deliveries.created_at',
  'deliveries.updated_at',
  'deliveries.next_attempt_at',
  'deliveries.delivered_at',
  'deliveries.test',
  'deliveries.waiting_for',
  'deliveries.ordering_key',
] as const;

/**
 * The delivery's event's type, read for each row of the page by the event's key. Not a join:
 * PostgreSQL takes the two join columns (ID and time) for independent, estimates the join of a
 * connection's deliveries with their events at one row, and plans a hash join of all of them and a
 * sort (0.5 s for 200,000 deliveries, bench/event-log.ts); read per row, the page's index scan
 * stops after `limit` rows.
 */
const EVENT_TYPE = sql<string>`(select e.type from events e
  where e.id = deliveries.event_id and e.created_at = deliveries.created_at)`;

/** The deliveries of a connection with their events' types, in the scope's tenant. */
function logQuery(db: Kysely<DB>, scope: TenantScope, connectionId: string) {
  return db
    .selectFrom('deliveries')
    .select(LOG_COLUMNS)
    .select(EVENT_TYPE.as('event_type'))
    .where('deliveries.tenant_id', '=', scope.tenantId)
    .where('deliveries.connection_id', '=', connectionId);
}

/**
 * When the scope's event with this ID was published, or undefined. The events' key is (id,
 * created_at): this probes each day's partition once, and the deliveries of the event are then read
 * from the one partition and index range of that moment.
 */
export async function findEventTime(
  db: Kysely<DB>,
  scope: TenantScope,
  eventId: string,
): Promise<Date | undefined> {
  const row = await db
    .selectFrom('events')
    .select('created_at')
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', eventId)
    .executeTakeFirst();
  return row ? new Date(row.created_at) : undefined;
}

/**
 * One page of a connection's log, newest first, narrowed by `filters` (`limit + 1` rows).
 *
 * The filters' selectivity varies by orders of magnitude with their values (a status held by 40
 * deliveries or by 190,000; an event type of 20 events or of 140,000), so the statement is planned
 * for its values every time: a generic plan, which PostgreSQL may settle on for a prepared statement
 * after five runs, would serve one value well and another in seconds. JIT is off for it: a plan for
 * a rare value is costed high enough to be compiled, which took 10 s where running it took 1 s
 * (bench/event-log.ts, docs/benchmarks.md).
 */
export function listLogRows(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  filters: LogFilters,
  limit: number,
  after: Cursor | undefined,
): Promise<LogRow[]> {
  return db.transaction().execute(async (trx) => {
    await sql`select set_config('plan_cache_mode', 'force_custom_plan', true), set_config('jit', 'off', true)`.execute(
      trx,
    );
    return logPageQuery(trx, scope, connectionId, filters, limit, after).execute();
  });
}

/**
 * listLogRows' statement. Each filter is written so that an index of migration 0013 serves it in
 * the page's order: status (connection, status, time), test deliveries (a partial index of them),
 * a failing answer's class (connection, class, time, for answers of 300 and up: 2xx is most of a
 * log and found at once in time order), the event type (events by tenant, type and time, in the C
 * collation so a pattern's literal start is an index range), an event's deliveries (the time of the
 * event). Classes and the `test` value are literals, so that the planner can use the partial indexes.
 */
export function logPageQuery(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  filters: LogFilters,
  limit: number,
  after: Cursor | undefined,
) {
  let query = logQuery(db, scope, connectionId);
  const { statuses, eventTypeLike, event, since, until, test, responseStatus } = filters;
  if (statuses) query = query.where('deliveries.status', 'in', statuses);
  if (eventTypeLike !== undefined) {
    query = query.where(sql<boolean>`(deliveries.event_id, deliveries.created_at) in (
      select e.id, e.created_at from events e
      where e.tenant_id = ${scope.tenantId} and e.type collate "C" like ${eventTypeLike} escape '\\')`);
  }
  if (event) {
    query = query
      .where('deliveries.created_at', '=', event.createdAt)
      .where('deliveries.event_id', '=', event.id);
  }
  if (since) query = query.where('deliveries.created_at', '>=', since);
  if (until) query = query.where('deliveries.created_at', '<', until);
  if (test !== undefined)
    query = query.where(test ? sql<boolean>`deliveries.test` : sql<boolean>`not deliveries.test`);
  if (responseStatus) query = query.where(answerStatus(responseStatus));
  return newestFirstPage(query, limit, after, 'deliveries');
}

const FAILING_ANSWER = 300;

function answerStatus({ min, max }: { min: number; max: number }) {
  const column = sql.ref('deliveries.last_response_status');
  const range = sql<boolean>`${column} >= ${min} and ${column} <= ${max}`;
  if (min < FAILING_ANSWER) return range;
  const statusClass = sql.lit(Math.floor(min / 100));
  return sql<boolean>`${column} / 100 = ${statusClass} and ${column} >= ${sql.lit(FAILING_ANSWER)} and ${range}`;
}

/** One delivery of the connection with its event's sealed payload, or undefined. */
export function findLogRow(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  deliveryId: string,
): Promise<(LogRow & { payload_sealed: string }) | undefined> {
  const payload = sql<string>`(select e.payload_sealed from events e
    where e.id = deliveries.event_id and e.created_at = deliveries.created_at)`;
  return logQuery(db, scope, connectionId)
    .select(payload.as('payload_sealed'))
    .where('deliveries.id', '=', deliveryId)
    .executeTakeFirst();
}

/** The attempts of these deliveries, in order, by delivery ID; their `created_at` picks the partitions. */
export async function logAttemptsOf(
  db: Kysely<DB>,
  deliveries: ReadonlyArray<Pick<LogRow, 'id' | 'created_at'>>,
): Promise<Map<string, LogAttemptRow[]>> {
  const byDelivery = new Map<string, LogAttemptRow[]>();
  if (deliveries.length === 0) return byDelivery;
  const times = [...new Set(deliveries.map((d) => new Date(d.created_at).getTime()))].map((t) => new Date(t));
  const rows = await db
    .selectFrom('delivery_attempts')
    .select([
      'delivery_id',
      'number',
      'started_at',
      'duration_ms',
      'remote_address',
      'response_status',
      'error',
      'error_detail',
      'request',
      'response',
    ])
    .where(
      'delivery_id',
      'in',
      deliveries.map((d) => d.id),
    )
    .where('delivery_created_at', 'in', times)
    .orderBy('delivery_id')
    .orderBy('number')
    .execute();
  for (const row of rows) {
    const list = byDelivery.get(row.delivery_id) ?? [];
    list.push(row);
    byDelivery.set(row.delivery_id, list);
  }
  return byDelivery;
}
