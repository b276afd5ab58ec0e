import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';

// What the rest of hubgate sees of tracing (start.ts starts it): types only, so that nothing of
// OpenTelemetry is loaded by who imports them.

/** The IDs a log line carries while a span is active (docs/operators/telemetry.md). */
export interface TraceIds {
  trace_id: string;
  span_id: string;
}

/** The span of one event's publish, child of the request's. */
export interface PublishSpan {
  /** Stored with the event (`events.trace_context`): each delivery attempt links to it. */
  readonly traceparent: string;
  published(event: { id: string; deliveries: number }): void;
  /** Refused (`409 conflict`, too large) or not written: `error.type` is the problem's code. */
  failed(error: unknown): void;
}

/** What an attempt span says of its delivery: identifiers only, never the URL, a header or the payload. */
export interface AttemptSubject {
  id: string;
  event_id: string;
  connection_id: string;
  connector_key: string;
  attempt_count: number;
  tenant_id?: string;
  trace_context?: string | null;
}

/** One delivery attempt's span: a new trace, linked to its event's publish span. */
export interface AttemptSpan {
  /** Sent to the receiver, so that its spans continue the attempt's trace. */
  readonly traceparent: string;
  sent(
    method: string,
    url: string,
    result: { ok: boolean; status: number | null; error: string | null },
  ): void;
  failed(error: unknown): void;
}

export interface RequestTracingOptions {
  /** The tenant of the request's principal, once the gate has authenticated it; else undefined. */
  tenantOf(request: FastifyRequest): string | undefined;
  /** The status a request that never got its answer is logged with (http/access-log.ts). */
  abortStatus(request: IncomingMessage): number;
}

/** Tracing of one app or worker process: it exists only when tracing is on. */
export interface Tracing {
  /** A server span per request; registered before the routes. */
  registerRequests(app: FastifyInstance, options: RequestTracingOptions): void;
  /** The request's server span IDs, for its access line. */
  traceIdsOf(request: FastifyRequest): TraceIds | undefined;
  /** Starts the span of one event's publish in the active context (the request's). */
  startPublish(tenantId: string, type: string): PublishSpan;
  startAttempt(delivery: AttemptSubject): AttemptSpan;
  /** Ends tracing once every span ended so far is exported (the app's onClose awaits it). */
  close(): Promise<void>;
}
