import type { FastifyInstance, FastifyRequest } from 'fastify';

/** The status nginx made the convention for "the client closed the request before the answer". */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * One log line per request, written when the response is done. Fastify's default is two lines
 * (received and completed), which under load costs more than the access check itself. Only the
 * method, the path without its query string (a caller may put anything there), the status and the
 * duration are logged: never headers or bodies.
 */
export function registerAccessLog(app: FastifyInstance): void {
  const line = (request: FastifyRequest, statusCode: number, ms?: number) => {
    // The URL as sent, also for a request the router could not place (answered by another route).
    const url = request.originalUrl;
    const query = url.indexOf('?');
    request.log.info(
      { method: request.method, path: query === -1 ? url : url.slice(0, query), statusCode, ms },
      'request',
    );
  };
  app.addHook('onResponse', (request, reply, done) => {
    line(request, reply.statusCode, Math.round(reply.elapsedTime * 10) / 10);
    done();
  });
  // A request whose client left before it had fully arrived has no response to wait for.
  app.addHook('onRequestAbort', (request, done) => {
    line(request, CLIENT_CLOSED_REQUEST);
    done();
  });
}
