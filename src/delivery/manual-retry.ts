import type { TenantScope } from '../access/scope.js';
import { connectionOr404, type ConnectionDeps } from '../connections/connections.js';
import { isIdOf } from '../crypto/ids.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { requeueFailed } from './control.js';
import { findDeliveryRow } from './store.js';

/**
 * Manual retry (docs/api/events.md): a failed delivery of an active connection is due again at once; it gets
 * one more attempt (and the retries left in the schedule after its attempt count, none when spent).
 * The connection is locked for share meanwhile, so a pause or revoke either came first (409) or
 * finds the delivery pending and stops it.
 */
export async function retryDelivery(
  deps: ConnectionDeps,
  scope: TenantScope,
  connectionId: string,
  deliveryId: string,
): Promise<void> {
  const { db } = deps.ctx;
  await db.transaction().execute(async (trx) => {
    const connection = await connectionOr404(trx, scope, connectionId, { forShare: true });
    const delivery = isIdOf('dlv', deliveryId)
      ? await findDeliveryRow(trx, scope, connectionId, deliveryId)
      : undefined;
    if (!delivery) throw notFound('delivery');
    if (connection.status !== 'active') {
      throw new HttpProblem(
        'conflict',
        connection.status === 'paused'
          ? 'The connection is paused; resume it first.'
          : 'The connection is disabled; nothing is sent to it any more.',
      );
    }
    if (!(await requeueFailed(trx, scope, connectionId, deliveryId, deps.ctx.now()))) {
      throw new HttpProblem(
        'conflict',
        `Only failed deliveries can be retried; this one is ${delivery.status}.`,
      );
    }
  });
}
