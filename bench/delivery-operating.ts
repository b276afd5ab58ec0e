import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Agent } from 'undici';
import {
  benchTenant,
  buildHubgate,
  freePort,
  freshDatabase,
  httpJson,
  pool,
  postJson,
  prepareHubgate,
  startProcess,
  type Server,
} from './support.js';

/**
 * Operating deliveries (docs/api/events.md), on each engine of BENCH_ENGINES (default `pglite,postgres`),
 * every figure beside its reference in the same run:
 * - inspection: the single-publish throughput case (INSPECT_EVENTS events from CONCURRENCY
 *   publishers, until each has reached the receiver) with DELIVERY_RESPONSE_BODY_BYTES=0 and with the
 *   default 4096, the receiver answering a body of 1 KiB; two processes side by side, measured in
 *   INSPECT_TURNS turns (A B, B A, …) so that neither always goes first;
 * - throttle: a burst of maxPerSecond × THROTTLE_SECONDS events to a connection with `maxPerSecond`
 *   set, the rate at which they reach the receiver, beside the same burst to a connection without it;
 * - recover: RECOVER_EVENTS deliveries failed (the receiver answers 500, DELIVERY_RETRY_SCHEDULE=0,
 *   the shortest schedule: two attempts each), the receiver fixed, one `POST …/recover {"since"}`: its latency and
 *   the time until the last of them has reached the receiver.
 * Every hubgate process runs compiled, its logs to a file; traffic stays on 127.0.0.1.
 */
const ENGINES = (process.env.BENCH_ENGINES ?? 'pglite,postgres').split(',').filter(Boolean);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 50);
const INSPECT_EVENTS = Number(process.env.BENCH_INSPECT_EVENTS ?? 3_000);
const INSPECT_WARMUP = Number(process.env.BENCH_WARMUP ?? 500);
// Turns of the two processes, each measured once per turn.
const INSPECT_TURNS = Number(process.env.BENCH_INSPECT_TURNS ?? 4);
const THROTTLE_LIMITS = (process.env.BENCH_THROTTLE_LIMITS ?? '50,200').split(',').map(Number);
const THROTTLE_SECONDS = Number(process.env.BENCH_THROTTLE_SECONDS ?? 6);
// The route takes at most 10,000 per call: the case is one call.
const RECOVER_EVENTS = Math.min(10_000, Number(process.env.BENCH_RECOVER_EVENTS ?? 10_000));
const BATCH = 100;
// A wait fails when nothing it waits for has happened for this long.
const STALL_MS = Number(process.env.BENCH_STALL_SECONDS ?? 60) * 1000;
const KIB_BODY = JSON.stringify({ ok: true, note: 'x'.repeat(1024 - 24) });

