import {
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import type { AttemptSpan, AttemptSubject, PublishSpan } from './types.js';

/** A span context as a W3C `traceparent` header value (version 00). */
export const traceparentOf = (span: SpanContext): string =>
  `00-${span.traceId}-${span.spanId}-${span.traceFlags & TraceFlags.SAMPLED ? '01' : '00'}`;

function failWith(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  const code = (error as { code?: unknown } | null)?.code;
  span.setAttribute('error.type', typeof code === 'string' ? code : 'internal');
  span.end();
}

/** The span of one event's publish, child of the request's (the active context). */
export function startPublishSpan(tracer: Tracer, tenantId: string, type: string): PublishSpan {
  const span = tracer.startSpan('publish', {
    kind: SpanKind.PRODUCER,
    attributes: { 'hubgate.tenant.id': tenantId, 'hubgate.event.type': type },
  });
  return {
    traceparent: traceparentOf(span.spanContext()),
    published(event) {
      span.setAttributes({ 'hubgate.event.id': event.id, 'hubgate.event.deliveries': event.deliveries });
      span.end();
    },
    failed: (error) => failWith(span, error),
  };
}

/**
 * A delivery attempt happens later than its publish (retries hours later), perhaps in another
 * process: it starts a trace of its own (kind CLIENT) with a link to the publish span whose context
 * the event stored, as OpenTelemetry's messaging conventions have consumers link to producers.
 */
export function startAttemptSpan(tracer: Tracer, delivery: AttemptSubject): AttemptSpan {
  const published = delivery.trace_context ? parseTraceParent(delivery.trace_context) : null;
  const span = tracer.startSpan('deliver', {
    kind: SpanKind.CLIENT,
    root: true,
    links: published ? [{ context: published }] : [],
    attributes: {
      'hubgate.delivery.id': delivery.id,
      'hubgate.event.id': delivery.event_id,
      'hubgate.connection.id': delivery.connection_id,
      'hubgate.connector': delivery.connector_key,
      'hubgate.delivery.attempt': delivery.attempt_count + 1,
      ...(delivery.tenant_id === undefined ? {} : { 'hubgate.tenant.id': delivery.tenant_id }),
    },
  });
  return {
    traceparent: traceparentOf(span.spanContext()),
    sent(method, url, result) {
      span.setAttribute('http.request.method', method);
      // The host only: a URL's path can be the credential itself (Slack's webhook URLs).
      if (URL.canParse(url)) span.setAttribute('server.address', new URL(url).hostname);
      if (result.status !== null) span.setAttribute('http.response.status_code', result.status);
      if (!result.ok) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.setAttribute('error.type', result.error ?? String(result.status));
      }
      span.end();
    },
    failed: (error) => failWith(span, error),
  };
}
