// A connection's status (docs/api/connections.md, docs/api/events.md) as the list and the connection's page
// say it: status words, whether it delivers (and why not), and the summary at the top of its page.
import { withQuery } from '../common/api.js';
import { Time } from '../common/format.js';
import { StatusBadge } from '../common/Notice.js';
import type { Connection, ConnectionStatus, Connector, PausedReason } from '../common/routes.js';
import { pageUrl } from '../common/viewer.js';
import type { Destination } from './destination.js';
import { BROKER_URL_LABEL, fieldLabel, OPTION_WORDS } from './fields.js';

export const CONNECTION_STATUS_WORDS: Record<ConnectionStatus, string> = {
  active: 'Active',
  paused: 'Paused',
  disabled: 'Revoked',
};

/** Whether a connection is of an OAuth2 connector (`oauth2:<provider>`), bound by authorizing. */
export const isOAuthConnection = (connection: Pick<Connection, 'connectorKey'>): boolean =>
  connection.connectorKey.startsWith('oauth2:');

/**
 * The connector with the settings that apply to its connections: an OAuth2 connection receives no events,
 * so of the settings every connector takes only the throttle applies (to calls through it); the payload
 * filter and the delivery order are not offered.
 */
export const withApplicableFields = (connector: Connector): Connector =>
  isOAuthConnection(connector)
    ? { ...connector, configFields: connector.configFields.filter((f) => f.name === 'maxPerSecond') }
    : connector;

type AuthorizationStatus = NonNullable<Connection['authorization']>['status'];

/** An OAuth2 connection's authorization as a badge: its tone and its short words (list and page). */
export const AUTHORIZATION_BADGE: Record<AuthorizationStatus, { status: string; label: string }> = {
  none: { status: 'expired', label: 'Not connected yet' },
  authorized: { status: 'delivered', label: 'Connected' },
  expired: { status: 'failed', label: 'Authorization expired' },
};

/** Why it is paused, short enough for a table cell. */
const SHORT_REASONS: Record<PausedReason, string> = {
  manual: 'Paused by hand',
  failing: 'Deliveries kept failing',
  gone: 'Receiver answered 410 Gone',
};

const pausedShort = (connection: Connection): string | null =>
  connection.status === 'paused' ? SHORT_REASONS[connection.pausedReason ?? 'manual'] : null;

/** Whether it delivers: only an active connection with credentials does; a paused one says why. */
export function ConnectionDeliveryState({ connection }: { connection: Connection }) {
  const paused = pausedShort(connection);
  if (paused) return <span class="connection-paused-reason">{paused}</span>;
  if (connection.status !== 'active') return null;
  if (connection.authorization) {
    const badge = AUTHORIZATION_BADGE[connection.authorization.status];
    return <StatusBadge status={badge.status} label={badge.label} />;
  }
  if (connection.deliveryEnabled) return <StatusBadge status="delivered" label="Delivery enabled" />;
  return <StatusBadge status="expired" label="Needs credentials" />;
}

/** Whether the connection delivers and, when it could but has no credentials, where to bind them. */
function ConnectionDeliveryFact({ connection, onBind }: { connection: Connection; onBind?: () => void }) {
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
              <a href={withQuery(pageUrl('/connections'), { bind: connection.id })}>Bind credentials</a>
            )}
          </>
        ) : (
          <span class="muted">Off: nothing is sent to a revoked connection</span>
        )}
      </dd>
    </div>
  );
}

/** What a connection is, above its event log: connector, status, delivery, its URL, event types. */
export function ConnectionSummary({
  connection,
  connector,
  destination = 'receiver',
  onBind,
}: {
  connection: Connection;
  connector: string;
  /** Whom it delivers to: a broker's URL is called so (destination.ts). */
  destination?: Destination;
  /** Binds credentials here, in a dialog; without it, "Bind credentials" leads to the list. */
  onBind?: () => void;
}) {
  const url = typeof connection.config.url === 'string' ? connection.config.url : null;
  const eventTypes = Array.isArray(connection.config.eventTypes)
    ? (connection.config.eventTypes as unknown[]).map(String)
    : null;
  const { filter } = connection.config;
  return (
    <section class="card" aria-label="Connection">
      <dl class="connection-facts">
        <div>
          <dt>Connector</dt>
          <dd>{connector}</dd>
        </div>
        <div>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={connection.status} label={CONNECTION_STATUS_WORDS[connection.status]} />
            {connection.revokedAt ? (
              <span class="muted">
                {' '}
                since <Time at={connection.revokedAt} mode="absolute" />
              </span>
            ) : null}
          </dd>
        </div>
        <ConnectionDeliveryFact connection={connection} onBind={onBind} />
        <div>
          <dt>Created</dt>
          <dd>
            <Time at={connection.createdAt} mode="absolute" />
          </dd>
        </div>
        {url ? (
          <div class="connection-fact-wide">
            <dt>{destination === 'broker' ? BROKER_URL_LABEL : fieldLabel('url')}</dt>
            <dd class="mono break">{url}</dd>
          </div>
        ) : null}
        <div>
          <dt>Event types</dt>
          <dd class={eventTypes ? 'mono break' : undefined}>
            {eventTypes ? eventTypes.join(', ') : 'All events'}
          </dd>
        </div>
        {filter ? (
          <div class="connection-fact-wide">
            <dt>Payload filter</dt>
            <dd class="mono break">{JSON.stringify(filter)}</dd>
          </div>
        ) : null}
        {connection.config.ordering === 'per-key' ? (
          <div>
            <dt>Delivery order</dt>
            <dd>{OPTION_WORDS.ordering?.['per-key']}</dd>
          </div>
        ) : null}
        <div>
          <dt>Connection ID</dt>
          <dd class="mono break">{connection.id}</dd>
        </div>
      </dl>
    </section>
  );
}
