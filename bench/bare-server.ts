import Fastify from 'fastify';
import pino from 'pino';

// The ceiling: a Fastify 5 route that does nothing, on the same machine and Node as hubgate.
// With BARE_LOG=1 it also writes one pino access line per request to standard output, as hubgate
// does, to show how much of the gap is the log line alone.
const logged = process.env.BARE_LOG === '1';
const app = Fastify(
  logged ? { loggerInstance: pino(pino.destination({ dest: 1, sync: false })) } : { logger: false },
);
if (logged) {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({ method: request.method, path: request.url, statusCode: reply.statusCode }, 'request');
    done();
  });
}
app.get('/', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
