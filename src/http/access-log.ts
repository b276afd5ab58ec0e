import type { FastifyInstance } from 'fastify';

/**
 * One log line per request, written when the response is done. Fastify's default is two lines
 * (received and completed), which under load costs more than the access check itself. Only the
 * method, the path without its query string (a caller may put anything there), the status and the
 * duration are logged: never headers or bodies.
 */
export function registerAccessLog(app: FastifyInstance): void {
  app.addHook('onResponse', (request, reply, done) => {
    const query = request.url.indexOf('?');
    request.log.info(
      {
        method: request.method,
        path: query === -1 ? request.url : request.url.slice(0, query),
        statusCode: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
      },
      'request',
    );
    done();
  });
}
