import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { accessLineWriter, type AccessLine } from '../logger.js';

/** The status nginx made the convention for "the client closed the request before the answer". */
export const CLIENT_CLOSED_REQUEST = 499;

// Requests the server answered itself and cut off before they fully arrived (a timeout, a body
// Node could not parse), with the status they were answered.
const cutOff = new WeakMap<IncomingMessage, number>();

/** The request was answered `status` and its connection closed: it ends as an abort, not the client's. */
export function markCutOff(request: IncomingMessage, status: number): void {
  cutOff.set(request, status);
}

/** The status an unfinished request is logged and counted with: what the server answered, else 499. */
export const abortStatus = (request: IncomingMessage): number => cutOff.get(request) ?? CLIENT_CLOSED_REQUEST;

/**
 * One log line per request, written when the response is done. Fastify's default is two lines
 * (received and completed), which under load costs more than the access check itself. Only the
 * method, the path without its query string (a caller may put anything there), the status and the
 * duration are logged, with the request ID: never headers or bodies. The line is written by
 * accessLineWriter (logger.ts), not through the request's child logger: the same line, for a
 * fraction of the cost (docs/benchmarks.md).
 */
export function registerAccessLog(
  app: FastifyInstance,
  logger: Logger,
  // With tracing on: the request's server span, whose IDs the line carries (docs/operators/telemetry.md).
  traceOf?: (request: FastifyRequest) => AccessLine['trace'],
): void {
  const write = accessLineWriter(logger);
  const line = (request: FastifyRequest, statusCode: number, ms?: number) => {
    // The URL as sent, also for a request the router could not place (answered by another route).
    const url = request.originalUrl;
    const query = url.indexOf('?');
    write({
      requestId: request.id,
      method: request.method,
      path: query === -1 ? url : url.slice(0, query),
      statusCode,
      ms,
      trace: traceOf?.(request),
    });
  };
  app.addHook('onResponse', (request, reply, done) => {
    line(request, reply.statusCode, Math.round(reply.elapsedTime * 10) / 10);
    done();
  });
  // A request that never fully arrived (its client left, or it timed out) has no response to wait for.
  app.addHook('onRequestAbort', (request, done) => {
    line(request, abortStatus(request.raw));
    done();
  });
}
