import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  benchTenant,
  buildHubgate,
  buildOfCommit,
  combinedTurns,
  freePort,
  freshDatabase,
  load,
  prepareHubgate,
  startProcess,
  type LoadResult,
} from './support.js';

/**
 * Issue 28: what tracing costs (docs/operators/telemetry.md). One run, three servers: a bare Fastify
 * route (the ceiling), hubgate with tracing off, and hubgate with tracing on, exporting over
 * http/protobuf to an OTLP sink in this process on 127.0.0.1. Two routes on each hubgate: an
 * authenticated GET (the access path) and a publish (a server span, a publish span, the context
 * stored with the event). The cases take turns (BENCH_ROUNDS), so load elsewhere falls on all alike.
 *
 * "Off costs nothing" is measured against the build before tracing: BENCH_BEFORE (default 874ccb3,
 * the last commit before issue 28; empty to skip) is built in a temporary folder and serves the same
 * database beside the others (its code ignores the column tracing added).
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 3)));
const BEFORE = process.env.BENCH_BEFORE ?? '874ccb3';

/** An OTLP/HTTP collector that takes everything and keeps count: the cost of exporting, not of a collector. */
async function startSink() {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts: () => ({ exports, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const db = await freshDatabase();
const env = {
  DATABASE_URL: db.url,
  HUBGATE_SECRET_KEY: randomBytes(32).toString('base64'),
  // A limit no benchmark reaches: this measures tracing, not the limiter's refusals.
  RATE_LIMIT_PER_MINUTE: '100000000',
};
buildHubgate();
const sink = await startSink();
const results: LoadResult[] = [];
try {
  const plt = prepareHubgate(env);
  const bare = await startProcess(['bench/bare-server.ts'], {}, await freePort(), '/');
  const before = BEFORE
    ? await startProcess(['dist/main.js', 'serve'], env, await freePort(), '/readyz', buildOfCommit(BEFORE))
    : undefined;
  const off = await startProcess(['dist/main.js', 'serve'], env, await freePort(), '/readyz');
  const on = await startProcess(
    ['dist/main.js', 'serve'],
    { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url },
    await freePort(),
    '/readyz',
  );
  try {
    const { keySecret } = await benchTenant(
      off.baseUrl,
      plt,
      ['integrations', 'integration_hub'],
      ['integrations:OPERATOR', 'integration_hub:READER'],
    );
    const bearer = { authorization: `Bearer ${keySecret}` };
    const cases: Array<{ label: string; run: (seconds: number) => Promise<LoadResult> }> = [
      {
        label: '(a) bare Fastify route',
        run: (s) => load('', `${bare.baseUrl}/`, { connections: CONNECTIONS, seconds: s }),
      },
    ];
    const hubgates = [
      ...(before ? [[`${BEFORE}, before tracing`, before] as const] : []),
      ['tracing off', off] as const,
      ['tracing on', on] as const,
    ];
    for (const [name, server] of hubgates) {
      const health = `${server.baseUrl}/api/v1/automation/health`;
      cases.push({
        label: `GET /automation/health, tnt_ key, ${name}`,
        run: (s) => load('', health, { connections: CONNECTIONS, seconds: s, headers: bearer }),
      });
      cases.push({
        label: `POST /integrations/events, ${name}`,
        run: (s) =>
          load('', `${server.baseUrl}/api/v1/integrations/events`, {
            connections: CONNECTIONS,
            seconds: s,
            headers: bearer,
            body: { type: 'order.created', data: { orderId: 'A-1001', total: 42 } },
          }),
      });
    }
    for (const { run } of cases) await run(2); // warm-up
    const turns = new Map<string, LoadResult[]>();
    const seconds = Math.max(1, Math.round(SECONDS / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
      for (const { label, run } of cases) turns.set(label, [...(turns.get(label) ?? []), await run(seconds)]);
    }
    for (const { label } of cases) results.push(combinedTurns(label, turns.get(label) ?? []));
  } finally {
    await Promise.all([bare, before, off, on].map((server) => server?.stop()));
  }
} finally {
  await sink.close();
  await db.drop();
}

const { exports, bytes } = sink.counts();
console.log(
  `\ntelemetry benchmark: ${CONNECTIONS} connections, ${SECONDS} s each in ${ROUNDS} turns, PostgreSQL; ` +
    `tracing on exported ${exports} batches, ${(bytes / 1024 / 1024).toFixed(1)} MiB`,
);
console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(`| ${r.label} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`);
}
