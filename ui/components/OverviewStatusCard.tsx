import type { Overview } from '../api-types.js';
import { plural } from '../format.js';
import { StatusBadge } from './StatusBadge.js';

/** Healthy, or degraded and why: connections without credentials, failed deliveries. */
export function OverviewStatusCard({ overview }: { overview: Overview }) {
  const awaiting =
    overview.totals.active > 0 ? overview.connectors.reduce((n, c) => n + c.awaitingCredentials, 0) : 0;
  const failed = overview.deliveries24h.failed;
  return (
    <section class="card" aria-labelledby="status-title">
      <div class="card-head">
        <h2 id="status-title">Status</h2>
        <StatusBadge
          status={overview.status}
          label={overview.status === 'healthy' ? 'Healthy' : 'Degraded'}
        />
      </div>
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
