import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import {
  benchTenant,
  buildHubgate,
  freePort,
  freshDatabase,
  httpJson,
  prepareHubgate,
  startProcess,
  type LoadResult,
} from './support.js';

/**
 * Issue 42's benchmark, one `hubgate serve` on PostgreSQL, one run:
 * 1. (k) POST /api/v1/integrations/events with a tnt_ key, beside (s) GitHub-signed requests to
 *    sources' ingest URLs, each verified, de-duplicated and published as an event (every request a
 *    new delivery ID, signed by the load generator as GitHub signs). Goal: (s) ≥ 80 % of (k).
 *    A source takes at most 1,000 requests a second (§22), so (s) spreads over SOURCES sources.
 * 2. Tenant B's publish latency (POST /integrations/events, a fixed rate) alone, then while the
 *    load generator floods a source of tenant A with forged signatures. Goal: no measurable cost.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SOURCES = Number(process.env.BENCH_SOURCES ?? 8);
/** Tenant B's steady publish rate in phase 2, requests a second. */
const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 200);

const db = await freshDatabase();
const env = { DATABASE_URL: db.url, HUBGATE_SECRET_KEY: randomBytes(32).toString('base64') };
buildHubgate();

interface Flood {
  rps: number;
  statuses: Record<string, number>;
}

const results: LoadResult[] = [];
const latency: LoadResult[] = [];
let flood: Flood | undefined;
let published = { key: 0, sources: 0 };

interface Made {
  path: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * autocannon POSTing a request made afresh for each one (`make`): both sides of (k)/(s) build their
 * body per request in the load generator, so that its cost falls on both alike.
 */
async function perRequestLoad(
  label: string,
  origin: string,
  make: () => Made,
  seconds: number,
  connections: number,
): Promise<LoadResult & { statuses: Record<string, number> }> {
  const statuses: Record<string, number> = {};
  const result = await autocannon({
    url: origin,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({ ...request, ...make() }),
        onResponse: (status) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
        },
      },
    ],
  });
  return {
    label,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    statuses,
  };
}

const pushBody = () => JSON.stringify({ ref: 'refs/heads/main', after: randomUUID(), commits: [] });

/** A new GitHub push delivery per request, round-robin over `urls`, signed with `secret` as GitHub signs. */
function githubDeliveries(urls: string[], secret: string): () => Made {
  let n = 0;
  return () => {
    const body = pushBody();
    return {
      path: new URL(urls[n++ % urls.length] ?? '').pathname,
      body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
    };
  };
}

/** The same push as an event published with a key: `{type, data}` to POST /integrations/events. */
const keyedEvents =
  (key: string): (() => Made) =>
  () => ({
    path: '/api/v1/integrations/events',
    body: `{"type":"github.push","data":${pushBody()}}`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
  });

/** Tenant B's publishes at a fixed rate: latency, not throughput. */
const steady = (label: string, url: string, key: string) =>
  autocannon({
    url,
    connections: 10,
    duration: SECONDS,
    overallRate: STEADY_RATE,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'order.paid', data: { orderId: 'A-1', amount: 4200 } }),
  }).then((r): LoadResult => ({
    label,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  }));

try {
  const plt = prepareHubgate(env);
  const hub = await startProcess(
    ['dist/main.js', 'serve'],
    // A key limit no benchmark reaches: this measures publishing, not the limiter's refusals.
    { ...env, LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '100000000' },
    await freePort(),
    '/readyz',
  );
  try {
    const a = await benchTenant(hub.baseUrl, plt, ['integrations'], ['integrations:OPERATOR']);
    const secret = `gh-${randomUUID()}`;
    const ingestUrls: string[] = [];
    for (let i = 0; i < SOURCES; i++) {
      const created = await httpJson('POST', `${hub.baseUrl}/api/v1/integrations/sources`, a.session, {
        name: `bench ${i}`,
        scheme: 'github',
        secret,
        maxPerSecond: 1000,
      });
      if (created.status !== 201) throw new Error(`creating a source: ${JSON.stringify(created.body)}`);
      ingestUrls.push(`${hub.baseUrl}/ingest/${created.body.id}`);
    }
    const eventsUrl = `${hub.baseUrl}/api/v1/integrations/events`;

    const keyed = keyedEvents(a.keySecret);
    const signed = githubDeliveries(ingestUrls, secret);
    await perRequestLoad('warm-up', hub.baseUrl, keyed, 2, CONNECTIONS);
    await perRequestLoad('warm-up', hub.baseUrl, signed, 2, CONNECTIONS);
    const keyCase = await perRequestLoad(
      '(k) POST /integrations/events, tnt_ key',
      hub.baseUrl,
      keyed,
      SECONDS,
      CONNECTIONS,
    );
    const sourceCase = await perRequestLoad(
      `(s) POST /ingest/:id, GitHub-signed, ${SOURCES} sources`,
      hub.baseUrl,
      signed,
      SECONDS,
      CONNECTIONS,
    );
    results.push(keyCase, sourceCase);
    published = { key: keyCase.statuses['202'] ?? 0, sources: sourceCase.statuses['202'] ?? 0 };

    // Phase 2: another tenant's publishes, alone and beside a flood of forged signatures.
    const b = await benchTenant(hub.baseUrl, plt, ['integrations'], ['integrations:OPERATOR']);
    const floodSource = ingestUrls[0] ?? '';
    latency.push(await steady('(b) tenant B publishes, alone', eventsUrl, b.keySecret));
    const [withFlood, flooded] = await Promise.all([
      steady('(b) tenant B publishes, during the flood', eventsUrl, b.keySecret),
      perRequestLoad(
        'flood',
        hub.baseUrl,
        githubDeliveries([floodSource], 'not the secret'),
        SECONDS,
        CONNECTIONS,
      ),
    ]);
    latency.push(withFlood);
    flood = { rps: flooded.rps, statuses: flooded.statuses };
  } finally {
    await hub.stop();
  }
} finally {
  await db.drop();
}

const row = (r: LoadResult) =>
  `| ${r.label} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`;
console.log(`\ningest benchmark: ${CONNECTIONS} connections, ${SECONDS} s each, PostgreSQL`);
console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of results) console.log(row(r));
const [key, sources] = results;
if (key && sources) {
  const ratio = sources.rps / key.rps;
  console.log(
    `goal: (s) ≥ 80 % of (k): ${(ratio * 100).toFixed(0)} % ${ratio >= 0.8 ? 'met' : 'NOT met'} ` +
      `(${published.sources} events published through sources, ${published.key} through the key)`,
  );
}
console.log(`\nanother tenant's publish latency, ${STEADY_RATE} req/s fixed, 10 connections`);
console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of latency) console.log(row(r));
if (flood) {
  console.log(
    `flood: ${Math.round(flood.rps)} forged req/s to one source, answers ${JSON.stringify(flood.statuses)}`,
  );
}
