import Fastify from 'fastify';
import pino from 'pino';

// The ceiling: a Fastify 5 route that does nothing, on the same machine and Node as hubgate.
// With BARE_LOG=1 it also writes one pino access line per request to standard output, as hubgate
// does, to show how much of the gap is the log line alone.
const logged = process.env.BARE_LOG === '1';
// Fastify's own two lines per request (received, completed) are off: the one line is the hook's.
const app = Fastify(
  logged
    ? { loggerInstance: pino(pino.destination({ dest: 1, sync: false })), disableRequestLogging: true }
    : { logger: false },
);
if (logged) {
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({ method: request.method, path: request.url, statusCode: reply.statusCode }, 'request');
    done();
  });
}
app.get('/', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
// Ends cleanly on SIGTERM (the benchmark's stop), so that BENCH_NODE_ARGS="--cpu-prof" writes a profile.
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
