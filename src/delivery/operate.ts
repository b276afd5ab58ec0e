import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import { connectionOr404, type ConnectionDeps, type ConnectionRow } from '../connections/connections.js';
import { newId } from '../crypto/ids.js';
import type { DeliveryStatus } from '../db/schema.js';
import { fieldProblem, HttpProblem } from '../http/problem.js';
import { timeField } from '../http/time.js';
import { errorFields } from '../logger.js';
import { MAX_RECOVERED, recoverRange } from './control.js';
import { newDelivery } from './fan-out.js';
import { payloadOf } from './publish.js';
import { insertEventGroup, type DeliveryRow, type EventRow } from './store.js';
import { countPublished } from './usage.js';

/** How far back recover reaches (docs/api/events.md). */
export const RECOVER_WINDOW_DAYS = 14;
const DAY_MS = 86_400_000;

export const TEST_EVENT_TYPE = 'hubgate.test';
const TEST_EVENT_DATA = { message: 'A test event from hubgate: if you can read this, deliveries reach you.' };

function notActive(row: ConnectionRow, doing: string): HttpProblem {
  const why = row.status === 'paused' ? 'is paused; resume it first' : 'is disabled (revoked)';
  return new HttpProblem('conflict', `The connection ${why}; ${doing} needs an active connection.`);
}

/**
 * Recover (docs/api/events.md): the connection's deliveries created in [since, until) with one of
 * `statuses` go back to `pending`, oldest first, same IDs, attempts kept; at most MAX_RECOVERED.
 * The connection is locked for share, so a pause or revoke either came first (409) or stops them.
 */
export async function recoverDeliveries(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  connectionId: string,
  body: { since: string; until?: string; statuses?: DeliveryStatus[] },
): Promise<{ queued: number }> {
  const since = timeField(body.since, 'since');
  const until = body.until === undefined ? origin.at : timeField(body.until, 'until');
  if (origin.at.getTime() - since.getTime() > RECOVER_WINDOW_DAYS * DAY_MS) {
    throw fieldProblem('since', `is more than ${RECOVER_WINDOW_DAYS} days ago`);
  }
  if (since.getTime() > until.getTime()) throw fieldProblem('since', 'is after until');
  const statuses: DeliveryStatus[] = [...new Set(body.statuses ?? ['failed' as const])];
  return deps.ctx.db.transaction().execute(async (trx) => {
    const row = await connectionOr404(trx, scope, connectionId, { forShare: true });
    if (row.status !== 'active') throw notActive(row, 'recovering deliveries');
    const queued = await recoverRange(trx, scope, connectionId, origin.at, { since, until, statuses });
    await recordAudit(trx, origin, {
      action: 'connection.recover',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: connectionId,
      metadata: {
        since: since.toISOString(),
        until: until.toISOString(),
        statuses,
        queued,
        limited: queued === MAX_RECOVERED,
      },
    });
    return { queued };
  });
}

/**
 * A test event (docs/api/events.md): a real event, signed and sent like any other, to this connection
 * alone whatever its `eventTypes`, shown in its log with `test: true`. Written while the connection
 * is locked for share, so it is sendable only if the connection was active when it was written.
 */
export async function sendTestEvent(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  connectionId: string,
  body: { type?: string; data?: Record<string, unknown> },
): Promise<{ eventId: string; deliveryId: string }> {
  const type = body.type ?? TEST_EVENT_TYPE;
  const payload = payloadOf(body.data ?? TEST_EVENT_DATA);
  // A test event is an event of the day like any (docs/api/quotas.md): over `eventsPerDay` it is
  // refused with the same 429, and given back if it is not written.
  const reservation = await deps.ctx.quotas.reserveEvents(scope.tenantId, 1, origin.at);
  let sent: Awaited<ReturnType<typeof writeTestEvent>>;
  try {
    sent = await writeTestEvent(deps, scope, origin, connectionId, type, payload);
  } catch (error) {
    await reservation
      .giveBack(1)
      .catch((failed: unknown) => deps.ctx.log.warn(errorFields(failed), 'quota reservation not given back'));
    throw error;
  }
  // A test event is an event (in the log, delivered and attempted like any): usage counts it.
  countPublished(deps.ctx, sent.written.events, sent.written.inserted);
  return sent.answer;
}

/** sendTestEvent's transaction: the connection checked and locked, the event and its one delivery written. */
async function writeTestEvent(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  connectionId: string,
  type: string,
  payload: string,
) {
  return deps.ctx.db.transaction().execute(async (trx) => {
    const row = await connectionOr404(trx, scope, connectionId, { forShare: true });
    // An OAuth2 connection calls its provider's API (docs/api/oauth.md): no event is ever delivered to it.
    if ((await deps.catalog.resolve(row.connector_key))?.authorization) {
      throw new HttpProblem(
        'conflict',
        'A test event cannot be sent to an OAuth2 connection: it calls its provider’s API through the ' +
          'credential proxy, and no event is delivered to it.',
      );
    }
    if (row.status !== 'active') throw notActive(row, 'a test event');
    if (row.credentials_sealed === null || !deps.catalog.isEnabled(row.connector_key)) {
      throw new HttpProblem(
        'conflict',
        'Delivery is not enabled on this connection: bind its credentials first.',
      );
    }
    const { event, delivery } = testRows(deps, scope, origin.at, type, payload, connectionId);
    const events = [{ scope, event, deliveries: [delivery] }];
    const inserted = await insertEventGroup(trx, events);
    await recordAudit(trx, origin, {
      action: 'connection.test',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: connectionId,
      metadata: { eventId: event.id, deliveryId: delivery.id, type },
    });
    return { answer: { eventId: event.id, deliveryId: delivery.id }, written: { events, inserted } };
  });
}

function testRows(
  deps: ConnectionDeps,
  scope: TenantScope,
  at: Date,
  type: string,
  payload: string,
  connectionId: string,
): { event: EventRow; delivery: DeliveryRow } {
  const eventId = newId('evt');
  const event: EventRow = {
    id: eventId,
    tenant_id: scope.tenantId,
    type,
    payload_sealed: deps.ctx.keyring.seal('event-payload', payload, eventId),
    delivery_count: 1,
    created_at: at,
    trace_context: null,
  };
  const delivery = newDelivery(scope, eventId, connectionId, at, true);
  return { event, delivery };
}
