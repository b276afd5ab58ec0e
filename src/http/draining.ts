import type { FastifyInstance } from 'fastify';

/**
 * Once `app.close()` begins, every answer still to go out carries `Connection: close`. Fastify
 * closes the listening socket and the connections idle at that moment; a kept-alive connection
 * whose request was in flight would otherwise stay open after its answer, holding the shutdown
 * until the 72 s keep-alive timeout. docs/decisions/0054-graceful-shutdown.md
 */
export function registerDraining(app: FastifyInstance): void {
  let draining = false;
  app.addHook('preClose', (done) => {
    draining = true;
    done();
  });
  // A callback: it runs for every answer, and a promise per request is work on every request's path.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });
}