// The receiver: `/ok` answers "ok", `/kib` a body of 1 KiB, `/flaky` 500 while `failing`, else "ok".
// Records each webhook-id's first 2xx answer (epoch ms, to bucket by the throttle's whole seconds)
// and the IDs answered 500.
const delivered = new Map<string, number>();
const refused = new Set<string>();
let duplicates = 0;
let failing = true;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = String(req.headers['webhook-id'] ?? '');
    if (req.url?.startsWith('/flaky') && failing) {
      refused.add(id);
      res.statusCode = 500;
      res.end('receiver broken');
      return;
    }
    if (delivered.has(id)) duplicates++;
    else delivered.set(id, Date.now());
    res.end(req.url?.startsWith('/kib') ? KIB_BODY : 'ok');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const agent = new Agent({ connections: CONCURRENCY });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` holds, failing when `progress()` has not moved for STALL_MS. */
async function waitFor(what: string, done: () => boolean | Promise<boolean>, progress: () => number) {
  let last = progress();
  let movedAt = performance.now();
  while (!(await done())) {
    const now = progress();
    if (now !== last) [last, movedAt] = [now, performance.now()];
    else if (performance.now() - movedAt > STALL_MS) throw new Error(`stalled: ${what} (${now})`);
    await sleep(20);
  }
}

interface Hub {
  label: string;
  server: Server;
  session: Record<string, string>;
  auth: Record<string, string>;
  /** PostgreSQL only: the database, to read its statistics. */
  databaseUrl?: string;
  stop(): Promise<void>;
}

/** A hubgate `serve` on a fresh database of `engine`, with a tenant, a session and an OPERATOR key. */
async function startHub(engine: string, label: string, extra: Record<string, string>): Promise<Hub> {
  const base = {
    HUBGATE_SECRET_KEY: randomBytes(32).toString('base64'),
    DELIVERY_ALLOW_HTTP: 'true',
    DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  };
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  if (engine === 'pglite') {
    const dir = mkdtempSync(join(tmpdir(), 'hubgate-bench-'));
    env = { ...base, DATA_DIR: dir };
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const db = await freshDatabase();
    env = { ...base, DATABASE_URL: db.url };
    cleanup = db.drop;
  }
  const plt = prepareHubgate(env);
  const server = await startProcess(
    ['dist/main.js', 'serve'],
    {
      ...env,
      ...extra,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
      RATE_LIMIT_PER_MINUTE: '100000000',
    },
    await freePort(),
    '/readyz',
  );
  const { session, keySecret } = await benchTenant(
    server.baseUrl,
    plt,
    ['integrations'],
    ['integrations:OPERATOR'],
  );
  return {
    label,
    server,
    session,
    auth: { authorization: `Bearer ${keySecret}` },
    databaseUrl: env.DATABASE_URL,
    stop: async () => {
      await server.stop();
      await cleanup();
    },
  };
}

/** A webhook connection to `path` of the receiver carrying events of `type` only; its ID. */
async function connect(hub: Hub, type: string, path: string, maxPerSecond?: number): Promise<string> {
  const created = await httpJson(
    'POST',
    `${hub.server.baseUrl}/api/v1/integrations/connections`,
    hub.session,
    {
      connectorKey: 'webhook',
      displayName: type,
      url: `${receiverBase}${path}`,
      eventTypes: [type],
      ...(maxPerSecond === undefined ? {} : { maxPerSecond }),
    },
  );
  if (created.status !== 201)
    throw new Error(`connection: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.id as string;
  await httpJson(
    'PUT',
    `${hub.server.baseUrl}/api/v1/integrations/connections/${id}/credentials`,
    hub.session,
    {},
  );
  return id;
}

const post = (url: string, headers: Record<string, string>, payload: string) =>
  postJson(agent, url, headers, payload);

/** Publishes `total` events of `type`, `perRequest` per request; their IDs (the receiver's webhook-id). */
async function publish(hub: Hub, type: string, total: number, perRequest: number, publishers: number) {
  const event = { type, data: { hello: 'world', n: 1 } };
  const ids: string[] = [];
  await pool(Math.ceil(total / perRequest), publishers, async (i) => {
    const n = Math.min(perRequest, total - i * perRequest);
    if (perRequest === 1) {
      const text = await post(
        `${hub.server.baseUrl}/api/v1/integrations/events`,
        hub.auth,
        JSON.stringify(event),
      );
      ids.push((JSON.parse(text) as { id: string }).id);
      return;
    }
    const body = JSON.stringify({ events: Array.from({ length: n }, () => event) });
    const text = await post(`${hub.server.baseUrl}/api/v1/integrations/events/batch`, hub.auth, body);
    for (const item of (JSON.parse(text) as { data: Array<{ id?: string }> }).data) {
      if (item.id === undefined) throw new Error(`a batch item was refused: ${JSON.stringify(item)}`);
      ids.push(item.id);
    }
  });
  return ids;
}

