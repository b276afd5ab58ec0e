import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import { run, type Task } from 'graphile-worker';
import { Agent, request } from 'undici';

/**
 * The do-it-yourself peer of the delivery benchmark: what a team would write in an afternoon instead of
 * hubgate, in one process. Fastify 5 takes `POST /events` (bearer token, body `{type,data}`), adds one
 * graphile-worker job per event in the request and answers 202 with the event's ID; a graphile-worker
 * task in the same process POSTs the event to PEER_RECEIVER_URL with undici, signed the Standard
 * Webhooks way (`v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`). graphile-worker creates its
 * schema in DATABASE_URL on start; its own pg pool serves both the API's addJob and the workers.
 */
const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const connectionString = env('DATABASE_URL');
const receiverUrl = env('PEER_RECEIVER_URL');
const signingKey = Buffer.from(env('PEER_WEBHOOK_SECRET').replace(/^whsec_/, ''), 'base64');
const expectedToken = createHash('sha256').update(env('PEER_TOKEN')).digest();
const concurrency = Number(process.env.PEER_CONCURRENCY ?? 32);
// graphile-worker's advice: `concurrentJobs + 2` connections, at least 10.
const maxPoolSize = Number(process.env.PEER_POOL_SIZE ?? Math.max(10, concurrency + 2));
// graphile-worker's batching, off by default as in graphile-worker itself (-1): PEER_LOCAL_QUEUE=33
// fetches that many jobs at once, PEER_COMPLETE_BATCH_DELAY=0 completes jobs in batches.
const localQueueSize = Number(process.env.PEER_LOCAL_QUEUE ?? -1);
const completeJobBatchDelay = Number(process.env.PEER_COMPLETE_BATCH_DELAY ?? -1);

interface DeliverPayload {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

const agent = new Agent({ connections: concurrency });

const deliver: Task = async (payload) => {
  const { id, type, createdAt, data } = payload as DeliverPayload;
  const body = JSON.stringify({ type, timestamp: createdAt, data });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', signingKey).update(`${id}.${timestamp}.${body}`).digest('base64');
  const response = await request(receiverUrl, {
    method: 'POST',
    body,
    dispatcher: agent,
    headersTimeout: 15_000,
    bodyTimeout: 15_000,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${signature}`,
    },
  });
  await response.body.dump();
  // A throw is graphile-worker's retry with backoff.
  if (response.statusCode < 200 || response.statusCode >= 300) {
    throw new Error(`receiver answered ${response.statusCode}`);
  }
};

const runner = await run({
  preset: {
    worker: {
      connectionString,
      concurrentJobs: concurrency,
      maxPoolSize,
      completeJobBatchDelay,
      ...(localQueueSize > 1 ? { localQueue: { size: localQueueSize } } : {}),
    },
  },
  noHandleSignals: true,
  taskList: { deliver },
  // No cron: otherwise graphile-worker looks for a crontab file in the working directory.
  parsedCronItems: [],
});

function authorized(header: string | undefined): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  // Digests of equal length, so the comparison's time says nothing about the token.
  return timingSafeEqual(createHash('sha256').update(header.slice(7)).digest(), expectedToken);
}

const app = Fastify({ logger: false });
app.addHook('onRequest', async (request, reply) => {
  if (request.url.startsWith('/events') && !authorized(request.headers.authorization)) {
    return reply.code(401).send({ error: 'unauthorized' });
  }
});
app.post<{ Body: { type: string; data: Record<string, unknown> } }>(
  '/events',
  {
    schema: {
      body: {
        type: 'object',
        required: ['type', 'data'],
        additionalProperties: false,
        properties: {
          type: { type: 'string', minLength: 1, maxLength: 200 },
          data: { type: 'object' },
        },
      },
    },
  },
  async (request, reply) => {
    const id = `msg_${randomUUID()}`;
    const { type, data } = request.body;
    const payload: DeliverPayload = { id, type, createdAt: new Date().toISOString(), data };
    await runner.addJob('deliver', payload, { maxAttempts: 10 });
    return reply.code(202).send({ id });
  },
);
app.get('/healthz', async () => ({ status: 'ok' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  void (async () => {
    await app.close();
    await runner.stop();
    await agent.close();
    process.exit(0);
  })();
});
