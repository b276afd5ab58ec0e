import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import {
  benchTenant,
  buildHubgate,
  combinedTurns,
  freePort,
  freshDatabase,
  httpJson,
  prepareHubgate,
  startProcess,
  type LoadResult,
  type Server,
} from './support.js';

/**
 * Issue 30: the credential proxy (docs/api/oauth.md) beside its ceiling, in one run. A provider's API
 * and its token endpoint on 127.0.0.1 (a node:http server in a worker thread, so the load generator's
 * event loop does not serve it too); a client-credentials provider and connection on hubgate, whose
 * creation fetches the one token the run uses. Three calls, each straight to the API with undici (the
 * ceiling, sending the same bearer token itself) and through the proxy with a `tnt_` key of
 * integrations:OPERATOR, at the same concurrency: a GET of a small JSON body, a GET of ~64 KiB and a
 * POST of 16 KiB. The cases take turns (BENCH_ROUNDS) so that load elsewhere falls on all alike.
 *
 * BENCH_SYSTEMS picks the databases: `pglite` (the embedded default, DATA_DIR) always, `postgres` when
 * a database URL is given (BENCH_DATABASE_URL, TEST_DATABASE_URL or DATABASE_URL); both hubgates run
 * side by side and are loaded in turn.
 */
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 2)));
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
// freshDatabase() reads BENCH_DATABASE_URL, else TEST_DATABASE_URL; DATABASE_URL too, here.
const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
if (databaseUrl) process.env.BENCH_DATABASE_URL = databaseUrl;
const SYSTEMS = (process.env.BENCH_SYSTEMS ?? (databaseUrl ? 'pglite,postgres' : 'pglite'))
  .split(',')
  .filter(Boolean);
const SYSTEM_NAMES: Record<string, string> = { pglite: 'PGlite', postgres: 'PostgreSQL' };
if (SYSTEMS.some((s) => !(s in SYSTEM_NAMES))) {
  throw new Error(`BENCH_SYSTEMS: comma-separated, any of ${Object.keys(SYSTEM_NAMES).join(', ')}`);
}

const ACCESS_TOKEN = `bench-${randomBytes(12).toString('hex')}`;
const POST_BODY = JSON.stringify({ note: 'x'.repeat(16 * 1024 - 12) });

/**
 * The provider: POST /token answers a client-credentials token; under /v1, with that bearer token
 * (else 401), GET /small (~60 B of JSON), GET /large (~64 KiB of JSON), GET /large-gzip (the same,
 * gzip-compressed though no one asked: the proxy decodes it, decision 0065) and POST /echo (reads the
 * body, answers its length). GET /stats: what it was asked.
 */
const API_SOURCE = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const small = Buffer.from(JSON.stringify({ id: 'ord_1001', status: 'paid', total: 4200, currency: 'EUR' }));
const items = [];
for (let i = 0; JSON.stringify({ items }).length < 64 * 1024 - 80; i++) {
  items.push({ id: 'item_' + i, name: 'Widget ' + i, qty: i % 7, price: 1999 });
}
const large = Buffer.from(JSON.stringify({ items }));
const largeGzip = require('node:zlib').gzipSync(large);
const stats = { token: 0, api: 0, refused: 0 };
const json = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
};
createServer((req, res) => {
  let read = 0;
  req.on('data', (chunk) => (read += chunk.length));
  req.on('end', () => {
    if (req.method === 'POST' && req.url === '/token') {
      stats.token++;
      const body = { access_token: workerData.token, token_type: 'Bearer', expires_in: 86400 };
      return json(res, 200, Buffer.from(JSON.stringify(body)));
    }
    if (req.url === '/stats') return json(res, 200, Buffer.from(JSON.stringify(stats)));
    if (req.headers.authorization !== 'Bearer ' + workerData.token) {
      stats.refused++;
      return json(res, 401, Buffer.from('{"error":"invalid_token"}'));
    }
    stats.api++;
    if (req.method === 'GET' && req.url === '/v1/small') return json(res, 200, small);
    if (req.method === 'GET' && req.url === '/v1/large') return json(res, 200, large);
    if (req.method === 'GET' && req.url === '/v1/large-gzip') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': largeGzip.length });
      return res.end(largeGzip);
    }
    if (req.method === 'POST' && req.url === '/v1/echo') {
      return json(res, 200, Buffer.from(JSON.stringify({ received: read })));
    }
    json(res, 404, Buffer.from('{"error":"not_found"}'));
  });
}).listen(0, '127.0.0.1', function () {
  parentPort.postMessage(this.address().port);
});
`;

async function startApi(): Promise<{ url: string; close(): Promise<void> }> {
  const worker = new Worker(API_SOURCE, { eval: true, workerData: { token: ACCESS_TOKEN } });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return { url: `http://127.0.0.1:${port}`, close: () => worker.terminate().then(() => undefined) };
}