/** Waits until every ID has a 2xx at the receiver; the epoch ms of each first arrival, in order. */
async function arrivals(ids: string[], what: string): Promise<number[]> {
  const missing = () => ids.reduce((n, id) => n + (delivered.has(id) ? 0 : 1), 0);
  await waitFor(what, () => missing() === 0, missing);
  return ids.map((id) => delivered.get(id)!).sort((a, b) => a - b);
}

/** The connection's deliveries in `status` (one page of at most 100 is enough to say "none"). */
async function countIn(hub: Hub, connectionId: string, status: string): Promise<number> {
  const page = await httpJson(
    'GET',
    `${hub.server.baseUrl}/api/v1/integrations/connections/${connectionId}/events?status=${status}&limit=100`,
    hub.auth,
  );
  if (page.status !== 200) throw new Error(`event log: ${page.status} ${JSON.stringify(page.body)}`);
  return (page.body.data as unknown[]).length;
}

/** Waits until none of the connection's deliveries is pending, delivering or retrying. */
async function settle(hub: Hub, connectionId: string, what: string): Promise<void> {
  let open = -1;
  const count = async () => {
    const counts = await Promise.all(
      ['pending', 'delivering', 'retrying'].map((status) => countIn(hub, connectionId, status)),
    );
    open = counts.reduce((a, b) => a + b, 0);
    return open === 0;
  };
  await waitFor(`${hub.label}: ${what} (at most 100 counted per status)`, count, () => open);
}

/**
 * PostgreSQL only: committed transactions and rows written (inserted, updated, deleted) in the
 * database so far, or since `before` (all processes; statistics reach the view within a second).
 */
async function databaseWork(hub: Hub, before?: { commits: number; tuples: number }) {
  if (hub.databaseUrl === undefined) return undefined;
  const client = new pg.Client({ connectionString: hub.databaseUrl });
  await client.connect();
  try {
    if (before) await sleep(1_500);
    const { rows } = await client.query<{ commits: string; tuples: string }>(`
      select xact_commit as commits, tup_inserted + tup_updated + tup_deleted as tuples
      from pg_stat_database where datname = current_database()`);
    const now = { commits: Number(rows[0]?.commits ?? 0), tuples: Number(rows[0]?.tuples ?? 0) };
    return before ? { commits: now.commits - before.commits, tuples: now.tuples - before.tuples } : now;
  } finally {
    await client.end();
  }
}

// ---- inspection: the single-publish case with response bodies off (A) and kept (B) ----

interface Throughput {
  events: number;
  seconds: number;
}

async function singlePublishes(hub: Hub, type: string, events: number): Promise<Throughput> {
  const start = Date.now();
  const ids = await publish(hub, type, events, 1, CONCURRENCY);
  const times = await arrivals(ids, `${hub.label}: single publishes`);
  return { events, seconds: (times[times.length - 1]! - start) / 1000 };
}

async function inspection(off: Hub, on: Hub) {
  for (const hub of [off, on]) {
    await connect(hub, 'bench.inspect', '/kib');
    await singlePublishes(hub, 'bench.inspect', INSPECT_WARMUP);
  }
  const rounds: Array<{ off: Throughput; on: Throughput }> = [];
  for (let turn = 0; turn < INSPECT_TURNS; turn++) {
    const round: Partial<{ off: Throughput; on: Throughput }> = {};
    // A B, B A, A B…: neither always goes first.
    for (const hub of turn % 2 === 0 ? [off, on] : [on, off]) {
      await sleep(1_000);
      round[hub === off ? 'off' : 'on'] = await singlePublishes(hub, 'bench.inspect', INSPECT_EVENTS);
    }
    rounds.push(round as { off: Throughput; on: Throughput });
  }
  const total = (pick: 'off' | 'on') => {
    const events = rounds.reduce((n, r) => n + r[pick].events, 0);
    return events / rounds.reduce((n, r) => n + r[pick].seconds, 0);
  };
  const rate = (t: Throughput) => t.events / t.seconds;
  return {
    off: total('off'),
    on: total('on'),
    rounds: rounds.map((r) => [rate(r.off), rate(r.on)] as const),
  };
}

