import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { Logger } from 'pino';
import { VERSION } from '../version.js';
import { registerRequestTracing, traceIdsOf } from './http.js';
import { addTraceIds } from './logs.js';
import type { SamplerConfig, TelemetryConfig } from './settings.js';
import { startAttemptSpan, startPublishSpan } from './spans.js';
import type { Tracing } from './types.js';

/** A failed export, as the process may say it: never the headers, the payload or the collector's answer. */
export interface ExportFailure {
  spans: number;
  /** The collector's HTTP status, when it answered one. */
  status?: number;
}

function samplerOf({ parentBased, ratio }: SamplerConfig): Sampler {
  const root =
    ratio >= 1
      ? new AlwaysOnSampler()
      : ratio <= 0
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(ratio);
  return parentBased ? new ParentBasedSampler({ root }) : root;
}

/** A collector that is down fails an export every few seconds: it is said at most this often. */
const FAILURE_REPORT_MS = 60_000;

/**
 * Reports failed exports through `onFailure` (the SDK's own report goes to a diagnostic logger nobody
 * reads), at most once a minute, with the spans lost since the last report.
 */
function reporting(exporter: SpanExporter, onFailure: (failure: ExportFailure) => void): SpanExporter {
  let lost = 0;
  let reportedAt = -Infinity;
  return {
    export(spans: ReadableSpan[], done: (result: ExportResult) => void) {
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) {
          lost += spans.length;
          if (performance.now() - reportedAt >= FAILURE_REPORT_MS) {
            reportedAt = performance.now();
            const status = (result.error as { code?: unknown } | undefined)?.code;
            onFailure({ spans: lost, ...(typeof status === 'number' ? { status } : {}) });
            lost = 0;
          }
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

// The active span follows async work through one AsyncLocalStorage for the whole process (the
// OpenTelemetry API has one global context manager); registered by the first tracing started and
// removed with the last closed, so a process with tracing off never has one.
let contextUsers = 0;

function holdContextManager(): () => void {
  if (contextUsers++ === 0) context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--contextUsers === 0) context.disable();
  };
}

/**
 * Starts tracing (docs/operators/telemetry.md): OTLP over HTTP (protobuf or JSON), spans batched
 * (BatchSpanProcessor) and sent in the background, log lines with the active span's IDs. The tracer
 * is this process's own, handed to who makes spans (no global provider), so two apps in one process
 * (tests) never mix their spans.
 */
export function startTracing(config: TelemetryConfig, logger: Logger): Tracing {
  const options = { url: config.url, headers: config.headers, timeoutMillis: config.timeoutMs };
  const exporter =
    config.protocol === 'http/json' ? new JsonExporter(options) : new ProtobufExporter(options);
  const onFailure = (failure: ExportFailure) => logger.warn(failure, 'spans could not be exported');
  const provider = new TracerProvider({
    resource: resourceFromAttributes(config.resource),
    sampler: samplerOf(config.sampler),
    spanProcessors: [new BatchSpanProcessor({ exporter: reporting(exporter, onFailure) })],
  });
  const tracer = provider.getTracer('hubgate', VERSION);
  const release = holdContextManager();
  const removeTraceIds = addTraceIds(logger);
  return {
    registerRequests: (app, requestOptions) => registerRequestTracing(app, tracer, requestOptions),
    traceIdsOf,
    startPublish: (tenantId, type) => startPublishSpan(tracer, tenantId, type),
    startAttempt: (delivery) => startAttemptSpan(tracer, delivery),
    async close() {
      try {
        await provider.shutdown();
      } finally {
        removeTraceIds();
        release();
      }
    },
  };
}
