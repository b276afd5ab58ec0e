import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AppContext } from '../context.js';
import { timedPing } from '../db/ping.js';
import { within } from '../deadline.js';
import { errorFields } from '../logger.js';
import { VERSION } from '../version.js';
import { readDeliveryWindow, readInstallation, readQueue, roundTo3 } from './monitoring-store.js';

/** Deliveries that ended in the last hour make up the snapshot's delivery figures. */
export const DELIVERY_WINDOW_SECONDS = 3600;
/** As /readyz: a database that takes longer than this to answer a ping counts as down. */
const PING_TIMEOUT_MS = 2_000;
/** The figures' queries, after a successful ping. */
const READ_TIMEOUT_MS = 5_000;

/**
 * The answer of GET /api/v1/platform/monitoring (docs/operators/monitoring.md). Every object is always present; a
 * figure that cannot be known is null, never omitted. When the database does not answer, `database`
 * is `{ok: false, latencyMs: null}` and every figure read from it is null (queue counts, delivery
 * counts, ratio and percentiles, tenants, connections); `windowSeconds`, `http` and `process` stay.
 */
export interface MonitoringSnapshot {
  generatedAt: string;
  uptimeSeconds: number;
  version: string;
  database: { ok: boolean; latencyMs: number | null };
  queue: {
    pending: number | null;
    retrying: number | null;
    inFlight: number | null;
    oldestPendingAgeSeconds: number | null;
  };
  deliveries: {
    windowSeconds: number;
    delivered: number | null;
    failed: number | null;
    successRatio: number | null;
    latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  };
  http: { requests: number; errors5xx: number };
  process: { rssBytes: number; heapUsedBytes: number; eventLoopLagMs: number };
  runtime: { node: string };
  tenants: number | null;
  connections: { active: number | null; disabled: number | null };
}

export type MonitoringDeps = Pick<AppContext, 'database' | 'db' | 'metrics' | 'log' | 'now'>;

// The sampling timer's own interval shows up in every sample; what exceeds it is the lag.
const LAG_RESOLUTION_MS = 10;
const LAG_WINDOW_MS = 60_000;
// About one second of samples: fewer than that and the previous window speaks instead.
const LAG_MIN_SAMPLES = 100;

/**
 * Event-loop lag as the 99th percentile of the loop's delay beyond the sampling interval, over a
 * window that restarts every minute (in the second after a restart, the previous window's figure).
 * A p99 shows the stalls a mean would average away; a rolling window keeps one old stall from being
 * reported forever, and does not depend on how often anyone asks.
 */
export function startEventLoopLag(): { lagMs(): number; stop(): void } {
  const histogram = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
  histogram.enable();
  const p99Ms = () => Math.max(0, histogram.percentile(99) / 1e6 - LAG_RESOLUTION_MS);
  // Null during the first window: whatever samples there are speak until a window has ended.
  let previousMs: number | null = null;
  const roll = setInterval(() => {
    if (histogram.count >= LAG_MIN_SAMPLES) previousMs = p99Ms();
    histogram.reset();
  }, LAG_WINDOW_MS);
  roll.unref();
  return {
    lagMs: () => roundTo3(histogram.count >= LAG_MIN_SAMPLES || previousMs === null ? p99Ms() : previousMs),
    stop: () => {
      clearInterval(roll);
      histogram.disable();
    },
  };
}

type DatabaseFigures = Pick<MonitoringSnapshot, 'database' | 'queue' | 'tenants' | 'connections'> & {
  deliveries: Omit<MonitoringSnapshot['deliveries'], 'windowSeconds'>;
};

const DATABASE_DOWN = (latencyMs: number | null): DatabaseFigures => ({
  database: { ok: false, latencyMs },
  queue: { pending: null, retrying: null, inFlight: null, oldestPendingAgeSeconds: null },
  deliveries: {
    delivered: null,
    failed: null,
    successRatio: null,
    latencyMs: { p50: null, p95: null, p99: null },
  },
  tenants: null,
  connections: { active: null, disabled: null },
});

/**
 * `ok` means the ping and every read succeeded; `latencyMs` is the ping's round trip, null when the
 * ping failed (a ping that answered but reads that failed give `ok: false` with its latency).
 */
async function readDatabaseFigures(deps: MonitoringDeps, now: Date): Promise<DatabaseFigures> {
  const warn = (error: unknown, message: string) => deps.log.warn(errorFields(error), message);
  let latencyMs: number;
  try {
    latencyMs = roundTo3(await timedPing(deps.database, PING_TIMEOUT_MS));
  } catch (error) {
    warn(error, 'monitoring: database ping failed');
    return DATABASE_DOWN(null);
  }
  try {
    const since = new Date(now.getTime() - DELIVERY_WINDOW_SECONDS * 1000);
    const [queue, window, installation] = await within(
      Promise.all([readQueue(deps.db, now), readDeliveryWindow(deps.db, since), readInstallation(deps.db)]),
      READ_TIMEOUT_MS,
      'the monitoring reads',
    );
    const ended = window.delivered + window.failed;
    return {
      database: { ok: true, latencyMs },
      queue,
      deliveries: {
        delivered: window.delivered,
        failed: window.failed,
        successRatio: ended === 0 ? null : window.delivered / ended,
        latencyMs: window.latencyMs,
      },
      tenants: installation.tenants,
      connections: installation.connections,
    };
  } catch (error) {
    warn(error, 'monitoring: database reads failed');
    return DATABASE_DOWN(latencyMs);
  }
}

/**
 * Requests answered by this process since it started, from the Prometheus counter; the request
 * being answered is not among them yet (it is counted once its response is sent).
 */
async function httpFigures(deps: MonitoringDeps): Promise<MonitoringSnapshot['http']> {
  const { values } = await deps.metrics.httpRequests.get();
  let requests = 0;
  let errors5xx = 0;
  for (const { value, labels } of values) {
    requests += value;
    if (String(labels.status).startsWith('5')) errors5xx += value;
  }
  return { requests, errors5xx };
}

/** The live state of this process and of the installation, computed at each call. */
export async function takeSnapshot(
  deps: MonitoringDeps,
  eventLoop: { lagMs(): number },
): Promise<MonitoringSnapshot> {
  const now = deps.now();
  const [figures, http] = await Promise.all([readDatabaseFigures(deps, now), httpFigures(deps)]);
  const memory = process.memoryUsage();
  return {
    generatedAt: now.toISOString(),
    uptimeSeconds: Math.floor(process.uptime()),
    version: VERSION,
    database: figures.database,
    queue: figures.queue,
    deliveries: { windowSeconds: DELIVERY_WINDOW_SECONDS, ...figures.deliveries },
    http,
    process: { rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, eventLoopLagMs: eventLoop.lagMs() },
    runtime: { node: process.versions.node },
    tenants: figures.tenants,
    connections: figures.connections,
  };
}
