import type { Kysely, Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { eventTypeMatches } from '../connections/event-types.js';
import { filterAccepts } from '../connections/filter-match.js';
import { newId } from '../crypto/ids.js';
import type { ConnectionsTable, DB } from '../db/schema.js';
import type { FilteredEvent } from './filtered-store.js';
import { orderingKeyFor } from './ordering.js';
import type { DeliveryRow, EventRow } from './store.js';

// An event's fan-out, shared by a publish with an idempotency key (publish.ts) and the group commit
// of those without (group-commit.ts): which connections are candidates, and the event's row with one
// delivery row for each connection that takes its type.

export type TargetRow = Pick<
  Selectable<ConnectionsTable>,
  | 'id'
  | 'status'
  | 'connector_key'
  | 'config'
  | 'credentials_sealed'
  | 'previous_credentials_sealed'
  | 'previous_valid_until'
>;
// What a fan-out reads of a connection: what matching needs, and what sending needs (direct dispatch).
const TARGET_COLUMNS = [
  'id',
  'status',
  'connector_key',
  'config',
  'credentials_sealed',
  'previous_credentials_sealed',
  'previous_valid_until',
] as const;

/**
 * The tenant's active or paused, credential-bound connections: the candidates for a fan-out. A
 * paused one gets its deliveries recorded as `skipped` (docs/api/connections.md); which status each delivery
 * gets is decided by the insert, which reads the connection again under a lock (store.ts).
 */
export function activeConnections(db: Kysely<DB>, scope: TenantScope): Promise<TargetRow[]> {
  return db
    .selectFrom('connections')
    .select(TARGET_COLUMNS)
    .where('tenant_id', '=', scope.tenantId)
    .where('status', 'in', ['active', 'paused'])
    .where('credentials_sealed', 'is not', null)
    .execute();
}

/** The candidate connections of several tenants at once (a group commit's read). */
export async function activeConnectionsOf(
  db: Kysely<DB>,
  scopes: readonly TenantScope[],
): Promise<Map<string, TargetRow[]>> {
  const byTenant = new Map<string, TargetRow[]>();
  const tenantIds = [...new Set(scopes.map((s) => s.tenantId))];
  if (tenantIds.length === 0) return byTenant;
  const rows = await db
    .selectFrom('connections')
    .select(['tenant_id', ...TARGET_COLUMNS])
    .where('tenant_id', 'in', tenantIds)
    .where('status', 'in', ['active', 'paused'])
    .where('credentials_sealed', 'is not', null)
    .execute();
  for (const { tenant_id, ...row } of rows) {
    const list = byTenant.get(tenant_id) ?? [];
    list.push(row);
    byTenant.set(tenant_id, list);
  }
  return byTenant;
}

/** A new delivery of an event to a connection, due at once (its status is the insert's to decide). */
export function newDelivery(
  scope: TenantScope,
  eventId: string,
  connectionId: string,
  at: Date,
  test = false,
  // The event's `orderingKey` when the connection orders by it (ordering.ts); else null.
  orderingKey: string | null = null,
): DeliveryRow {
  return {
    id: newId('dlv'),
    tenant_id: scope.tenantId,
    event_id: eventId,
    connection_id: connectionId,
    status: 'pending',
    attempt_count: 0,
    next_attempt_at: at,
    lease_until: null,
    leased_by: null,
    created_at: at,
    updated_at: at,
    delivered_at: null,
    test,
    last_response_status: null,
    ordering_key: orderingKey,
    waiting_for: null,
    // Its place in publish order is taken by the insert (store.ts).
    seq: null,
  };
}

/**
 * The body a webhook or HTTP receiver gets (docs/api/events.md), which payload filters look into:
 * parsed on the first connection with a filter, once per event, and never when none has one.
 */
function deliveredBody(id: string, type: string, at: Date, payload: string): () => unknown {
  let body: unknown;
  return () => (body ??= { id, type, timestamp: at.toISOString(), data: JSON.parse(payload) as unknown });
}

/**
 * The event's row and one pending delivery per connection whose connector and `eventTypes` take its
 * type and whose `filter` (docs/api/connections.md) its body passes; `filtered` names the connections
 * that took its type but whose filter dropped it (recorded by filtered-store.ts).
 */
export function eventRows(
  deps: ConnectionDeps,
  scope: TenantScope,
  at: Date,
  type: string,
  payload: string,
  connections: readonly TargetRow[],
  // The publish span's `traceparent` (tracing on), which the attempts link to; else null.
  traceContext: string | null = null,
  // The event's `orderingKey` (docs/api/events.md, Ordering), used by `per-key` connections only.
  orderingKey: string | null = null,
): { event: EventRow; deliveries: DeliveryRow[]; filtered: string[] } {
  const { ctx, catalog } = deps;
  const id = newId('evt');
  const body = deliveredBody(id, type, at, payload);
  const filtered: string[] = [];
  const targets = connections.filter((connection) => {
    const definition = catalog.get(connection.connector_key);
    if (!definition || !catalog.isEnabled(definition.key)) return false;
    const patterns = connection.config.eventTypes as string[] | undefined;
    if (!eventTypeMatches(definition.acceptedEventTypes, type) || !eventTypeMatches(patterns, type)) {
      return false;
    }
    if (filterAccepts(connection.config.filter, body)) return true;
    filtered.push(connection.id);
    return false;
  });
  const event: EventRow = {
    id,
    tenant_id: scope.tenantId,
    type,
    payload_sealed: ctx.keyring.seal('event-payload', payload, id),
    delivery_count: targets.length,
    created_at: at,
    trace_context: traceContext,
  };
  const deliveries = targets.map((connection) =>
    newDelivery(scope, id, connection.id, at, false, orderingKeyFor(connection.config, orderingKey)),
  );
  return { event, deliveries, filtered };
}

/** What the filters of these events' candidate connections dropped, for recordFiltered. */
export function filteredOf(
  events: ReadonlyArray<{ event: EventRow; filtered: readonly string[] }>,
): FilteredEvent[] {
  return events.flatMap(({ event, filtered }) =>
    filtered.map((connectionId) => ({
      tenantId: event.tenant_id,
      connectionId,
      eventId: event.id,
      eventType: event.type,
      at: new Date(event.created_at),
    })),
  );
}
