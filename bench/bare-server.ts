import Fastify from 'fastify';

// The ceiling: a Fastify 5 route that does nothing, on the same machine and Node as hubgate.
const app = Fastify({ logger: false });
app.get('/', async () => ({ status: 'ok' }));
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${address}\n`);