// ---- throttle ----

interface Burst {
  limit: number | null;
  events: number;
  /** First to last arrival. */
  seconds: number;
  /** Arrivals in the whole seconds strictly between the first's and the last's, per second. */
  steady: number;
  /** The most arrivals in one whole second. */
  maxInSecond: number;
  failed: number;
  /** PostgreSQL only: per event delivered, commits and rows written during the burst. */
  work?: { commits: number; tuples: number };
}

async function burst(hub: Hub, limit: number | null, events: number): Promise<Burst> {
  const type = `bench.throttle.${limit ?? 'none'}`;
  const connectionId = await connect(hub, type, '/ok', limit ?? undefined);
  await sleep(1_000);
  const before = await databaseWork(hub);
  const ids = await publish(hub, type, events, BATCH, 4);
  const times = await arrivals(ids, `${hub.label}: burst at ${limit ?? 'no limit'}`);
  const perSecond = new Map<number, number>();
  for (const t of times) perSecond.set(Math.floor(t / 1000), (perSecond.get(Math.floor(t / 1000)) ?? 0) + 1);
  const first = Math.floor(times[0]! / 1000);
  const last = Math.floor(times[times.length - 1]! / 1000);
  let inner = 0;
  for (let s = first + 1; s < last; s++) inner += perSecond.get(s) ?? 0;
  await settle(hub, connectionId, 'burst settled');
  const work = before && (await databaseWork(hub, before));
  return {
    work: work && { commits: work.commits / events, tuples: work.tuples / events },
    limit,
    events,
    seconds: (times[times.length - 1]! - times[0]!) / 1000,
    steady:
      last - first > 1
        ? inner / (last - first - 1)
        : events / Math.max(0.001, (times.at(-1)! - times[0]!) / 1000),
    maxInSecond: Math.max(...perSecond.values()),
    failed: await countIn(hub, connectionId, 'failed'),
  };
}

// ---- recover ----

async function recover(hub: Hub) {
  const connectionId = await connect(hub, 'bench.recover', '/flaky');
  failing = true;
  const since = new Date(Date.now() - 1_000).toISOString();
  const start = Date.now();
  const ids = await publish(hub, 'bench.recover', RECOVER_EVENTS, BATCH, 4);
  const failedCount = () => ids.reduce((n, id) => n + (refused.has(id) ? 1 : 0), 0);
  // Each delivery is refused twice (two attempts); the log says when the second was recorded.
  await waitFor(`${hub.label}: deliveries failing`, () => failedCount() === ids.length, failedCount);
  await settle(hub, connectionId, 'failures recorded');
  const failSeconds = (Date.now() - start) / 1000;

  failing = false;
  const t0 = performance.now();
  const t0Epoch = Date.now();
  const answer = await httpJson(
    'POST',
    `${hub.server.baseUrl}/api/v1/integrations/connections/${connectionId}/recover`,
    hub.auth,
    { since },
  );
  const callMs = performance.now() - t0;
  if (answer.status !== 202) throw new Error(`recover: ${answer.status} ${JSON.stringify(answer.body)}`);
  const times = await arrivals(ids, `${hub.label}: recovered deliveries`);
  await settle(hub, connectionId, 'recovered settled');
  return {
    events: ids.length,
    failSeconds,
    queued: answer.body.queued as number,
    callMs,
    firstSeconds: (times[0]! - t0Epoch) / 1000,
    lastSeconds: (times[times.length - 1]! - t0Epoch) / 1000,
    failedAfter: await countIn(hub, connectionId, 'failed'),
  };
}

// ---- the run ----

