import { Type } from 'typebox';
import { platformRule } from '../access/rules.js';
import { Nullable, StrictObject, Timestamp } from '../http/schemas.js';
import { errorFields } from '../logger.js';
import type { RoutePlugin } from '../services.js';
import { MAX_HISTORY_MINUTES, readHistory } from './history.js';
import { startEventLoopLag, takeSnapshot } from './monitoring.js';
import { registerScrapeMetrics } from './scrape-metrics.js';

const Count = Type.Integer({ minimum: 0 });
const NullableCount = Nullable(Count);
const NullableMs = Nullable(Type.Number({ minimum: 0 }));

/** docs/operators/monitoring.md, field for field; see MonitoringSnapshot (monitoring.ts) for when a figure is null. */
const MonitoringSchema = Type.Object({
  generatedAt: Timestamp,
  uptimeSeconds: Type.Integer({ minimum: 0, description: 'Whole seconds since the process started' }),
  version: Type.String(),
  database: Type.Object({
    ok: Type.Boolean({ description: 'The ping and every read of this snapshot succeeded' }),
    latencyMs: Nullable(Type.Number({ minimum: 0, description: 'Ping round trip; null when it failed' })),
  }),
  queue: Type.Object({
    pending: NullableCount,
    retrying: NullableCount,
    inFlight: Nullable(Type.Integer({ minimum: 0, description: 'Deliveries being sent (delivering)' })),
    oldestPendingAgeSeconds: Nullable(
      Type.Number({
        minimum: 0,
        description: 'Age of the oldest due pending or retrying delivery; 0 if none',
      }),
    ),
  }),
  deliveries: Type.Object({
    windowSeconds: Type.Integer({ minimum: 1 }),
    delivered: NullableCount,
    failed: NullableCount,
    successRatio: Nullable(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'delivered / (delivered + failed); null if both 0',
      }),
    ),
    latencyMs: Type.Object(
      { p50: NullableMs, p95: NullableMs, p99: NullableMs },
      { description: 'Publish to delivered; null when nothing was delivered in the window' },
    ),
  }),
  http: Type.Object(
    { requests: Count, errors5xx: Count },
    { description: 'Requests this process answered since it started' },
  ),
  process: Type.Object({
    rssBytes: Count,
    heapUsedBytes: Count,
    eventLoopLagMs: Type.Number({ minimum: 0, description: 'p99 over the last minute' }),
  }),
  runtime: Type.Object({
    node: Type.String({ description: 'The Node.js version this process runs on, e.g. 24.21.0' }),
  }),
  tenants: NullableCount,
  connections: Type.Object({ active: NullableCount, disabled: NullableCount }),
});

const LatencyPercentiles = Type.Object({ p50: NullableMs, p95: NullableMs, p99: NullableMs });

export const HistorySchema = Type.Object({
  bucketSeconds: Type.Literal(60),
  points: Type.Array(
    Type.Object({
      at: Type.String({ format: 'date-time', description: 'the start of the UTC minute' }),
      delivered: Count,
      failed: Count,
      latencyMs: LatencyPercentiles,
      queueDepth: NullableCount,
    }),
  ),
});

const platform = platformRule();
const tags = ['platform: monitoring'];

/** GET /api/v1/platform/monitoring and GET /metrics (docs/operators/deployment.md, docs/operators/monitoring.md); platform keys only. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const monitoringRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  const eventLoop = startEventLoopLag();
  app.addHook('onClose', async () => eventLoop.stop());
  registerScrapeMetrics(ctx.metrics, ctx.database, {
    now: ctx.now,
    onError: (error) => ctx.log.warn(errorFields(error), 'metrics: the database did not answer'),
  });

  app.get(
    '/api/v1/platform/monitoring',
    {
      config: platform,
      schema: {
        tags,
        summary: 'A live snapshot of the service: database, queue, deliveries, HTTP, process',
        description:
          'Computed at each call. When the database does not answer, the answer is still 200, with ' +
          '`database.ok` false and every figure read from the database null.',
        response: { 200: MonitoringSchema },
      },
    },
    async () => takeSnapshot(ctx, eventLoop),
  );

  app.get(
    '/api/v1/platform/monitoring/history',
    {
      config: platform,
      schema: {
        tags,
        summary: 'Deliveries, latency and queue depth per minute, for charts',
        description:
          'Exactly `minutes` points, oldest first, one per UTC minute; the last is the current (partial) ' +
          'minute, and a delivery shows in it at once. Minutes without deliveries have zero counts and ' +
          'null latencies; `queueDepth` is the largest number of due deliveries sampled in the minute ' +
          '(every 15 s, by the processes running workers), or null if none was sampled.',
        querystring: StrictObject({
          minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HISTORY_MINUTES, default: 60 })),
        }),
        response: { 200: HistorySchema },
      },
    },
    async (request) => ({
      bucketSeconds: 60 as const,
      points: await readHistory(ctx, ctx.now(), request.query.minutes ?? 60),
    }),
  );

  app.get(
    '/metrics',
    {
      config: platform,
      schema: {
        tags,
        summary: 'Prometheus metrics, text exposition format 0.0.4',
        response: {
          200: {
            description: 'Prometheus text exposition format',
            content: { 'text/plain': { schema: Type.String() } },
          },
        },
      },
    },
    async (_request, reply) => {
      const body = await ctx.metrics.registry.metrics();
      return reply.type(ctx.metrics.registry.contentType).send(body);
    },
  );
};
