import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import {
  benchTenant,
  buildHubgate,
  freePort,
  freshDatabase,
  httpJson,
  prepareHubgate,
  startProcess,
} from './support.js';

/**
 * Issue 6's benchmark: EVENTS events published to hubgate on PostgreSQL and delivered to a local
 * receiver, against the same number of POSTs sent straight to that receiver with undici (the
 * ceiling), in one run. Prints events per second for both, their ratio, and publish-to-first-attempt
 * latency percentiles.
 */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
// Published and delivered before the measured run, so that it measures a warm process.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1_000);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 50);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
// BENCH_RATE=500 publishes at that steady rate instead of as fast as possible (the latency target).
const RATE = Number(process.env.BENCH_RATE ?? 0);
// BENCH_WORKERS=2 adds `hubgate worker` processes beside serve (which runs workers too).
const EXTRA_WORKERS = Math.max(0, Number(process.env.BENCH_WORKERS ?? 1) - 1);

buildHubgate();

// The receiver: records when each webhook-id first arrives.
const firstSeen = new Map<string, number>();
let received = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    received++;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string' && !firstSeen.has(id)) firstSeen.set(id, performance.now());
    res.end('ok');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

async function pool(count: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

const db = await freshDatabase();
const secretKey = randomBytes(32).toString('base64');
const env = {
  DATABASE_URL: db.url,
  HUBGATE_SECRET_KEY: secretKey,
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
};
try {
  const plt = prepareHubgate(env);
  const hub = await startProcess(
    ['dist/main.js', 'serve'],
    { ...env, LOG_LEVEL, RATE_LIMIT_PER_MINUTE: '100000000' },
    await freePort(),
    '/readyz',
  );
  const workers = await Promise.all(
    Array.from({ length: EXTRA_WORKERS }, async () =>
      startProcess(
        ['dist/main.js', 'worker'],
        { ...env, LOG_LEVEL: 'info' },
        await freePort(),
        /worker running/,
      ),
    ),
  );
  try {
    const { session, keySecret } = await benchTenant(
      hub.baseUrl,
      plt,
      ['integrations'],
      ['integrations:OPERATOR'],
    );
    const connection = await httpJson('POST', `${hub.baseUrl}/api/v1/integrations/connections`, session, {
      connectorKey: 'webhook',
      displayName: 'bench',
      url: receiverUrl,
    });
    await httpJson(
      'PUT',
      `${hub.baseUrl}/api/v1/integrations/connections/${connection.body.id}/credentials`,
      session,
      {},
    );
    const agent = new Agent({ connections: CONCURRENCY });
    const body = JSON.stringify({ type: 'bench.event', data: { hello: 'world', n: 1 } });

    // The ceiling: the same number of POSTs straight to the receiver.
    const ceilingStart = performance.now();
    await pool(EVENTS, CONCURRENCY, async () => {
      const r = await request(receiverUrl, {
        method: 'POST',
        body,
        dispatcher: agent,
        headers: { 'content-type': 'application/json' },
      });
      await r.body.dump();
    });
    const ceilingSeconds = (performance.now() - ceilingStart) / 1000;

    // hubgate: publish, and wait until every event has reached the receiver. A warm-up run first
    // (JIT, pools opening their connections), reported on its own line, not in the figures.
    async function publishAll(count: number) {
      firstSeen.clear();
      received = 0;
      const publishedAt = new Map<string, number>();
      const start = performance.now();
      await pool(count, CONCURRENCY, async (i) => {
        if (RATE > 0) {
          const due = start + (i * 1000) / RATE;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        const sent = performance.now();
        const r = await request(`${hub.baseUrl}/api/v1/integrations/events`, {
          method: 'POST',
          body,
          dispatcher: agent,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${keySecret}` },
        });
        const answer = (await r.body.json()) as { id: string };
        publishedAt.set(answer.id, sent);
      });
      const publishSeconds = (performance.now() - start) / 1000;
      while (firstSeen.size < count) await new Promise((r) => setTimeout(r, 20));
      const deliverSeconds = (performance.now() - start) / 1000;
      const latencies = [...publishedAt]
        .map(([id, at]) => (firstSeen.get(id) ?? at) - at)
        .sort((a, b) => a - b);
      return { publishSeconds, deliverSeconds, latencies, duplicates: received - count };
    }
    const warm = await publishAll(WARMUP);
    const { publishSeconds, deliverSeconds, latencies, duplicates } = await publishAll(EVENTS);
    await agent.close();

    const ceilingRate = EVENTS / ceilingSeconds;
    const hubRate = EVENTS / deliverSeconds;
    console.log(
      `\ndelivery benchmark: ${EVENTS} events, ${CONCURRENCY} concurrent publishers, ` +
        `${RATE > 0 ? `at ${RATE}/s` : 'as fast as possible'}, serve + ${EXTRA_WORKERS} worker process(es), PostgreSQL`,
    );
    console.log('| case | events/s | vs ceiling |');
    console.log('|---|---:|---:|');
    console.log(`| ceiling: undici POSTs straight to the receiver | ${ceilingRate.toFixed(0)} | 100 % |`);
    console.log(
      `| hubgate: published and delivered (all received) | ${hubRate.toFixed(0)} | ${((100 * hubRate) / ceilingRate).toFixed(0)} % |`,
    );
    console.log(
      `warm-up (not counted): ${WARMUP} events, ${(WARMUP / warm.deliverSeconds).toFixed(0)} events/s, ` +
        `publish-to-first-attempt p99 ${percentile(warm.latencies, 0.99).toFixed(0)} ms, max ${percentile(warm.latencies, 1).toFixed(0)} ms`,
    );
    console.log(`publish alone: ${(EVENTS / publishSeconds).toFixed(0)} events/s; ${duplicates} duplicates`);
    console.log(
      `publish-to-first-attempt: p50 ${percentile(latencies, 0.5).toFixed(0)} ms, p90 ${percentile(latencies, 0.9).toFixed(0)} ms, p99 ${percentile(latencies, 0.99).toFixed(0)} ms, max ${percentile(latencies, 1).toFixed(0)} ms ${RATE > 0 ? `(steady ${RATE}/s)` : '(publishing as fast as possible: a backlog)'}`,
    );
  } finally {
    await Promise.all([hub.stop(), ...workers.map((w) => w.stop())]);
  }
} finally {
  await db.drop();
  receiver.close();
}
