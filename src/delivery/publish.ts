import { createHash } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { eventTypeMatches } from '../connections/event-types.js';
import { newId } from '../crypto/ids.js';
import type { ConnectionsTable, DB } from '../db/schema.js';
import { nestingDepth } from '../http/json-body.js';
import { fieldProblem, HttpProblem } from '../http/problem.js';
import type { EventWriter } from './group-commit.js';
import { IDEMPOTENCY_WINDOW_MS } from './retention.js';
import {
  findIdempotencyKey,
  insertEventGroup,
  insertIdempotencyKey,
  releaseIdempotencyKey,
  type DeliveryRow,
  type EventRow,
} from './store.js';

export const MAX_DATA_BYTES = 256 * 1024;
/** Contract §14; `data` itself is the first level. */
const MAX_DATA_DEPTH = 64;

export interface PublishedEvent {
  id: string;
  type: string;
  createdAt: string;
  deliveries: number;
}

export const answerOf = (row: EventRow): PublishedEvent => ({
  id: row.id,
  type: row.type,
  createdAt: new Date(row.created_at).toISOString(),
  deliveries: row.delivery_count,
});

function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === '23505';
}

/** The event's data as stored, after the checks of contract §7 and §14 (depth, then size). */
export function payloadOf(data: Record<string, unknown>): string {
  if (nestingDepth(data) > MAX_DATA_DEPTH) {
    throw fieldProblem('data', `nests deeper than ${MAX_DATA_DEPTH} levels`);
  }
  const payload = JSON.stringify(data);
  if (Buffer.byteLength(payload) > MAX_DATA_BYTES) {
    throw new HttpProblem('payload_too_large', 'data is larger than 256 KiB.');
  }
  return payload;
}

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
 * paused one gets its deliveries recorded as `skipped` (contract §15); which status each delivery
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
  };
}

/** The event's row and one pending delivery per connection whose connector and `eventTypes` take its type. */
export function eventRows(
  deps: ConnectionDeps,
  scope: TenantScope,
  at: Date,
  type: string,
  payload: string,
  connections: readonly TargetRow[],
): { event: EventRow; deliveries: DeliveryRow[] } {
  const { ctx, catalog } = deps;
  const targets = connections.filter((connection) => {
    const definition = catalog.get(connection.connector_key);
    if (!definition || !catalog.isEnabled(definition.key)) return false;
    const patterns = connection.config.eventTypes as string[] | undefined;
    return eventTypeMatches(definition.acceptedEventTypes, type) && eventTypeMatches(patterns, type);
  });
  const id = newId('evt');
  const event: EventRow = {
    id,
    tenant_id: scope.tenantId,
    type,
    payload_sealed: ctx.keyring.seal('event-payload', payload, id),
    delivery_count: targets.length,
    created_at: at,
  };
  const deliveries = targets.map((connection) => newDelivery(scope, id, connection.id, at));
  return { event, deliveries };
}

/**
 * Records an event and one pending delivery per active, credential-bound connection of the tenant
 * whose connector and `eventTypes` take its type, in one transaction (contract §7). With an
 * Idempotency-Key, the same key and body within 24 h answer the first result and fan out nothing.
 * Without one, the event goes through the group commit (`writer`) with other requests' events.
 */
export async function publishEvent(
  deps: ConnectionDeps,
  writer: EventWriter,
  scope: TenantScope,
  origin: AuditOrigin,
  body: { type: string; data: Record<string, unknown> },
  idempotencyKey: string | undefined,
): Promise<PublishedEvent> {
  const payload = payloadOf(body.data);
  if (!idempotencyKey)
    return answerOf(await writer.write({ scope, at: origin.at, type: body.type, payload }));
  const requestHash = createHash('sha256')
    .update(JSON.stringify([body.type, payload]))
    .digest('hex');
  try {
    return await publishOnce(deps, scope, origin, body.type, payload, idempotencyKey, requestHash);
  } catch (error) {
    // Two requests with one new key at once: the loser answers what the winner stored.
    if (isUniqueViolation(error)) {
      return publishOnce(deps, scope, origin, body.type, payload, idempotencyKey, requestHash);
    }
    throw error;
  }
}

async function publishOnce(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  type: string,
  payload: string,
  idempotencyKey: string,
  requestHash: string,
): Promise<PublishedEvent> {
  // Reading the earlier event and writing the new one must be one transaction.
  return deps.ctx.db.transaction().execute(async (trx) => {
    const earlier = await findIdempotencyKey(trx, scope, idempotencyKey);
    if (earlier && origin.at.getTime() - new Date(earlier.created_at).getTime() < IDEMPOTENCY_WINDOW_MS) {
      if (earlier.request_hash !== requestHash) {
        throw new HttpProblem('conflict', 'This Idempotency-Key was used with a different body.');
      }
      return {
        id: earlier.event_id,
        type: earlier.event_type,
        createdAt: new Date(earlier.created_at).toISOString(),
        deliveries: earlier.delivery_count,
      };
    }
    if (earlier) await releaseIdempotencyKey(trx, scope, idempotencyKey);
    const { event, deliveries } = eventRows(
      deps,
      scope,
      origin.at,
      type,
      payload,
      await activeConnections(trx, scope),
    );
    // The key first: a request that lost the race to it fails before writing anything else.
    await insertIdempotencyKey(trx, scope, {
      key: idempotencyKey,
      request_hash: requestHash,
      event_id: event.id,
      event_type: event.type,
      delivery_count: event.delivery_count,
      created_at: event.created_at,
    });
    await insertEventGroup(trx, [{ scope, event, deliveries }]);
    return answerOf(event);
  });
}
