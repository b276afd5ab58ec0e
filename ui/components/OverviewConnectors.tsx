import type { Overview, Readiness } from '../api-types.js';
import { StatusBadge } from './StatusBadge.js';

export interface Hub {
  overview: Overview;
  readiness: Readiness;
}

type ReadinessRow = Readiness['connectors'][number];

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
export function OverviewConnectors({ hub }: { hub: Hub }) {
  const readiness = new Map(hub.readiness.connectors.map((c) => [c.connectorKey, c]));
  return (
    <section class="card" aria-labelledby="connectors-title">
      <h2 id="connectors-title">Connectors</h2>
      <div class="table-wrap">
        <table>
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
                  <td class="num">{connector.active}</td>
                  <td class="num">{connector.awaitingCredentials}</td>
                  <td class="num">{connector.disabled}</td>
                  <td>
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
    </section>
  );
}
