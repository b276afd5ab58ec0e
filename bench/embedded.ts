import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import {
  benchTenant,
  buildHubgate,
  buildOfCommit,
  freePort,
  freshDatabase,
  httpJson,
  load,
  pool,
  postJson,
  prepareHubgate,
  ROOT,
  startProcess,
  type LoadResult,
  type Server,
} from './support.js';

/**
 * The embedded mode (what `npm start` runs with no DATABASE_URL) beside PostgreSQL and beside an
 * earlier build, in one run, each system delivering to the same receiver on 127.0.0.1:
 * - single: SINGLE_EVENTS events published one per request by CONCURRENCY publishers, timed until
 *   the last has reached the receiver (after WARMUP to warm the process up);
 * - batches (this build only, as the backlog: the earlier one had neither batches nor pausing):
 *   BATCH_EVENTS events in batches of 50, timed the same way, with `/healthz` asked one request at
 *   a time all along;
 * - backlog: BACKLOG_EVENTS published to a paused connection,
 *   then `resume`, and `/healthz` (one request at a time) and `/readyz` (every 100 ms) asked until
 *   the last has been delivered: how the HTTP server answers while the database works;
 * - resident memory (VmRSS of `serve`) after the drains, and its peak (VmHWM);
 * - access: `/healthz` and `GET /api/v1/automation/health` with a `tnt_` key under autocannon,
 *   beside a bare Fastify route.
 * BENCH_PREVIOUS (default 718a4d8, empty to skip) names the earlier commit: it is exported with
 * `git archive`, installed and built once into the temporary folder and run the same way, on the
 * same Node.
 * BENCH_SYSTEMS (default `previous,pglite,postgres`) picks the systems; `previous-postgres` runs the
 * earlier build on PostgreSQL.
 */
const SINGLE_EVENTS = Number(process.env.BENCH_SINGLE_EVENTS ?? 3_000);
const BATCH_EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const BACKLOG_EVENTS = Number(process.env.BENCH_BACKLOG_EVENTS ?? 20_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 50);
const ACCESS_SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PREVIOUS = process.env.BENCH_PREVIOUS ?? '718a4d8';
const SYSTEMS = (process.env.BENCH_SYSTEMS ?? 'previous,pglite,postgres').split(',').filter(Boolean);
const STALL_MS = Number(process.env.BENCH_STALL_SECONDS ?? 120) * 1000;
const BATCH = 50;

buildHubgate();

// ---- the receiver: the first arrival of each webhook-id ----
const arrived = new Map<string, number>();
let duplicates = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = String(req.headers['webhook-id'] ?? '');
    if (arrived.has(id)) duplicates++;
    else arrived.set(id, performance.now());
    res.end('ok');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
