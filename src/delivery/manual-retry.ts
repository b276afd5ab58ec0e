import type { TenantScope } from '../access/scope.js';
import { connectionOr404, type ConnectionDeps } from '../connections/connections.js';
import { isIdOf } from '../crypto/ids.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { findDeliveryRow, requeueFailedDelivery } from './store.js';

/**
 * Manual retry (contract §7): a failed delivery of an active connection is due again at once; it gets
 * one more attempt (and the retries left in the schedule after its attempt count, none when spent).
 */
export async function retryDelivery(
  deps: ConnectionDeps,
  scope: TenantScope,
  connectionId: string,
  deliveryId: string,
): Promise<void> {
  const { db } = deps.ctx;
  const connection = await connectionOr404(db, scope, connectionId);
  const delivery = isIdOf('dlv', deliveryId)
    ? await findDeliveryRow(db, scope, connectionId, deliveryId)
    : undefined;
  if (!delivery) throw notFound('delivery');
  if (connection.status !== 'active') {
    throw new HttpProblem('conflict', 'The connection is disabled; nothing is sent to it any more.');
  }
  const requeued = await requeueFailedDelivery(db, scope, connectionId, deliveryId, deps.ctx.now());
  if (!requeued)
    throw new HttpProblem(
      'conflict',
      `Only failed deliveries can be retried; this one is ${delivery.status}.`,
    );
}
