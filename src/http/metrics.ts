import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, Registry } from 'prom-client';
import { abortStatus } from './access-log.js';

/**
 * The process's Prometheus metrics (one registry per app, so tests may run many apps in one
 * process). Names follow Prometheus conventions: `hubgate_` prefix, `_total` counters, `_seconds`
 * histograms, base units. The list, with labels, is in docs/operators/monitoring.md.
 */
export interface Metrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  /** Ended delivery attempts and cancellations, by what they ended in. */
  deliveries: Counter<'outcome'>;
  deliveryAttemptDuration: Histogram<'outcome'>;
  /** From the event's publication to its delivery's success. */
  deliveryLatency: Histogram;
  /** Alert notifications tried, by channel kind and whether the channel took it. */
  alertNotifications: Counter<'channel_kind' | 'outcome'>;
}

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'cancelled' | 'skipped';

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(): Metrics {
  const registry = new Registry();
  const registers = [registry];
  return {
    registry,
    httpRequests: new Counter({
      name: 'hubgate_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'hubgate_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method and route pattern.',
      labelNames: ['method', 'route'] as const,
      buckets: SECONDS_BUCKETS,
      registers,
    }),
    deliveries: new Counter({
      name: 'hubgate_deliveries_total',
      help: 'Delivery attempts ended, by outcome (delivered, retrying, failed, cancelled).',
      labelNames: ['outcome'] as const,
      registers,
    }),
    deliveryAttemptDuration: new Histogram({
      name: 'hubgate_delivery_attempt_duration_seconds',
      help: 'Time of one delivery attempt (connect, send, read the answer), by outcome.',
      labelNames: ['outcome'] as const,
      buckets: SECONDS_BUCKETS,
      registers,
    }),
    deliveryLatency: new Histogram({
      name: 'hubgate_delivery_latency_seconds',
      help: 'Time from an event being published to its delivery succeeding.',
      buckets: [...SECONDS_BUCKETS, 60, 300, 1800, 7200, 36000],
      registers,
    }),
    alertNotifications: new Counter({
      name: 'hubgate_alert_notifications_total',
      help: 'Alert notifications sent to channels, by channel kind and outcome (sent, failed).',
      labelNames: ['channel_kind', 'outcome'] as const,
      registers,
    }),
  };
}

export function countHttpRequest(
  metrics: Metrics,
  answered: { method: string; route: string; status: number; seconds: number },
): void {
  const { method, route } = answered;
  metrics.httpRequests.inc({ method, route, status: String(answered.status) });
  metrics.httpDuration.observe({ method, route }, answered.seconds);
}

/** Counts every answered request by its route pattern (never the raw path: IDs would explode it). */
export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    countHttpRequest(metrics, {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
      seconds: reply.elapsedTime / 1000,
    });
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    countHttpRequest(metrics, {
      method: request.method,
      route,
      status: abortStatus(request.raw),
      seconds: 0,
    });
    done();
  });
}
