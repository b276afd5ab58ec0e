import { Loading } from '../../components/Loading.js';
import { ErrorNotice } from '../../components/Notice.js';
import { PageHeader } from '../../components/PageHeader.js';
import { MonitoringAlerts } from '../components/MonitoringAlerts.js';
import { MonitoringCharts } from '../components/MonitoringCharts.js';
import { MonitoringSnapshot } from '../components/MonitoringSnapshot.js';
import { usePlatformPoll } from '../components/PlatformPoll.js';
import type { MonitoringSnapshot as Snapshot } from '../components/PlatformTypes.js';
import { platformApi } from '../key.js';

const REFRESH_MS = 5_000;
const clock = new Intl.DateTimeFormat('en-GB', { timeStyle: 'medium' });

/**
 * Monitoring (contract §9, §12): the live snapshot, refreshed every 5 s while the tab is visible,
 * and the charts of the last hour (or more).
 */
export function MonitoringPage() {
  const snapshot = usePlatformPoll(
    (signal) => platformApi<Snapshot>('GET', '/api/v1/platform/monitoring', { signal }),
    'snapshot',
    REFRESH_MS,
  );
  const data = snapshot.data;
  let status;
  if (!data) status = null;
  else if (!data.database.ok)
    status = (
      <div class="notice notice-error" role="alert">
        The database is not answering: deliveries cannot be queued or sent, and figures read from it are
        unknown (—).
      </div>
    );

  return (
    <>
      <PageHeader
        title="Monitoring"
        description="Whether deliveries flow: the service now, and the history per minute."
        actions={
          snapshot.updatedAt ? (
            <p class="muted platform-updated" aria-live="off">
              Live, every 5 seconds while this tab is open. Updated{' '}
              <time dateTime={snapshot.updatedAt.toISOString()}>{clock.format(snapshot.updatedAt)}</time>.
            </p>
          ) : undefined
        }
      />
      {status}
      {snapshot.error && data ? (
        <ErrorNotice
          error={snapshot.error}
          title="The figures could not be refreshed; these are from before."
        />
      ) : null}
      {data ? (
        <MonitoringSnapshot snapshot={data} />
      ) : snapshot.error ? (
        <ErrorNotice error={snapshot.error} title="The monitoring snapshot could not be loaded." />
      ) : (
        <Loading what="Loading the figures" />
      )}
      <MonitoringAlerts />
      <MonitoringCharts />
    </>
  );
}
