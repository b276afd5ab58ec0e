import {
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { RequestTracingOptions, TraceIds } from './types.js';

const requestContext = Symbol('hubgate.traceContext');
type Traced = FastifyRequest & { [requestContext]?: Context };

/** The request's server span IDs; undefined before it started or with tracing off. */
export function traceIdsOf(request: FastifyRequest): TraceIds | undefined {
  const active = (request as Traced)[requestContext];
  const span = active && trace.getSpan(active)?.spanContext();
  return span && { trace_id: span.traceId, span_id: span.spanId };
}

// HTTP semantic conventions: a method outside the known set is `_OTHER` (a client may send any token).
const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/** Ends the request's server span with its status and tenant; a 5xx is an error. */
function endSpan(request: FastifyRequest, status: number, options: RequestTracingOptions): void {
  const active = (request as Traced)[requestContext];
  const span = active && trace.getSpan(active);
  if (!span || !span.isRecording()) return;
  span.setAttribute('http.response.status_code', status);
  const tenantId = options.tenantOf(request);
  if (tenantId !== undefined) span.setAttribute('hubgate.tenant.id', tenantId);
  if (status >= 500) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute('error.type', String(status));
  }
  span.end();
}

/**
 * A server span per request (docs/operators/telemetry.md): named by the route template, child of an
 * incoming W3C `traceparent`, and active (the logs' `trace_id`) through the hooks and the handler.
 * Attributes are the method, the route, the path without its query, the status and the tenant:
 * never a header, the query string or the body. Registered only with tracing on, before the routes
 * (the handler of each route is run in its request's context: Fastify reads the body in the
 * socket's context, which would lose it).
 */
export function registerRequestTracing(
  app: FastifyInstance,
  tracer: Tracer,
  options: RequestTracingOptions,
): void {
  const propagator = new W3CTraceContextPropagator();
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER';
    const route = request.routeOptions.url;
    const url = request.originalUrl;
    const query = url.indexOf('?');
    const span = tracer.startSpan(
      route === undefined ? method : `${method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': method,
          'url.path': query === -1 ? url : url.slice(0, query),
          'hubgate.request.id': request.id,
          ...(route === undefined ? {} : { 'http.route': route }),
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    (request as Traced)[requestContext] = active;
    context.with(active, done);
  });

  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function (this: FastifyInstance, request, reply) {
      const active = (request as Traced)[requestContext];
      return active
        ? context.with(active, handler, this, request, reply)
        : handler.call(this, request, reply);
    } as RouteHandlerMethod;
  });

  app.addHook('onResponse', (request, reply, done) => {
    endSpan(request, reply.statusCode, options);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    endSpan(request, options.abortStatus(request.raw), options);
    done();
  });
}
