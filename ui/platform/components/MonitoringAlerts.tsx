import { ErrorNotice } from '../../components/Notice.js';
import { Time } from '../../components/Time.js';
import { platformApi } from '../key.js';
import { usePlatformPoll } from './PlatformPoll.js';
import type { FiringAlert, FiringAlerts } from './PlatformTypes.js';

const REFRESH_MS = 15_000;

/** What each alert the platform raises means, for someone who has not read the contract. */
const MEANING: Record<string, string> = {
  DeliveryFailed: 'A delivery gave up after its last attempt.',
  DeliveryFailureRateHigh: 'Many of a tenant’s deliveries are failing.',
  QueueBacklogHigh: 'More deliveries are waiting than the workers keep up with.',
  DatabaseUnavailable: 'The database is not answering.',
};

/** The labels worth showing beside the name (the name and severity have their own places). */
const details = (alert: FiringAlert) =>
  Object.entries(alert.labels)
    .filter(([name]) => name !== 'alertname' && name !== 'severity')
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');

/** The alerts firing now, refreshed every 15 s while the tab is visible. */
export function MonitoringAlerts() {
  const alerts = usePlatformPoll(
    (signal) => platformApi<FiringAlerts>('GET', '/api/v1/platform/alerting/alerts', { signal }),
    'alerts',
    REFRESH_MS,
  );
  const list = alerts.data?.data;
  return (
    <section class="card platform-group platform-alerts" aria-labelledby="firing-alerts">
      <h2 id="firing-alerts">Firing alerts</h2>
      {alerts.error ? <ErrorNotice error={alerts.error} title="The alerts could not be loaded." /> : null}
      {list === undefined ? null : list.length === 0 ? (
        <p class="muted">Nothing is firing.</p>
      ) : (
        <ul class="platform-alert-list">
          {list.map((alert) => (
            <li key={alert.fingerprint} class="platform-alert">
              <p>
                <strong>{alert.labels.alertname ?? 'Alert'}</strong>{' '}
                {alert.labels.severity ? (
                  <span class={`badge badge-${alert.labels.severity === 'critical' ? 'bad' : 'warn'}`}>
                    {alert.labels.severity}
                  </span>
                ) : null}{' '}
                <span class="muted">
                  firing since <Time at={alert.startsAt} mode="absolute" />
                </span>
              </p>
              <p class="muted">
                {alert.annotations.summary ?? MEANING[alert.labels.alertname ?? ''] ?? ''} {details(alert)}
              </p>
            </li>
          ))}
        </ul>
      )}
      {alerts.data?.truncated ? <p class="muted">More are firing than are shown here.</p> : null}
    </section>
  );
}
