// The console's monitoring page (docs/operators/monitoring.md, docs/operators/web-ui.md): the snapshot
// refreshed every 5 s while the tab is visible, firing alerts, and the charts.
import type { ComponentChildren } from 'preact';
import { Time } from '../../common/format.js';
import { PageHeader } from '../../common/Layout.js';
import { ErrorNotice, Loading } from '../../common/Notice.js';
import { routes, type FiringAlert, type Snapshot } from '../../common/routes.js';
import { platformApi } from '../key.js';
import { MonitoringCharts, ms } from './charts.js';
import { usePlatformPoll } from './poll.js';

// The snapshot's numbers as an operator reads them.

const number = (n: number) => n.toLocaleString('en-US');
const bytes = (n: number) =>
  n >= 1024 ** 3
    ? `${(n / 1024 ** 3).toFixed(1)} GiB`
    : `${Math.round(n / 1024 ** 2).toLocaleString('en-US')} MiB`;

/** "2 h 5 min", "45 s": how long, as a person says it. */
function duration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} days ${hours % 24} h`;
}

/** A figure that may be unknown (the database did not answer): a dash that says so. */
function SnapshotFigure({ value, show }: { value: number | null; show: (n: number) => string }) {
  return value === null ? <span title="Unknown: the database did not answer">—</span> : <>{show(value)}</>;
}

/** One figure of the snapshot, with its label; `tone` when it is bad news. */
function SnapshotStat({
  label,
  children,
  tone,
}: {
  label: string;
  children: ComponentChildren;
  tone?: 'bad' | 'warn';
}) {
  return (
    <div class={tone ? `stat platform-stat stat-${tone}` : 'stat platform-stat'}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** A card of the snapshot's figures, with a note on what they count. */
function SnapshotGroup({
  id,
  title,
  note,
  children,
  className,
  after,
}: {
  id: string;
  title: string;
  note?: ComponentChildren;
  children: ComponentChildren;
  className?: string;
  /** Shown under the figures (what they mean). */
  after?: ComponentChildren;
}) {
  return (
    <section class={`card platform-group ${className ?? ''}`} aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {note ? <p class="muted platform-note">{note}</p> : null}
      <dl class="platform-stats">{children}</dl>
      {after}
    </section>
  );
}

/**
 * What each failure figure of the page counts, in words beside them: the failed share of deliveries
 * (the snapshot and the failure chart) and DeliveryFailureRateHigh (attempts, so often higher).
 */
function FailuresCounted({ window }: { window: string }) {
  return (
    <section class="platform-definitions" aria-labelledby="failures-counted">
      <h3 id="failures-counted">How failures are counted</h3>
      <p class="muted platform-note">
        <strong>Failed share</strong>, here and on the Failure ratio chart: of the deliveries that ended
        (delivered, or failed for good after their last retry or a 410 Gone), the share that failed. Each
        delivery counts once, when it ends; one still retrying counts in neither. Here over {window}, to the
        second; the chart per whole minute of its range.
      </p>
      <p class="muted platform-note">
        <strong>DeliveryFailureRateHigh</strong>, among the firing alerts, counts attempts, retries included,
        of one tenant over the alert’s own window: a delivery that failed once and then got through is one
        failed attempt of two, so that share is often higher.
      </p>
    </section>
  );
}

/** Deliveries that ended in the snapshot's window: how many, how many failed, how fast. */
function SnapshotDeliveries({ deliveries: d }: { deliveries: Snapshot['deliveries'] }) {
  const window = d.windowSeconds === 3600 ? 'the last hour' : `the last ${duration(d.windowSeconds)}`;
  // The failed share, as the failure chart says it: one figure for failures on the page, not a success
  // ratio beside a failure ratio.
  const failedShare = d.successRatio === null ? null : 1 - d.successRatio;
  return (
    <SnapshotGroup
      className="platform-group-tall"
      id="deliveries-title"
      title="Deliveries"
      note={`Ended in ${window}; latency is from publish to delivered.`}
      after={<FailuresCounted window={window} />}
    >
      <SnapshotStat label="Delivered">
        <SnapshotFigure value={d.delivered} show={number} />
      </SnapshotStat>
      <SnapshotStat label="Failed" tone={d.failed ? 'bad' : undefined}>
        <SnapshotFigure value={d.failed} show={number} />
      </SnapshotStat>
      <SnapshotStat
        label="Failed share"
        tone={failedShare !== null && failedShare > 0.05 ? 'bad' : undefined}
      >
        {failedShare === null ? (
          <span title="Nothing ended in the window">—</span>
        ) : (
          `${(failedShare * 100).toFixed(1)} %`
        )}
      </SnapshotStat>
      <SnapshotStat label="Latency p50">
        <SnapshotFigure value={d.latencyMs.p50} show={ms} />
      </SnapshotStat>
      <SnapshotStat label="Latency p95">
        <SnapshotFigure value={d.latencyMs.p95} show={ms} />
      </SnapshotStat>
      <SnapshotStat label="Latency p99">
        <SnapshotFigure value={d.latencyMs.p99} show={ms} />
      </SnapshotStat>
    </SnapshotGroup>
  );
}

/** The service itself: its database, uptime, HTTP traffic and process. */
function SnapshotService({ snapshot }: { snapshot: Snapshot }) {
  const db = snapshot.database;
  return (
    <SnapshotGroup
      className="platform-group-wide"
      id="service-title"
      title="Service"
      note={`hubgate ${snapshot.version} on Node.js ${snapshot.runtime.node}.`}
    >
      <SnapshotStat label="Database" tone={db.ok ? undefined : 'bad'}>
        {db.ok ? 'Answering' : 'Not answering'}
      </SnapshotStat>
      <SnapshotStat label="Database ping">
        <SnapshotFigure value={db.latencyMs} show={ms} />
      </SnapshotStat>
      <SnapshotStat label="Up for">{duration(snapshot.uptimeSeconds)}</SnapshotStat>
      <SnapshotStat label="HTTP requests">{number(snapshot.http.requests)}</SnapshotStat>
      <SnapshotStat label="Server errors (5xx)" tone={snapshot.http.errors5xx ? 'bad' : undefined}>
        {number(snapshot.http.errors5xx)}
      </SnapshotStat>
      <SnapshotStat label="Memory (RSS)">{bytes(snapshot.process.rssBytes)}</SnapshotStat>
      <SnapshotStat label="Heap used">{bytes(snapshot.process.heapUsedBytes)}</SnapshotStat>
      <SnapshotStat label="Event loop lag p99">{ms(snapshot.process.eventLoopLagMs)}</SnapshotStat>
    </SnapshotGroup>
  );
}

/**
 * The monitoring snapshot (docs/operators/monitoring.md) in words and numbers, grouped as an operator reads
 * it.
 */
function MonitoringSnapshot({ snapshot }: { snapshot: Snapshot }) {
  const { deliveries: d, queue: q } = snapshot;
  return (
    <div class="platform-groups">
      <SnapshotDeliveries deliveries={d} />
      <SnapshotGroup id="queue-title" title="Queue" note="Deliveries waiting to be sent, or being sent now.">
        <SnapshotStat label="Pending">
          <SnapshotFigure value={q.pending} show={number} />
        </SnapshotStat>
        <SnapshotStat label="Retrying">
          <SnapshotFigure value={q.retrying} show={number} />
        </SnapshotStat>
        <SnapshotStat label="Being sent">
          <SnapshotFigure value={q.inFlight} show={number} />
        </SnapshotStat>
        <SnapshotStat
          label="Oldest due waiting"
          tone={q.oldestPendingAgeSeconds !== null && q.oldestPendingAgeSeconds > 300 ? 'warn' : undefined}
        >
          <SnapshotFigure value={q.oldestPendingAgeSeconds} show={duration} />
        </SnapshotStat>
      </SnapshotGroup>
      <SnapshotGroup id="tenants-title" title="Tenants and connections">
        <SnapshotStat label="Tenants">
          <SnapshotFigure value={snapshot.tenants} show={number} />
        </SnapshotStat>
        <SnapshotStat label="Active connections">
          <SnapshotFigure value={snapshot.connections.active} show={number} />
        </SnapshotStat>
        <SnapshotStat label="Disabled connections">
          <SnapshotFigure value={snapshot.connections.disabled} show={number} />
        </SnapshotStat>
      </SnapshotGroup>
      <SnapshotService snapshot={snapshot} />
    </div>
  );
}

const ALERTS_REFRESH_MS = 15_000;

/** What each alert the platform raises means, for someone who has not read the contract. */
const MEANING: Record<string, string> = {
  DeliveryFailed: 'A delivery gave up after its last attempt.',
  DeliveryFailureRateHigh: 'Many of a tenant’s deliveries are failing.',
  QueueBacklogHigh: 'More deliveries are waiting than the workers keep up with.',
  DatabaseUnavailable: 'The database is not answering.',
};

/** What an alert's figure counts, where it is not what the page's figures above count. */
const COUNTS: Record<string, string> = {
  DeliveryFailureRateHigh:
    'Counts delivery attempts, retries included, of this tenant over the alert’s window: not the failed share of deliveries above.',
};

/** The labels worth showing beside the name (the name and severity have their own places). */
const details = (alert: FiringAlert) =>
  Object.entries(alert.labels)
    .filter(([name]) => name !== 'alertname' && name !== 'severity')
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');

/** The alerts firing now, refreshed every 15 s while the tab is visible. */
function MonitoringAlerts() {
  const alerts = usePlatformPoll(
    (signal) => platformApi(routes.platform.alerts, { signal }),
    'alerts',
    ALERTS_REFRESH_MS,
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
              {COUNTS[alert.labels.alertname ?? ''] ? (
                <p class="muted">{COUNTS[alert.labels.alertname ?? '']}</p>
              ) : null}
            </li>
          ))}
        </ul>
      )}
      {alerts.data?.truncated ? <p class="muted">More are firing than are shown here.</p> : null}
    </section>
  );
}

const REFRESH_MS = 5_000;
const clock = new Intl.DateTimeFormat('en-GB', { timeStyle: 'medium' });

/**
 * Monitoring (docs/operators/monitoring.md, docs/operators/web-ui.md): the live snapshot, refreshed every 5 s
 * while the tab is visible, and the charts of the last hour (or more).
 */
export function MonitoringPage() {
  const snapshot = usePlatformPoll(
    (signal) => platformApi(routes.platform.monitoring, { signal }),
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