const agent = new Agent({ connections: CONCURRENCY + 4 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Hub {
  label: string;
  server: Server;
  session: Record<string, string>;
  auth: Record<string, string>;
  connectionId: string;
  /** Whether the build has batches and pausing. */
  current: boolean;
  stop(): Promise<void>;
}

async function startHub(system: string): Promise<Hub> {
  // `previous` runs the earlier build on PGlite, `previous-postgres` on PostgreSQL.
  const previous = system.startsWith('previous');
  const cwd = previous ? buildOfCommit(PREVIOUS) : ROOT;
  const base = {
    HUBGATE_SECRET_KEY: randomBytes(32).toString('base64'),
    DELIVERY_ALLOW_HTTP: 'true',
    DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  };
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (system.endsWith('postgres')) {
    const db = await freshDatabase();
    env = { ...base, DATABASE_URL: db.url };
    cleanup = db.drop;
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'hubgate-bench-'));
    env = { ...base, DATA_DIR: dir };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  }
  const plt = prepareHubgate(env, cwd);
  const server = await startProcess(
    ['dist/main.js', 'serve'],
    { ...env, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info', RATE_LIMIT_PER_MINUTE: '100000000' },
    await freePort(),
    '/readyz',
    cwd,
  );
  const { session, keySecret } = await benchTenant(
    server.baseUrl,
    plt,
    ['integrations'],
    ['integrations:OPERATOR'],
  );
  const created = await httpJson('POST', `${server.baseUrl}/api/v1/integrations/connections`, session, {
    connectorKey: 'webhook',
    displayName: 'bench',
    url: receiverUrl,
  });
  if (created.status !== 201)
    throw new Error(`connection: ${created.status} ${JSON.stringify(created.body)}`);
  const connectionId = created.body.id as string;
  await httpJson(
    'PUT',
    `${server.baseUrl}/api/v1/integrations/connections/${connectionId}/credentials`,
    session,
    {},
  );
  // An earlier build may have neither batches nor pausing (both came after 718a4d8).
  const probed = await httpJson(
    'POST',
    `${server.baseUrl}/api/v1/integrations/connections/${connectionId}/pause`,
    {},
  );
  const engine = system.endsWith('postgres') ? 'PostgreSQL' : 'PGlite';
  const label = `${previous ? PREVIOUS : 'now'}, ${engine}`;
  return {
    label,
    server,
    session,
    auth: { authorization: `Bearer ${keySecret}` },
    connectionId,
    current: probed.status !== 404,
    stop: async () => {
      await server.stop();
      await cleanup();
    },
  };
}

const post = (url: string, headers: Record<string, string>, payload: string) =>
  postJson(agent, url, headers, payload);

const event = { type: 'bench.event', data: { hello: 'world', n: 1 } };
const batchBody = JSON.stringify({ events: Array.from({ length: BATCH }, () => event) });

/** Publishes `total` events, one per request or in batches of BATCH; the IDs the receiver will see. */
async function publish(hub: Hub, total: number, batched: boolean): Promise<string[]> {
  const ids: string[] = [];
  const perRequest = batched ? BATCH : 1;
  await pool(Math.ceil(total / perRequest), CONCURRENCY, async () => {
    if (!batched) {
      const text = await post(
        `${hub.server.baseUrl}/api/v1/integrations/events`,
        hub.auth,
        JSON.stringify(event),
      );
      ids.push((JSON.parse(text) as { id: string }).id);
      return;
    }
    const text = await post(`${hub.server.baseUrl}/api/v1/integrations/events/batch`, hub.auth, batchBody);
    for (const item of (JSON.parse(text) as { data: Array<{ id?: string }> }).data) {
      if (item.id === undefined) throw new Error(`a batch item was refused: ${JSON.stringify(item)}`);
      ids.push(item.id);
    }
  });
  return ids;
}

/** Waits until every ID has reached the receiver (failing when none has for STALL_MS); the last arrival. */
async function lastArrival(ids: string[], what: string): Promise<number> {
  let waiting = ids.filter((id) => !arrived.has(id));
  let movedAt = performance.now();
  while (waiting.length > 0) {
    await sleep(20);
    const still = waiting.filter((id) => !arrived.has(id));
    if (still.length < waiting.length) movedAt = performance.now();
    else if (performance.now() - movedAt > STALL_MS)
      throw new Error(`${what}: ${still.length} never arrived`);
    waiting = still;
  }
  return Math.max(...ids.map((id) => arrived.get(id)!));
}

/** Asks `path` one request at a time (every `everyMs` at most) until `stop` resolves; latencies in ms. */
async function probe(baseUrl: string, path: string, everyMs: number, stop: Promise<unknown>) {
  let stopped = false;
  void stop.finally(() => (stopped = true));
  const latencies: number[] = [];
  let failed = 0;
  while (!stopped) {
    const sent = performance.now();
    try {
      const r = await request(baseUrl + path, { dispatcher: agent, headersTimeout: 600_000 });
      await r.body.text();
      if (r.statusCode !== 200) failed++;
    } catch {
      failed++;
    }
    const took = performance.now() - sent;
    latencies.push(took);
    if (took < everyMs) await sleep(everyMs - took);
  }
  return { latencies: latencies.sort((a, b) => a - b), failed };
}

const pick = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

/** VmRSS and VmHWM of a process, MiB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

interface Result {
  label: string;
  single?: number;
  batches?: number;
  batchHealthz?: { p50: number; p99: number; max: number; failed: number };
  backlog?: {
    rate: number;
    healthz: { p50: number; p99: number; max: number; failed: number; count: number };
    readyz: { p99: number; max: number; failed: number };
  };
  rss?: { rss: number; peak: number };
  access?: { healthz: LoadResult; keyed: LoadResult };
}

const summary = (p: { latencies: number[]; failed: number }) => ({
  p50: pick(p.latencies, 0.5),
  p99: pick(p.latencies, 0.99),
  max: pick(p.latencies, 1),
  failed: p.failed,
  count: p.latencies.length,
});

async function measure(hub: Hub): Promise<Result> {
  const result: Result = { label: hub.label };
  const timed = async (total: number, batched: boolean) => {
    const start = performance.now();
    const ids = await publish(hub, total, batched);
    return (ids.length / ((await lastArrival(ids, hub.label)) - start)) * 1000;
  };
  await lastArrival(await publish(hub, WARMUP, false), `${hub.label} warm-up`);
  result.single = await timed(SINGLE_EVENTS, false);
  console.error(`${hub.label}: single ${result.single.toFixed(0)} events/s`);

  if (hub.current) {
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));
    const healthz = probe(hub.server.baseUrl, '/healthz', 10, finished);
    result.batches = await timed(BATCH_EVENTS, true).finally(done);
    result.batchHealthz = summary(await healthz);
    console.error(`${hub.label}: batches ${result.batches.toFixed(0)} events/s`);
    result.backlog = await backlog(hub);
  }
  result.rss = memory(hub.server.child.pid!);

  const bearer = hub.auth;
  result.access = {
    healthz: await load('healthz', `${hub.server.baseUrl}/healthz`, {
      connections: CONCURRENCY,
      seconds: ACCESS_SECONDS,
    }),
    keyed: await load('automation/health', `${hub.server.baseUrl}/api/v1/automation/health`, {
      connections: CONCURRENCY,
      seconds: ACCESS_SECONDS,
      headers: bearer,
    }),
  };
  return result;
}

/** A backlog of BACKLOG_EVENTS on a paused connection, released at once: the server while it drains. */
async function backlog(hub: Hub): Promise<Result['backlog']> {
  const url = `${hub.server.baseUrl}/api/v1/integrations/connections/${hub.connectionId}`;
  const paused = await httpJson('POST', `${url}/pause`, hub.session, {});
  if (paused.status !== 200) throw new Error(`pause: ${paused.status} ${JSON.stringify(paused.body)}`);
  const ids = await publish(hub, BACKLOG_EVENTS, true);
  const start = performance.now();
  const resumed = httpJson('POST', `${url}/resume`, hub.session, { replaySkipped: true });
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  const healthz = probe(hub.server.baseUrl, '/healthz', 10, finished);
  const readyz = probe(hub.server.baseUrl, '/readyz', 100, finished);
  if ((await resumed).status !== 200) throw new Error('resume failed');
  const last = await lastArrival(ids, `${hub.label} backlog`).finally(done);
  const ready = summary(await readyz);
  console.error(`${hub.label}: backlog drained`);
  return {
    rate: (ids.length / (last - start)) * 1000,
    healthz: summary(await healthz),
    readyz: { p99: ready.p99, max: ready.max, failed: ready.failed },
  };
}

const results: Result[] = [];
const bare = await startProcess(['bench/bare-server.ts'], {}, await freePort(), '/');
let bareLoad: LoadResult;
try {
  for (const system of SYSTEMS) {
    const hub = await startHub(system);
    try {
      results.push(await measure(hub));
    } finally {
      await hub.stop();
    }
  }
  bareLoad = await load('bare', `${bare.baseUrl}/`, { connections: CONCURRENCY, seconds: ACCESS_SECONDS });
} finally {
  await bare.stop();
  await agent.close();
  receiver.close();
}

const n = (v: number | undefined, digits = 0) => (v === undefined ? '–' : v.toFixed(digits));
console.log(
  `\nembedded benchmark, Node ${process.version}: ${SINGLE_EVENTS} single publishes and ${BATCH_EVENTS} ` +
    `in batches of ${BATCH} from ${CONCURRENCY} publishers; backlog of ${BACKLOG_EVENTS}; ` +
    `access ${ACCESS_SECONDS} s per case, ${CONCURRENCY} connections; duplicates ${duplicates}`,
);
console.log(`| case | ${results.map((r) => r.label).join(' | ')} |`);
console.log(`|---|${results.map(() => '---:').join('|')}|`);
const row = (name: string, value: (r: Result) => string) =>
  console.log(`| ${name} | ${results.map(value).join(' | ')} |`);
row('single publishes, events/s delivered', (r) => n(r.single));
row(`batches of ${BATCH}, events/s delivered`, (r) => n(r.batches));
row('`/healthz` during the batches, p99 / max ms', (r) =>
  r.batchHealthz ? `${n(r.batchHealthz.p99)} / ${n(r.batchHealthz.max)}` : '–',
);
row(`backlog of ${BACKLOG_EVENTS} drained, events/s`, (r) => n(r.backlog?.rate));
row('`/healthz` while draining, p50 / p99 / max ms', (r) =>
  r.backlog
    ? `${n(r.backlog.healthz.p50, 1)} / ${n(r.backlog.healthz.p99, 1)} / ${n(r.backlog.healthz.max)}`
    : '–',
);
row('`/healthz` probes while draining (failed)', (r) =>
  r.backlog ? `${r.backlog.healthz.count} (${r.backlog.healthz.failed})` : '–',
);
row('`/readyz` while draining, p99 / max ms (failed)', (r) =>
  r.backlog ? `${n(r.backlog.readyz.p99)} / ${n(r.backlog.readyz.max)} (${r.backlog.readyz.failed})` : '–',
);
row('resident memory after the drains, MiB (peak)', (r) =>
  r.rss ? `${n(r.rss.rss)} (${n(r.rss.peak)})` : '–',
);
row('`/healthz` req/s (p99 ms)', (r) =>
  r.access ? `${n(r.access.healthz.rps)} (${r.access.healthz.p99})` : '–',
);
row('`/api/v1/automation/health`, key, req/s (p99 ms)', (r) =>
  r.access ? `${n(r.access.keyed.rps)} (${r.access.keyed.p99})` : '–',
);
row('… of bare Fastify', (r) => (r.access ? `${n((100 * r.access.keyed.rps) / bareLoad.rps)} %` : '–'));
console.log(`\nbare Fastify route: ${bareLoad.rps.toFixed(0)} req/s (p99 ${bareLoad.p99} ms)`);
