import { type IncomingMessage, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { countHttpRequest, type Metrics } from '../platform/metrics.js';
import { problemBody } from './error-handler.js';
import { fieldProblem, HttpProblem } from './problem.js';
import { newRequestId } from './request-id.js';

/**
 * Requests the router cannot place (contract §14) are answered by the not-found route, so that
 * they pass the same hooks as any request: X-Request-Id, the per-address limit, the access log and
 * the metrics. What the router refused is remembered per request and answered there.
 */
const UNPLACEABLE_PATH = '/.unplaceable';
const refused = new WeakMap<IncomingMessage, { problem: HttpProblem; url: string }>();

const noSuchRoute = () => new HttpProblem('not_found', 'No such route.');

/**
 * A path with a `.` or `..` segment, written as is or percent-encoded (`%2e%2e`, `..%2f`, `..%5c`),
 * names nothing this service serves; it must never reach a file handler that would resolve it.
 */
function hasDotSegment(path: string): boolean {
  if (!path.includes('.') && !/%2e/i.test(path)) return false;
  return path.split('/').some((segment) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return false; // the router refuses it as a malformed URL
    }
    return decoded.split(/[/\\]/).some((part) => part === '.' || part === '..');
  });
}

function refuse(request: IncomingMessage, problem: HttpProblem): void {
  refused.set(request, { problem, url: request.url ?? '/' });
  request.url = UNPLACEABLE_PATH;
}

/** Fastify's `rewriteUrl`: runs before routing, on every request. */
export function rewriteUnplaceable(request: IncomingMessage): string {
  const earlier = refused.get(request);
  // Sent back to the router by frameworkErrors: the access log shows what the client asked for.
  if (earlier) (request as { originalUrl?: string }).originalUrl = earlier.url;
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  if (earlier || !hasDotSegment(query === -1 ? url : url.slice(0, query))) return url;
  refuse(request, noSuchRoute());
  return UNPLACEABLE_PATH;
}

/** Fastify's `frameworkErrors`: a URL the router could not decode, or a parameter over 100 characters. */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const problem =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? fieldProblem('params', 'a path parameter is longer than 100 characters')
      : error.code === 'FST_ERR_BAD_URL'
        ? fieldProblem('url', 'is not valid percent-encoded UTF-8')
        : new HttpProblem('internal');
  refuse(request.raw, problem);
  request.server.routing(request.raw, reply.raw);
}

/**
 * After the access gate (so the not-found route is limited per address): nothing of a request no
 * route takes is read, its body included, whatever its method.
 */
export function registerUnplaceable(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (request.is404) throw refused.get(request.raw)?.problem ?? noSuchRoute();
  });
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused before any route could see it.
 * A method it does not know (`get`, `FOO`) is an unknown method, so 404 like any other; other
 * malformed requests are 400. Timeouts (408) and oversized headers (431) keep their status.
 * Each is answered in problem format with a request ID, logged and counted.
 */
export function answerClientError(log: Logger, metrics: Metrics) {
  return (error: ConnectionError, socket: Socket): void => {
    // The client is gone: there is no one to answer.
    // The client is gone, or ended its side mid-request (its request is logged and counted as
    // aborted, 499, by the hooks of the route it was on): there is no one to answer.
    if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || socket.destroyed) {
      socket.destroy();
      return;
    }
    const requestId = newRequestId();
    const status =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 408
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? 431
          : error.code === 'HPE_INVALID_METHOD'
            ? 404
            : 400;
    const problem =
      status === 404
        ? noSuchRoute()
        : status === 400
          ? new HttpProblem('validation_failed', 'The request is not valid HTTP/1.1.')
          : undefined;
    const body = problem ? JSON.stringify(problemBody(problem, requestId)) : '';
    const head = [
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
      `x-request-id: ${requestId}`,
      'x-content-type-options: nosniff',
      ...(problem ? ['content-type: application/problem+json; charset=utf-8'] : []),
      `content-length: ${Buffer.byteLength(body)}`,
      'connection: close',
    ];
    log.info({ requestId, method: 'UNPARSED', statusCode: status, ms: 0 }, 'request');
    countHttpRequest(metrics, { method: 'UNPARSED', route: 'unmatched', status, seconds: 0 });
    if (socket.writable) socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
    socket.destroy(error);
  };
}
