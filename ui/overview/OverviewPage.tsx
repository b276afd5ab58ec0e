// The hub overview (docs/operators/web-ui.md): status, modules, each connector's connections, the last 24
// hours' deliveries, and credential readiness in words with the action that fixes each reason.
import { api } from '../common/api.js';
import { moduleName, plural } from '../common/format.js';
import { useResource, type Resource } from '../common/hooks.js';
import { PageHeader, RefreshButton } from '../common/Layout.js';
import { EmptyState, ErrorNotice, Loading, Notice, StatusBadge } from '../common/Notice.js';
import { routes, type Overview, type Readiness } from '../common/routes.js';
import { session } from '../common/session.js';

interface Hub {
  overview: Overview;
  readiness: Readiness;
}

type ReadinessRow = Readiness['connectors'][number];

/**
 * The paused connections: the total counts every connection, the per-connector counts only active and
 * revoked ones (the overview's shape, docs/api/connections.md), so the rest are paused.
 */
const pausedOf = (overview: Overview): number =>
  Math.max(0, overview.totals.connections - overview.totals.active - overview.totals.disabled);

/** Each reason credential readiness gives, in words, with the action that fixes it. */
function reasonText(reason: string, connector: ReadinessRow) {
  switch (reason) {
    case 'entitlement_missing':
      return (
        <>
          Your organization is not entitled to the Integrations module.{' '}
          <span class="muted">Ask your platform operator to enable it.</span>
        </>
      );
    case 'connector_disabled':
      return (
        <>
          The platform operator has switched this connector off.{' '}
          <span class="muted">Ask them to switch it back on to use it.</span>
        </>
      );
    case 'no_active_connection':
      return (
        <>
          No active connection uses it yet.{' '}
          <a href={`/connections/new?connector=${encodeURIComponent(connector.connectorKey)}`}>
            Create {/^(?:[aeiou]|http)/i.test(connector.name) ? 'an' : 'a'} {connector.name} connection
          </a>
        </>
      );
    default:
      return reason;
  }
}

