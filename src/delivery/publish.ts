import { createHash } from 'node:crypto';
import { type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { MAX_JSON_DEPTH, nestingDepth, nestingProblem } from '../http/json-body.js';
import { HttpProblem } from '../http/problem.js';
import { activeConnections, eventRows } from './fan-out.js';
import type { EventWriter } from './group-commit.js';
import { IDEMPOTENCY_WINDOW_MS } from './retention.js';
import {
  findIdempotencyKey,
  insertEventGroup,
  insertIdempotencyKey,
  releaseIdempotencyKey,
  type EventRow,
} from './store.js';

// The delivery row of a test event is made as a published one's (operate.ts).

export const MAX_DATA_BYTES = 256 * 1024;

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

/** The event's data as stored, after the checks of docs/api/events.md and docs/api/limits.md (depth, then size). */
export function payloadOf(data: Record<string, unknown>): string {
  // `data` itself is the first level.
  if (nestingDepth(data) > MAX_JSON_DEPTH) throw nestingProblem('data');
  const payload = JSON.stringify(data);
  if (Buffer.byteLength(payload) > MAX_DATA_BYTES) {
    throw new HttpProblem('payload_too_large', 'data is larger than 256 KiB.');
  }
  return payload;
}

/**
 * Records an event and one pending delivery per active, credential-bound connection of the tenant
 * whose connector and `eventTypes` take its type, in one transaction (docs/api/events.md). With an
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
