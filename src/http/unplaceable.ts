import { maxHeaderSize, ServerResponse, STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { markCutOff } from './access-log.js';
import { problemBody } from './error-handler.js';
import { countHttpRequest, type Metrics } from './metrics.js';
import { fieldProblem, HttpProblem, noSuchRoute } from './problem.js';
import { newRequestId, requestIdOf } from './request-id.js';
import { SECURITY_HEADER_LINES } from './security-policy.js';

/**
 * Requests the router cannot place (docs/api/limits.md) are answered by the not-found route, so that
 * they pass the same hooks as any request: X-Request-Id, the per-address limit, the access log and
 * the metrics. What the router refused is remembered per request and answered there.
 */
const UNPLACEABLE_PATH = '/.unplaceable';
const refused = new WeakMap<IncomingMessage, { problem: HttpProblem; url: string }>();

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

/**
 * The credential proxy's routes take a path of their own after `/proxy/` and refuse what climbs in
 * it themselves, with `400 validation_failed` after the access gate (docs/api/oauth.md,
 * src/oauth/proxy.ts); only the route's own part of the path is checked here.
 */
const OWN_PATH_ROUTE = /^(\/api\/v1\/integrations\/connections\/[^/]*\/proxy\/)/;

/** The part of a path whose dot segments no route judges: all of it, but for the proxy's own path. */
function routedPart(path: string): string {
  return OWN_PATH_ROUTE.exec(path)?.[1] ?? path;
}

function refuse(request: IncomingMessage, problem: HttpProblem): void {
  refused.set(request, { problem, url: request.url ?? '/' });
  request.url = UNPLACEABLE_PATH;
}

/**
 * What no route can take, known before routing: CONNECT (this service is no proxy), an HTTP/1.1
 * request without Host (RFC 9112 §3.2; Node's own check answers without a request ID, so it is
 * off), and dot segments (but in the credential proxy's own path).
 */
function refusedBeforeRouting(request: IncomingMessage, url: string): HttpProblem | undefined {
  if (request.method === 'CONNECT') return noSuchRoute();
  if (request.headers.host === undefined && request.httpVersion === '1.1')
    return fieldProblem('headers.host', 'is required in HTTP/1.1');
  const query = url.indexOf('?');
  return hasDotSegment(routedPart(query === -1 ? url : url.slice(0, query))) ? noSuchRoute() : undefined;
}

/** Fastify's `rewriteUrl`: runs before routing, on every request. */
export function rewriteUnplaceable(request: IncomingMessage): string {
  const earlier = refused.get(request);
  // Sent back to the router by frameworkErrors: the access log shows what the client asked for.
  if (earlier) (request as { originalUrl?: string }).originalUrl = earlier.url;
  const url = request.url ?? '/';
  const problem = earlier ? undefined : refusedBeforeRouting(request, url);
  if (!problem) return url;
  refuse(request, problem);
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
 * route takes is read, its body included, whatever its method, but for what the not-found
 * handler serves (the web UI's pages), which never reads a body either.
 */
export function registerUnplaceable(
  app: FastifyInstance,
  /** Unmatched requests the not-found handler answers itself (the web UI's pages). */
  answeredWhenUnmatched: (method: string, url: string) => boolean = () => false,
): void {
  app.addHook('onRequest', async (request) => {
    if (!request.is404) return;
    const earlier = refused.get(request.raw);
    if (earlier) throw earlier.problem;
    if (!answeredWhenUnmatched(request.method, request.url)) throw noSuchRoute();
  });
}

/**
 * Requests Node would answer itself, bare (no request ID, not logged, not counted), go through the
 * router like any other: CONNECT, which Node hands over as a raw socket (and destroys unanswered
 * when no one listens), is refused there (404); an `Expect` other than `100-continue`, which Node
 * answers 417, is ignored as RFC 9110 §10.1.1 allows: the request is answered as without it.
 */
export function registerNodeAnswers(app: FastifyInstance): void {
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) =>
    app.routing(request, response),
  );
  app.server.on('connect', (request: IncomingMessage, socket: Socket) => {
    const response = new ServerResponse(request);
    response.shouldKeepAlive = false;
    response.assignSocket(socket);
    // Nothing else will read from this socket: it ends with the answer.
    response.on('finish', () => socket.destroySoon());
    app.routing(request, response);
  });
}

/** The problem for what Node's parser refused; a method it does not know is 404 like any other. */
function clientProblem(code: string | undefined): HttpProblem {
  switch (code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new HttpProblem('request_timeout', 'The request did not arrive in time.');
    case 'HPE_HEADER_OVERFLOW':
      // A URL too long to read is a malformed URL (docs/api/limits.md), and headers that large are no better.
      return new HttpProblem(
        'validation_failed',
        `The request line and headers are longer than ${maxHeaderSize} bytes.`,
      );
    case 'HPE_INVALID_METHOD':
      return noSuchRoute();
    default:
      return new HttpProblem('validation_failed', 'The request is not valid HTTP/1.1.');
  }
}

function writeProblem(socket: Socket, problem: HttpProblem, requestId: string): void {
  const body = JSON.stringify(problemBody(problem, requestId));
  const head = [
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}`,
    `x-request-id: ${requestId}`,
    'x-content-type-options: nosniff',
    ...SECURITY_HEADER_LINES,
    'content-type: application/problem+json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ];
  if (socket.writable) socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/**
 * A request a route is already on, whose body Node could not read (it timed out, or is not valid
 * HTTP/1.1), is answered with that request's ID; the route's abort hooks log and count it with
 * that status. Once its answer has begun, or if its body had fully arrived (the error is then a
 * pipelined request's behind it), nothing can be written without corrupting the stream.
 */
function answerInFlight(error: ConnectionError, socket: Socket, response: ServerResponse): void {
  const requestId = requestIdOf(response.req);
  if (!response.headersSent && !response.req.complete && requestId !== undefined) {
    const problem = clientProblem(error.code);
    markCutOff(response.req, problem.status);
    writeProblem(socket, problem, requestId);
  }
  socket.destroy(error);
}

/**
 * Fastify's `clientErrorHandler`: a request Node's parser refused before any route could see it,
 * or one that did not fully arrive in time. Each is answered in problem format with a request ID,
 * logged and counted, then its connection is closed.
 */
export function answerClientError(log: Logger, metrics: Metrics) {
  return (error: ConnectionError, socket: Socket): void => {
    // The client is gone, or ended its side mid-request (its request is logged and counted as
    // aborted, 499, by the hooks of the route it was on): there is no one to answer.
    if (error.code === 'ECONNRESET' || error.code === 'HPE_INVALID_EOF_STATE' || socket.destroyed) {
      socket.destroy();
      return;
    }
    const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (inFlight) {
      answerInFlight(error, socket, inFlight);
      return;
    }
    const requestId = newRequestId();
    const problem = clientProblem(error.code);
    log.info({ requestId, method: 'UNPARSED', statusCode: problem.status, ms: 0 }, 'request');
    countHttpRequest(metrics, { method: 'UNPARSED', route: 'unmatched', status: problem.status, seconds: 0 });
    writeProblem(socket, problem, requestId);
    socket.destroy(error);
  };
}