async function onEngine(engine: string) {
  // The same settings on both but the one measured. The recover case wants deliveries that fail at
  // once: an empty DELIVERY_RETRY_SCHEDULE means the default (config: empty is unset), so the
  // shortest schedule is one retry after 0 s: two attempts, both answered 500.
  const common = { DELIVERY_RETRY_SCHEDULE: '0' };
  const off = await startHub(engine, `${engine} bodies off`, {
    ...common,
    DELIVERY_RESPONSE_BODY_BYTES: '0',
  });
  try {
    const on = await startHub(engine, `${engine} bodies kept`, common);
    try {
      const inspect = await inspection(off, on);
      await off.stop();
      const largest = Math.max(...THROTTLE_LIMITS) * THROTTLE_SECONDS;
      const bursts = [await burst(on, null, largest)];
      for (const limit of THROTTLE_LIMITS) bursts.push(await burst(on, limit, limit * THROTTLE_SECONDS));
      const recovered = await recover(on);
      return { engine, inspect, bursts, recovered };
    } finally {
      await on.stop();
    }
  } finally {
    await off.stop();
  }
}

buildHubgate();
const results = [];
try {
  for (const engine of ENGINES) results.push(await onEngine(engine));
} finally {
  await agent.close();
  receiver.close();
}

const f0 = (n: number) => n.toFixed(0);
console.log(
  `\noperating deliveries: DELIVERY_RETRY_SCHEDULE=0 (two attempts, the second at once); ` +
    `inspection ${INSPECT_EVENTS} single publishes × ${INSPECT_TURNS} turns each from ${CONCURRENCY} publishers, receiver answering 1 KiB; ` +
    `throttle bursts of limit × ${THROTTLE_SECONDS} events in batches of ${BATCH}; recover ${RECOVER_EVENTS}`,
);
console.log('| engine | case | figure | reference | ratio |');
console.log('|---|---|---:|---:|---:|');
for (const { engine, inspect, bursts, recovered } of results) {
  const turns = inspect.rounds.map(([a, b]) => `${f0(b)}/${f0(a)}`).join(', ');
  const ratios = inspect.rounds.map(([a, b]) => b / a).sort((x, y) => x - y);
  const median = (ratios[(ratios.length - 1) >> 1]! + ratios[ratios.length >> 1]!) / 2;
  console.log(
    `| ${engine} | single publishes, bodies kept (4096) vs off (0) (turns: ${turns}) | ${f0(inspect.on)} events/s | ` +
      `${f0(inspect.off)} events/s | ${((100 * inspect.on) / inspect.off).toFixed(1)} % (cost ${((100 * (inspect.off - inspect.on)) / inspect.off).toFixed(1)} %; median turn ${(100 * median).toFixed(0)} %) |`,
  );
  const free = bursts.find((b) => b.limit === null)!;
  for (const b of bursts) {
    console.log(
      `| ${engine} | burst of ${b.events}, maxPerSecond ${b.limit ?? 'unset'} | ${f0(b.steady)}/s steady, ` +
        `max ${b.maxInSecond} in a second, ${b.seconds.toFixed(2)} s, ${b.failed} failed` +
        `${b.work ? `; ${b.work.commits.toFixed(2)} commits, ${b.work.tuples.toFixed(1)} rows written per event` : ''} | ` +
        `${b.limit === null ? '' : `${b.limit}/s limit; unthrottled ${f0(free.steady)}/s`} | ` +
        `${b.limit === null ? '' : `${((100 * b.steady) / b.limit).toFixed(0)} % of limit`} |`,
    );
  }
  const r = recovered;
  console.log(
    `| ${engine} | recover ${r.events} failed (queued ${r.queued}) | call ${r.callMs.toFixed(0)} ms; last delivered ` +
      `${r.lastSeconds.toFixed(2)} s after the call (first ${r.firstSeconds.toFixed(2)} s), ${r.failedAfter} failed | ` +
      `failing them took ${r.failSeconds.toFixed(2)} s | ${f0(r.events / r.lastSeconds)} recovered/s |`,
  );
}
console.log(`duplicates (a 2xx for an event already delivered): ${duplicates}`);