interface Call {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

/**
 * `CONCURRENCY` loops, each sending `call` to `url` and reading the whole answer, for `seconds`,
 * through one undici pool of as many connections: requests per second and latency percentiles in ms.
 */
async function measure(label: string, url: string, call: Call, seconds: number): Promise<LoadResult> {
  const { origin, pathname, search } = new URL(url);
  const pool = new Pool(origin, { connections: CONCURRENCY });
  const latencies: number[] = [];
  let non2xx = 0;
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const sent = performance.now();
        try {
          const r = await pool.request({ path: pathname + search, ...call });
          await r.body.arrayBuffer();
          if (r.statusCode < 200 || r.statusCode >= 300) non2xx++;
          latencies.push(performance.now() - sent);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((x, y) => x - y);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  const round = (ms: number) => Math.round(ms * 10) / 10;
  return {
    label,
    rps: latencies.length / elapsed,
    p50: round(at(0.5)),
    p99: round(at(0.99)),
    non2xx,
    errors,
  };
}

interface Hub {
  system: string;
  server: Server;
  /** The proxy's URL for a path under the provider's apiBaseUrl. */
  proxy(path: string): string;
  key: string;
  cleanup(): Promise<void>;
}

/** A hubgate on `system` with a client-credentials provider whose API is `apiUrl`, a connection to it, and a tnt_ key. */
async function startHub(system: string, apiUrl: string): Promise<Hub> {
  const base = {
    HUBGATE_SECRET_KEY: randomBytes(32).toString('base64'),
    // The provider's token endpoint and API are on 127.0.0.1, over HTTP.
    DELIVERY_ALLOW_HTTP: 'true',
    DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  };
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (system === 'postgres') {
    const db = await freshDatabase();
    env = { ...base, DATABASE_URL: db.url };
    cleanup = db.drop;
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'hubgate-bench-'));
    env = { ...base, DATA_DIR: dir };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  try {
    const plt = prepareHubgate(env);
    const server = await startProcess(
      ['dist/main.js', 'serve'],
      // A limit no benchmark reaches: this measures the proxy, not the limiter's refusals.
      { ...env, LOG_LEVEL, RATE_LIMIT_PER_MINUTE: '100000000' },
      await freePort(),
      '/readyz',
    );
    const stop = cleanup;
    cleanup = async () => {
      await server.stop();
      await stop();
    };
    const { session, keySecret } = await benchTenant(
      server.baseUrl,
      plt,
      ['integrations'],
      ['integrations:OPERATOR'],
    );
    const provider = await httpJson(
      'POST',
      `${server.baseUrl}/api/v1/platform/oauth-providers`,
      { authorization: `Bearer ${plt}` },
      {
        key: 'bench-api',
        name: 'Bench API',
        tokenUrl: `${apiUrl}/token`,
        apiBaseUrl: `${apiUrl}/v1`,
        clientId: 'bench',
        clientSecret: randomBytes(16).toString('hex'),
        grant: 'client_credentials',
      },
    );
    if (provider.status !== 201) {
      throw new Error(`provider: ${provider.status} ${JSON.stringify(provider.body)}`);
    }
    const created = await httpJson('POST', `${server.baseUrl}/api/v1/integrations/connections`, session, {
      connectorKey: provider.body.connectorKey as string,
      displayName: 'bench',
    });
    if (created.status !== 201) {
      throw new Error(`connection: ${created.status} ${JSON.stringify(created.body)}`);
    }
    const id = created.body.id as string;
    return {
      system,
      server,
      key: keySecret,
      proxy: (path) => `${server.baseUrl}/api/v1/integrations/connections/${id}/proxy/${path}`,
      cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

buildHubgate();
const api = await startApi();
const hubs: Hub[] = [];
const results: LoadResult[] = [];
/** Each proxied case's direct counterpart, by label. */
const ceilingOf = new Map<string, string>();
let apiStats: { token: number; api: number; refused: number } | undefined;
try {
  for (const system of SYSTEMS) hubs.push(await startHub(system, api.url));

  const calls: Array<{
    name: string;
    path: string;
    call: Omit<Call, 'headers'> & { headers?: Record<string, string> };
  }> = [
    { name: 'GET small JSON', path: 'small', call: { method: 'GET' } },
    { name: 'GET 64 KiB JSON', path: 'large', call: { method: 'GET' } },
    // Direct, the load generator reads the gzip bytes as they come; the proxy decodes them.
    { name: 'GET 64 KiB JSON as gzip', path: 'large-gzip', call: { method: 'GET' } },
    {
      name: 'POST 16 KiB body',
      path: 'echo',
      call: { method: 'POST', body: POST_BODY, headers: { 'content-type': 'application/json' } },
    },
  ];
  const cases: Array<{ label: string; run: (seconds: number) => Promise<LoadResult> }> = [];
  for (const { name, path, call } of calls) {
    const direct = `direct: ${name}`;
    const headers = { accept: 'application/json', ...call.headers };
    const directCall = { ...call, headers: { ...headers, authorization: `Bearer ${ACCESS_TOKEN}` } };
    cases.push({ label: direct, run: (s) => measure(direct, `${api.url}/v1/${path}`, directCall, s) });
    for (const hub of hubs) {
      const label = `proxy, ${SYSTEM_NAMES[hub.system]}: ${name}`;
      const proxyCall = { ...call, headers: { ...headers, authorization: `Bearer ${hub.key}` } };
      // The proxy answers what the API answers, or the comparison is not like for like.
      const [straight, proxied] = await Promise.all([
        fetch(`${api.url}/v1/${path}`, directCall).then((r) => r.text()),
        fetch(hub.proxy(path), proxyCall).then((r) => r.text()),
      ]);
      if (straight !== proxied) {
        throw new Error(`${label} answers ${proxied.slice(0, 300)}, not what the API answers`);
      }
      cases.push({ label, run: (s) => measure(label, hub.proxy(path), proxyCall, s) });
      ceilingOf.set(label, direct);
    }
  }
  // Not part of the comparison; it shows where the time goes: the same key through hubgate's gate,
  // with no proxying (a route that reads nothing from the database).
  for (const hub of hubs) {
    const label = `(-) hubgate, ${SYSTEM_NAMES[hub.system]}: GET /automation/health, same key`;
    const url = `${hub.server.baseUrl}/api/v1/automation/health`;
    const call: Call = { method: 'GET', headers: { authorization: `Bearer ${hub.key}` } };
    cases.push({ label, run: (s) => measure(label, url, call, s) });
  }
  for (const { run } of cases) await run(2); // warm-up
  const turns = new Map<string, LoadResult[]>();
  const seconds = Math.max(1, Math.round(SECONDS / ROUNDS));
  for (let round = 0; round < ROUNDS; round++) {
    for (const { label, run } of cases) turns.set(label, [...(turns.get(label) ?? []), await run(seconds)]);
  }
  for (const { label } of cases) results.push(combinedTurns(label, turns.get(label) ?? []));
  apiStats = (await fetch(`${api.url}/stats`).then((r) => r.json())) as typeof apiStats;
} finally {
  for (const hub of hubs) await hub.cleanup();
  await api.close();
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
const rpsOf = (label: string | undefined) => results.find((r) => r.label === label)?.rps;
console.log(
  `\nproxy benchmark: ${CONCURRENCY} concurrent, ${SECONDS} s each in ${ROUNDS} turns, ` +
    `hubgate LOG_LEVEL=${LOG_LEVEL}, ${SYSTEMS.map((s) => SYSTEM_NAMES[s]).join(' and ')}`,
);
console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors | vs direct |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const ceiling = rpsOf(ceilingOf.get(r.label));
  console.log(
    `| ${r.label} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${ceiling ? percent(r.rps / ceiling) : ''} |`,
  );
}
if (apiStats) {
  console.log(
    `the API served ${apiStats.api} calls and refused ${apiStats.refused}; its token endpoint was asked ${apiStats.token} times`,
  );
}
