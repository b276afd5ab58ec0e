import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/database.js';
import { CLIENT_CLOSED_REQUEST } from './access-log.js';
import { HttpProblem, noSuchRoute, PROBLEMS } from './problem.js';
import { refusalFields } from './rate-limit-fields.js';
import { validationProblem } from './validation.js';

const PROBLEM_CONTENT_TYPE = 'application/problem+json';
const RETRY_AFTER_UNAVAILABLE_SECONDS = '5';

/** Fastify's own errors that have a code of docs/api/errors.md. */
function fromFastifyError(error: FastifyError): HttpProblem | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpProblem('unsupported_media_type', 'Request bodies must be application/json.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new HttpProblem('payload_too_large', 'The request body is larger than 1 MiB.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new HttpProblem('invalid_json', 'The request body is not valid JSON.');
    default:
      break;
  }
  if (error.validation) return validationProblem(error.validation, error.validationContext ?? 'body');
  if (error.statusCode === 400 && error instanceof SyntaxError) {
    return new HttpProblem('invalid_json', 'The request body is not valid JSON.');
  }
  return undefined;
}

/** The RFC 9457 body of docs/api/errors.md. */
export function problemBody(problem: HttpProblem, requestId: string) {
  return {
    type: 'about:blank',
    title: PROBLEMS[problem.code].title,
    status: problem.status,
    code: problem.code,
    detail: problem.detail ?? null,
    requestId,
    ...(problem.errors ? { errors: problem.errors } : {}),
  };
}

/**
 * Every 429 carries Retry-After and the rate-limit fields (docs/api/rate-limits.md): a problem that
 * does not set them itself (the gate does) gets them from its Retry-After and the limit it names,
 * over whatever fields an earlier count (the gate's, per address) put on the reply.
 */
function headersOf(problem: HttpProblem): Record<string, string> {
  if (problem.status !== 429 || problem.headers['ratelimit-policy']) return problem.headers;
  const retryAfter = Math.max(1, Number.parseInt(problem.headers['retry-after'] ?? '', 10) || 1);
  return {
    ...refusalFields(retryAfter, problem.limit),
    ...problem.headers,
    'retry-after': String(retryAfter),
  };
}

export function sendProblem(reply: FastifyReply, problem: HttpProblem): FastifyReply {
  for (const [name, value] of Object.entries(headersOf(problem))) reply.header(name, value);
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problemBody(problem, reply.request.id));
}

/**
 * A Fastify or plugin error with a client status that has no meaning of its own in docs/api/errors.md
 * (FST_ERR_ROUTE_MISSING_CONTENT_TYPE, @fastify/static's 403 for a path it will not serve): still
 * the client's fault, never a 500. A path refused is answered as one that does not exist.
 */
function fromClientStatus(error: FastifyError): HttpProblem | undefined {
  const status = error.statusCode ?? 500;
  if (status < 400 || status >= 500) return undefined;
  if (status === 403 || status === 404) return noSuchRoute();
  return new HttpProblem('validation_failed', 'The request is malformed.');
}

/** Answers a request no route takes itself (true), or leaves it to be a 404 (false). */
export type UnmatchedAnswer = (request: FastifyRequest, reply: FastifyReply) => boolean;

/**
 * The one place that shapes an error response (docs/api/errors.md). A request no route takes is a 404,
 * unless `answerUnmatched` serves it (the web UI's pages).
 */
export function registerErrorHandling(app: FastifyInstance, answerUnmatched?: UnmatchedAnswer): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // A client that went away while its body was arriving (Node reports ECONNRESET 'aborted') is
    // neither a database outage nor a server error: nobody is left to answer.
    // The access log and the metrics record it once, as 499, from their onRequestAbort hooks.
    if (request.raw.aborted) return reply.code(CLIENT_CLOSED_REQUEST).send();
    let problem = error instanceof HttpProblem ? error : fromFastifyError(error);
    if (!problem && isDatabaseUnavailable(error)) {
      request.log.warn({ err: { message: error.message, code: error.code } }, 'database unavailable');
      problem = new HttpProblem('unavailable', 'The database is unavailable; try again shortly.', {
        headers: { 'retry-after': RETRY_AFTER_UNAVAILABLE_SECONDS },
      });
    }
    problem ??= fromClientStatus(error);
    if (!problem) {
      // Only the message and stack go to the log: never the request body, which may hold secrets.
      request.log.error(
        { err: { message: error.message, stack: error.stack, code: error.code } },
        'unexpected error',
      );
      problem = new HttpProblem('internal');
    }
    return sendProblem(reply, problem);
  });

  app.setNotFoundHandler((request, reply) =>
    answerUnmatched?.(request, reply) ? reply : sendProblem(reply, noSuchRoute()),
  );
}