/** Each connector: its connections by state, and whether it is ready for credentials (or why not). */
function OverviewConnectors({ hub }: { hub: Hub }) {
  const readiness = new Map(hub.readiness.connectors.map((c) => [c.connectorKey, c]));
  const paused = pausedOf(hub.overview);
  return (
    <section class="card" aria-labelledby="connectors-title">
      <h2 id="connectors-title">Connectors</h2>
      <div class="table-wrap">
        <table class="cards-on-phone">
          <thead>
            <tr>
              <th scope="col">Connector</th>
              <th scope="col" class="num">
                Active
              </th>
              <th scope="col" class="num">
                Awaiting credentials
              </th>
              <th scope="col" class="num">
                Revoked
              </th>
              <th scope="col">Ready for credentials</th>
            </tr>
          </thead>
          <tbody>
            {hub.overview.connectors.map((connector) => {
              const ready = readiness.get(connector.connectorKey);
              return (
                <tr key={connector.connectorKey}>
                  <th scope="row">{connector.name}</th>
                  <td class="num" data-label="Active">
                    {connector.active}
                  </td>
                  <td class="num" data-label="Awaiting credentials">
                    {connector.awaitingCredentials}
                  </td>
                  <td class="num" data-label="Revoked">
                    {connector.disabled}
                  </td>
                  <td data-label="Ready for credentials">
                    {!ready ? (
                      <span class="muted">—</span>
                    ) : ready.ready ? (
                      <StatusBadge status="active" label="Ready" />
                    ) : (
                      <ul class="reasons">
                        {ready.reasons.map((reason) => (
                          <li key={reason}>{reasonText(reason, ready)}</li>
                        ))}
                      </ul>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {paused > 0 ? (
        <p class="muted overview-note">
          {paused === 1
            ? '1 paused connection is not counted here.'
            : `${paused} paused connections are not counted here.`}{' '}
          <a href="/connections">See {paused === 1 ? 'it' : 'them'} on the Connections page</a>
        </p>
      ) : null}
    </section>
  );
}

/** How many deliveries were made, failed, and still wait, in the last 24 hours. */
function OverviewDeliveries({ overview }: { overview: Overview }) {
  const { delivered, failed, pending } = overview.deliveries24h;
  return (
    <section class="card" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries in the last 24 hours</h2>
      <dl class="stats">
        <div class="stat">
          <dt>Delivered</dt>
          <dd>{delivered.toLocaleString()}</dd>
        </div>
        <div class={failed > 0 ? 'stat stat-bad' : 'stat'}>
          <dt>Failed</dt>
          <dd>{failed.toLocaleString()}</dd>
        </div>
        <div class="stat">
          <dt>Pending or retrying</dt>
          <dd>{pending.toLocaleString()}</dd>
        </div>
      </dl>
    </section>
  );
}

/** The modules, each entitled or not. */
function OverviewModules({ overview }: { overview: Overview }) {
  return (
    <section class="card" aria-labelledby="modules-title">
      <h2 id="modules-title">Modules</h2>
      <ul class="plain-list">
        {overview.modules.map((m) => (
          <li key={m.moduleKey} class="row-between">
            <span>{moduleName(m.moduleKey)}</span>
            <StatusBadge
              status={m.entitled ? 'active' : 'disabled'}
              label={m.entitled ? 'Entitled' : 'Not entitled'}
            />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Healthy, or degraded and why: connections without credentials, failed deliveries. */
function OverviewStatusCard({ overview }: { overview: Overview }) {
  const awaiting =
    overview.totals.active > 0 ? overview.connectors.reduce((n, c) => n + c.awaitingCredentials, 0) : 0;
  const failed = overview.deliveries24h.failed;
  const paused = pausedOf(overview);
  const pausedNote =
    paused > 0 ? (
      <p>
        {paused === 1 ? '1 connection is paused' : `${paused} connections are paused`}: nothing is sent to{' '}
        {paused === 1 ? 'it' : 'them'} until {paused === 1 ? 'it is' : 'they are'} resumed.{' '}
        <a href="/connections">Resume {paused === 1 ? 'it' : 'them'} on the Connections page</a>
      </p>
    ) : null;
  return (
    <section class="card" aria-labelledby="status-title">
      <div class="card-head">
        <h2 id="status-title">Status</h2>
        <StatusBadge
          status={overview.status}
          label={overview.status === 'healthy' ? 'Healthy' : 'Degraded'}
        />
      </div>
      {pausedNote}
      {overview.status === 'healthy' ? (
        <p>Every active connection has its credentials, and no delivery failed in the last 24 hours.</p>
      ) : (
        <ul class="reasons">
          {awaiting > 0 ? (
            <li>
              {plural(awaiting, 'active connection')} cannot deliver:{' '}
              {awaiting === 1 ? 'it has' : 'they have'} no credentials yet.{' '}
              <a href="/connections">Bind credentials on the Connections page</a>
            </li>
          ) : null}
          {failed > 0 ? (
            <li>
              {plural(failed, 'delivery', 'deliveries')} failed in the last 24 hours.{' '}
              <a href="/connections">Open a connection’s event log to see why and retry</a>
            </li>
          ) : null}
        </ul>
      )}
    </section>
  );
}

/** The overview of the organization `tenant`: not entitled, failed, loading, or its cards. */
function OverviewBody({ hub, tenant }: { hub: Resource<Hub>; tenant: string }) {
  if (hub.error?.code === 'entitlement_missing') {
    return (
      <Notice tone="warning">
        <bdi>{tenant}</bdi> is not entitled to the Integration hub module, so there is no overview to show.
        Ask your platform operator to enable it.
      </Notice>
    );
  }
  if (hub.error) return <ErrorNotice error={hub.error} />;
  if (!hub.data) return <Loading what="Loading the overview" />;
  const { overview } = hub.data;
  return (
    <>
      {overview.totals.connections === 0 ? (
        <EmptyState title="No connections yet">
          <p>
            A connection sends <bdi>{tenant}</bdi>’s events to a system you choose: a webhook endpoint, Slack,
            any HTTP endpoint, or a message broker.
          </p>
          <a class="button button-primary" href="/connections/new">
            Create your first connection
          </a>
        </EmptyState>
      ) : null}
      <div class="grid-2">
        <OverviewStatusCard overview={overview} />
        <OverviewDeliveries overview={overview} />
      </div>
      <OverviewConnectors hub={hub.data} />
      <OverviewModules overview={overview} />
    </>
  );
}

/**
 * The hub overview (docs/operators/web-ui.md): status, modules, connectors, the last 24 hours of deliveries.
 */
export function OverviewPage() {
  const tenant = session.value?.tenant.name ?? '';
  const hub = useResource(async (signal) => {
    const [overview, readiness] = await Promise.all([
      api(routes.hub.overview, { signal }),
      api(routes.hub.readiness, { signal }),
    ]);
    return { overview, readiness };
  }, 'hub');
  return (
    <>
      <PageHeader
        title="Overview"
        description={
          <>
            How <bdi>{tenant}</bdi>’s integrations are doing.
          </>
        }
        actions={<RefreshButton loading={hub.loading} onRefresh={hub.reload} />}
      />
      <OverviewBody hub={hub} tenant={tenant} />
    </>
  );
}
