import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import type { PausedReason } from '../db/schema.js';
import { HttpProblem, notFound } from '../http/problem.js';
import {
  connectionOr404,
  toConnection,
  type Connection,
  type ConnectionDeps,
  type DeliveryControl,
} from './connections.js';
import { updateConnectionRow } from './store.js';

// A connection's states (docs/api/connections.md): active ⇄ paused, and either → disabled (revoked, final).
// Each change locks the connection's row for update and stops or restarts its deliveries in the
// same transaction; pause and revoke then wait for the attempts in flight to end before answering,
// so nothing reaches the receiver after the answer.

/** The actor of a change the service makes by itself (automatic pause): no user, no key. */
export const systemOrigin = (at: Date): AuditOrigin => ({
  actorType: 'system',
  actorId: null,
  ip: null,
  requestId: null,
  at,
});

const disabledConflict = () =>
  new HttpProblem('conflict', 'The connection is disabled (revoked); nothing is sent to it any more.');

/** Active → disabled, once and for good; revoking again answers the same record (idempotent). */
export async function revokeConnection(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
  control: DeliveryControl,
): Promise<Connection> {
  const { db } = deps.ctx;
  const { connection, inFlight } = await db.transaction().execute(async (trx) => {
    const row = await connectionOr404(trx, scope, id, { forUpdate: true });
    if (row.status === 'disabled') return { connection: toConnection(row), inFlight: [] };
    const updated = await updateConnectionRow(trx, scope, id, {
      status: 'disabled',
      revoked_at: origin.at,
      paused_at: null,
      paused_reason: null,
    });
    if (!updated) throw notFound('connection');
    const { closed, inFlight } = await control.close(trx, scope, id, origin.at, 'cancelled');
    await recordAudit(trx, origin, {
      action: 'connection.revoke',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: id,
      metadata: {
        connectorKey: row.connector_key,
        displayName: row.display_name,
        cancelledDeliveries: closed,
      },
    });
    return { connection: toConnection(updated), inFlight };
  });
  await control.drain(db, inFlight);
  return connection;
}

/**
 * Active → paused: open deliveries become `skipped`, and so will every event published meanwhile.
 * Pausing a paused connection answers it as it is (its first reason stays). `drain` is false for
 * the automatic pause, which has nobody waiting for an answer.
 */
export async function pauseConnection(
  { db, usage }: Pick<AppContext, 'db' | 'usage'>,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
  reason: PausedReason,
  control: Pick<DeliveryControl, 'close' | 'drain'> & { drainAfter?: boolean },
): Promise<{ connection: Connection; paused: boolean }> {
  const { connection, inFlight, paused, closed } = await db.transaction().execute(async (trx) => {
    const row = await connectionOr404(trx, scope, id, { forUpdate: true });
    if (row.status === 'disabled') throw disabledConflict();
    if (row.status === 'paused') {
      // Already paused (perhaps by itself, which does not wait): this answer too comes only once
      // nothing is in flight any more.
      const { closed, inFlight } = await control.close(trx, scope, id, origin.at, 'skipped');
      return { connection: toConnection(row), inFlight, paused: false, closed };
    }
    const updated = await updateConnectionRow(trx, scope, id, {
      status: 'paused',
      paused_at: origin.at,
      paused_reason: reason,
    });
    if (!updated) throw notFound('connection');
    const { closed, inFlight } = await control.close(trx, scope, id, origin.at, 'skipped');
    await recordAudit(trx, origin, {
      action: 'connection.pause',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: id,
      metadata: { reason, displayName: row.display_name, skippedDeliveries: closed },
    });
    return { connection: toConnection(updated), inFlight, paused: true, closed };
  });
  // Committed: each delivery the pause skipped counts in the tenant's usage (docs/api/usage.md).
  usage.count(scope.tenantId, 'skipped', closed, origin.at);
  if (control.drainAfter !== false) await control.drain(db, inFlight);
  return { connection, paused };
}

/** Paused → active, replaying the skipped deliveries when asked; an active connection is a no-op. */
export async function resumeConnection(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
  options: { replaySkipped: boolean },
  control: DeliveryControl,
): Promise<{ connection: Connection; replayed: number }> {
  return deps.ctx.db.transaction().execute(async (trx) => {
    const row = await connectionOr404(trx, scope, id, { forUpdate: true });
    if (row.status === 'disabled') throw disabledConflict();
    if (row.status === 'active') return { connection: toConnection(row), replayed: 0 };
    const updated = await updateConnectionRow(trx, scope, id, {
      status: 'active',
      paused_at: null,
      paused_reason: null,
      failure_streak: 0,
      failure_streak_since: null,
    });
    if (!updated) throw notFound('connection');
    const replayed = options.replaySkipped ? await control.replaySkipped(trx, scope, id, origin.at) : 0;
    await recordAudit(trx, origin, {
      action: 'connection.resume',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: id,
      metadata: { displayName: row.display_name, pausedReason: row.paused_reason, replayed },
    });
    return { connection: toConnection(updated), replayed };
  });
}
