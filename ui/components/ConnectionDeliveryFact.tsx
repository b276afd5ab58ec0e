import type { Connection } from '../api-types.js';
import { withQuery } from '../api.js';
import { StatusBadge } from './StatusBadge.js';

/** Whether the connection delivers and, when it could but has no credentials, where to bind them. */
export function ConnectionDeliveryFact({
  connection,
  onBind,
}: {
  connection: Connection;
  onBind?: () => void;
}) {
  const active = connection.status === 'active';
  if (connection.status === 'paused') {
    return (
      <div>
        <dt>Delivery</dt>
        <dd>
          <span class="muted">Paused: nothing is sent until it is resumed</span>
        </dd>
      </div>
    );
  }
  return (
    <div>
      <dt>Delivery</dt>
      <dd>
        {connection.deliveryEnabled ? (
          <StatusBadge status="delivered" label="Enabled" />
        ) : active ? (
          <>
            <StatusBadge status="expired" label="Needs credentials" />{' '}
            {onBind ? (
              <button type="button" class="link-button" onClick={onBind}>
                Bind credentials
              </button>
            ) : (
              <a href={withQuery('/connections', { bind: connection.id })}>Bind credentials</a>
            )}
          </>
        ) : (
          <span class="muted">Off: nothing is sent to a revoked connection</span>
        )}
      </dd>
    </div>
  );
}
