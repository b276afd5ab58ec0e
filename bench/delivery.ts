import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { Agent } from 'undici';
import { checkSchema, validateData } from '../src/event-types/schemas.js';
import {
  benchTenant,
  buildHubgate,
  freePort,
  freshDatabase,
  httpJson,
  pool,
  postJson,
  prepareHubgate,
  ROOT,
  startProcess,
} from './support.js';

/**
 * Issue 6's benchmark, in one run, every system delivering to the same local receiver:
 * - the ceiling: POSTs sent straight to the receiver with undici;
 * - the peer: what a team would build itself, Fastify + graphile-worker + undici in one process on its
 *   own database (peer-graphile.ts), one job per published event;
 * - hubgate on PostgreSQL, events published one per request (POST /api/v1/integrations/events);
 * - hubgate, events published in batches (POST /api/v1/integrations/events/batch).
 * Each publishes EVENTS events from CONCURRENCY publishers and is timed until every event's
 * webhook-id has first reached the receiver. Then a low steady rate measures how long one publish
 * request takes, for the peer and for hubgate. Each system is warmed up before it is measured.
 */
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
// Published and delivered before the measured run, so that it measures a warm process.
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1_000);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 50);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
// BENCH_RATE=500 publishes at that steady rate instead of as fast as possible (the latency target).
const RATE = Number(process.env.BENCH_RATE ?? 0);
// BENCH_WORKERS=2 adds `hubgate worker` processes beside serve (which runs workers too).
const EXTRA_WORKERS = Math.max(0, Number(process.env.BENCH_WORKERS ?? 1) - 1);
// Events per batch request (the route takes at most 100).
const BATCH = Math.min(100, Math.max(1, Number(process.env.BENCH_BATCH ?? 50)));
// graphile-worker's concurrency in the peer (its pg pool: concurrency + 2, as graphile-worker advises).
const PEER_CONCURRENCY = Number(process.env.BENCH_PEER_CONCURRENCY ?? 32);
// graphile-worker's batching (bench/peer-graphile.ts), off unless set: e.g. 33 and 0.
const PEER_LOCAL_QUEUE = process.env.BENCH_PEER_LOCAL_QUEUE ?? '-1';
const PEER_COMPLETE_BATCH_DELAY = process.env.BENCH_PEER_COMPLETE_BATCH_DELAY ?? '-1';
// The low-load phase: LOW_RATE events/s for LOW_SECONDS from LOW_PUBLISHERS publishers.
const LOW_RATE = Number(process.env.BENCH_LOW_RATE ?? 50);
const LOW_SECONDS = Number(process.env.BENCH_LOW_SECONDS ?? 4);
const LOW_PUBLISHERS = Number(process.env.BENCH_LOW_PUBLISHERS ?? 2);
// A phase fails when no event of it has reached the receiver for this long.
const STALL_MS = Number(process.env.BENCH_STALL_SECONDS ?? 60) * 1000;

buildHubgate();

// The receiver, the same for every system: records when each webhook-id first arrives.
const firstSeen = new Map<string, number>();
let duplicates = 0;
const receiver = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') {
      if (firstSeen.has(id)) duplicates++;
      else firstSeen.set(id, performance.now());
    }
    res.end('ok');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
const sorted = (values: Iterable<number>) => [...values].sort((a, b) => a - b);

// Every publisher's requests, whichever system they go to.
const agent = new Agent({ connections: Math.max(CONCURRENCY, LOW_PUBLISHERS) });
const event = { type: 'bench.event', data: { hello: 'world', n: 1 } };
const body = JSON.stringify(event);

const post = (url: string, headers: Record<string, string>, payload: string) =>
  postJson(agent, url, headers, payload);

/** Sends one request carrying `events` events; answers the IDs the receiver will see as webhook-id. */
type Send = (events: number) => Promise<string[]>;

/** One event per request, answered `{"id"}` (hubgate and the peer alike). */
const singlePublish =
  (url: string, headers: Record<string, string>): Send =>
  async () => [(JSON.parse(await post(url, headers, body)) as { id: string }).id];

const batchBodies = new Map<number, string>();
const batchBody = (n: number) => {
  let text = batchBodies.get(n);
  if (text === undefined) {
    text = JSON.stringify({ events: Array.from({ length: n }, () => event) });
    batchBodies.set(n, text);
  }
  return text;
};

/** hubgate's batch route: `{"data":[{"id",…} | {"error":{…}}]}`, one item per event, in order. */
const batchPublish =
  (url: string, headers: Record<string, string>): Send =>
  async (n) => {
    const answer = JSON.parse(await post(url, headers, batchBody(n))) as {
      data: Array<{ id?: string; error?: { status: number; code: string; detail: string | null } }>;
    };
    const refused = answer.data.find((item) => item.id === undefined);
    if (refused || answer.data.length !== n) {
      throw new Error(`batch of ${n} answered ${answer.data.length} items, e.g. ${JSON.stringify(refused)}`);
    }
    return answer.data.map((item) => item.id!);
  };

/**
 * Single publishes with an `orderingKey` drawn in turn from `keys` keys (docs/api/events.md, Ordering):
 * on a `per-key` connection each key's deliveries go one at a time, the keys side by side.
 */
const orderedPublish = (url: string, headers: Record<string, string>, keys: number): Send => {
  let sent = 0;
  return async () => {
    const orderingKey = `key-${sent++ % keys}`;
    const text = await post(url, headers, JSON.stringify({ ...event, orderingKey }));
    return [(JSON.parse(text) as { id: string }).id];
  };
};
// Ordered delivery per key, beside the unordered single publishes: with 1 key every delivery waits
// for the one before it, so that case gets its own (smaller) count.
const ORDERED_KEYS = (process.env.BENCH_ORDERED_KEYS ?? '1,100,10000').split(',').map(Number);
const ORDERED_EVENTS = Number(process.env.BENCH_ORDERED_EVENTS ?? EVENTS);
const ONE_KEY_EVENTS = Number(process.env.BENCH_ONE_KEY_EVENTS ?? Math.min(EVENTS, 2_000));

/** The ceiling: the event straight to the receiver, with a webhook-id for it to time. */
let ceilingIds = 0;
const ceilingPost: Send = async () => {
  const id = `ceiling_${++ceilingIds}`;
  await post(receiverUrl, { 'webhook-id': id }, body);
  return [id];
};

interface Phase {
  events: number;
  /** From the first request to the last answer. */
  publishSeconds: number;
  /** From the first request to the first arrival of the last event at the receiver. */
  deliverSeconds: number;
  /** Request sent → answer received, ms, sorted. */
  requestLatencies: number[];
  /** Request sent → first arrival at the receiver, per event, ms, sorted. */
  deliveryLatencies: number[];
  duplicates: number;
}

/**
 * Publishes `total` events, `perRequest` per request, from `publishers` concurrent publishers (at
 * `rate` events/s if positive, else as fast as they can), then waits until every event answered has
 * reached the receiver.
 */
async function phase(
  total: number,
  perRequest: number,
  publishers: number,
  rate: number,
  send: Send,
): Promise<Phase> {
  firstSeen.clear();
  duplicates = 0;
  const publishedAt = new Map<string, number>();
  const requestLatencies: number[] = [];
  const start = performance.now();
  await pool(Math.ceil(total / perRequest), publishers, async (i) => {
    if (rate > 0) {
      const wait = start + (i * perRequest * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const sent = performance.now();
    const ids = await send(Math.min(perRequest, total - i * perRequest));
    requestLatencies.push(performance.now() - sent);
    for (const id of ids) publishedAt.set(id, sent);
  });
  const publishSeconds = (performance.now() - start) / 1000;

  const waiting = new Set(publishedAt.keys());
  let lastProgress = performance.now();
  for (;;) {
    const before = waiting.size;
    for (const id of waiting) if (firstSeen.has(id)) waiting.delete(id);
    if (waiting.size === 0) break;
    if (waiting.size < before) lastProgress = performance.now();
    else if (performance.now() - lastProgress > STALL_MS) {
      throw new Error(`${waiting.size} of ${total} events never reached the receiver`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  let lastArrival = start;
  const deliveryLatencies: number[] = [];
  for (const [id, at] of publishedAt) {
    const arrival = firstSeen.get(id)!;
    if (arrival > lastArrival) lastArrival = arrival;
    deliveryLatencies.push(arrival - at);
  }
  return {
    events: publishedAt.size,
    publishSeconds,
    deliverSeconds: (lastArrival - start) / 1000,
    requestLatencies: sorted(requestLatencies),
    deliveryLatencies: sorted(deliveryLatencies),
    duplicates,
  };
}

const rateOf = (p: Phase) => (p.events > 0 ? p.events / p.deliverSeconds : 0);
const ms = (value: number) => value.toFixed(1);
const warmLine = (name: string, p: Phase) =>
  `${name}: ${p.events} events, ${rateOf(p).toFixed(0)} events/s, publish-to-arrival ` +
  `p99 ${percentile(p.deliveryLatencies, 0.99).toFixed(0)} ms, max ${percentile(p.deliveryLatencies, 1).toFixed(0)} ms`;
const lowLoad = (send: Send) => phase(LOW_RATE * LOW_SECONDS, 1, LOW_PUBLISHERS, LOW_RATE, send);
const settle = () => new Promise((r) => setTimeout(r, 1_000));

// The ceiling, warmed up like the others, always as fast as it goes (BENCH_RATE paces the others).
const ceilingWarm = await phase(WARMUP, 1, CONCURRENCY, 0, ceilingPost);
const ceiling = await phase(EVENTS, 1, CONCURRENCY, 0, ceilingPost);

// The peer, on a database of its own.
const peerVersion = (
  JSON.parse(readFileSync(join(ROOT, 'node_modules/graphile-worker/package.json'), 'utf8')) as {
    version: string;
  }
).version;
const peerToken = randomBytes(24).toString('base64url');
let peerWarm: Phase, peer: Phase, peerLow: Phase;
const peerDb = await freshDatabase();
try {
  const server = await startProcess(
    ['bench/peer-graphile.ts'],
    {
      DATABASE_URL: peerDb.url,
      PEER_RECEIVER_URL: receiverUrl,
      PEER_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      PEER_TOKEN: peerToken,
      PEER_CONCURRENCY: String(PEER_CONCURRENCY),
      PEER_LOCAL_QUEUE,
      PEER_COMPLETE_BATCH_DELAY,
    },
    await freePort(),
    '/healthz',
  );
  try {
    const send = singlePublish(`${server.baseUrl}/events`, { authorization: `Bearer ${peerToken}` });
    peerWarm = await phase(WARMUP, 1, CONCURRENCY, RATE, send);
    peer = await phase(EVENTS, 1, CONCURRENCY, RATE, send);
    await settle();
    peerLow = await lowLoad(send);
  } finally {
    await server.stop();
  }
} finally {
  await peerDb.drop();
}

// hubgate.
let hubWarm: Phase, hub: Phase, batchWarm: Phase, batch: Phase, hubLow: Phase;
const ordered: Array<[number, Phase]> = [];
// Single publishes of a type registered with a schema (docs/api/events.md, Event types and schemas),
// and, in this process, what checking one event's `data` against that schema costs alone.
const TYPED_EVENTS = Number(process.env.BENCH_TYPED_EVENTS ?? EVENTS);
const TYPED_SCHEMA = {
  type: 'object',
  required: ['hello', 'n'],
  properties: { hello: { type: 'string', pattern: '^[a-z]+$' }, n: { type: 'integer', minimum: 0 } },
  additionalProperties: false,
};
let typed: Phase | undefined;
const typedPublish = (url: string, headers: Record<string, string>): Send => {
  const text = JSON.stringify({ ...event, type: 'bench.typed' });
  return async () => [(JSON.parse(await post(url, headers, text)) as { id: string }).id];
};
function validationMicroseconds(): number {
  const validate = checkSchema(TYPED_SCHEMA);
  const runs = 100_000;
  for (let i = 0; i < 1_000; i++) validateData(validate, event.data);
  const started = performance.now();
  for (let i = 0; i < runs; i++) validateData(validate, event.data);
  return ((performance.now() - started) * 1_000) / runs;
}
let storage: Array<{ relation: string; rows: number; heap: number; indexes: number }> = [];
// Transactions and rows written per event in hubgate's database during each measured phase.
const work: Array<{ label: string; commits: number; tuples: number; wal: number; events: number }> = [];
const db = await freshDatabase();
const env = {
  DATABASE_URL: db.url,
  HUBGATE_SECRET_KEY: randomBytes(32).toString('base64'),
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
};
try {
  const plt = prepareHubgate(env);
  const server = await startProcess(
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
      server.baseUrl,
      plt,
      ['integrations'],
      ['integrations:OPERATOR'],
    );
    const connection = await httpJson('POST', `${server.baseUrl}/api/v1/integrations/connections`, session, {
      connectorKey: 'webhook',
      displayName: 'bench',
      url: receiverUrl,
    });
    await httpJson(
      'PUT',
      `${server.baseUrl}/api/v1/integrations/connections/${connection.body.id}/credentials`,
      session,
      {},
    );
    const auth = { authorization: `Bearer ${keySecret}` };
    const single = singlePublish(`${server.baseUrl}/api/v1/integrations/events`, auth);
    const batched = batchPublish(`${server.baseUrl}/api/v1/integrations/events/batch`, auth);
    hubWarm = await phase(WARMUP, 1, CONCURRENCY, RATE, single);
    let before = await databaseWork(db.url);
    hub = await phase(EVENTS, 1, CONCURRENCY, RATE, single);
    work.push({ label: 'single publishes', ...(await databaseWork(db.url, before)), events: EVENTS });
    batchWarm = await phase(WARMUP, BATCH, CONCURRENCY, RATE, batched);
    before = await databaseWork(db.url);
    batch = await phase(EVENTS, BATCH, CONCURRENCY, RATE, batched);
    work.push({ label: `batches of ${BATCH}`, ...(await databaseWork(db.url, before)), events: EVENTS });
    await settle();
    hubLow = await lowLoad(single);
    storage = await storageOf(db.url);
    await httpJson('POST', `${server.baseUrl}/api/v1/integrations/event-types`, session, {
      name: 'bench.typed',
      schema: TYPED_SCHEMA,
    });
    const typedSend = typedPublish(`${server.baseUrl}/api/v1/integrations/events`, auth);
    typed = await phase(TYPED_EVENTS, 1, CONCURRENCY, RATE, typedSend);
    // The same connection, now ordered per key; the events carry keys from 1, 100 or 10,000.
    await httpJson(
      'PATCH',
      `${server.baseUrl}/api/v1/integrations/connections/${connection.body.id}`,
      session,
      {
        ordering: 'per-key',
      },
    );
    for (const keys of ORDERED_KEYS) {
      const send = orderedPublish(`${server.baseUrl}/api/v1/integrations/events`, auth, keys);
      ordered.push([
        keys,
        await phase(keys === 1 ? ONE_KEY_EVENTS : ORDERED_EVENTS, 1, CONCURRENCY, RATE, send),
      ]);
    }
  } finally {
    await Promise.all([server.stop(), ...workers.map((w) => w.stop())]);
  }
} finally {
  await db.drop();
  await agent.close();
  receiver.close();
}

const ceilingRate = rateOf(ceiling);
const peerRate = rateOf(peer);
const pct = (ratio: number) => `${(100 * ratio).toFixed(0)} %`;
console.log(
  `\ndelivery benchmark: ${EVENTS} events, ${CONCURRENCY} concurrent publishers, ` +
    `${RATE > 0 ? `at ${RATE}/s` : 'as fast as possible'}; hubgate: serve + ${EXTRA_WORKERS} worker process(es), PostgreSQL; ` +
    `peer: Fastify + graphile-worker ${peerVersion} (concurrency ${PEER_CONCURRENCY}, ` +
    `localQueue ${PEER_LOCAL_QUEUE}, completeJobBatchDelay ${PEER_COMPLETE_BATCH_DELAY}), PostgreSQL`,
);
console.log('| case | events/s (delivered) | published/s | vs ceiling | vs peer |');
console.log('|---|---:|---:|---:|---:|');
const rows: Array<[string, Phase]> = [
  ['ceiling: undici POSTs straight to the receiver', ceiling],
  [`peer: graphile-worker, one event per request`, peer],
  ['hubgate: single publishes', hub],
  [`hubgate: batches of ${BATCH}`, batch],
];
if (typed) rows.push(['hubgate: single publishes, type with a schema', typed]);
for (const [keys, p] of ordered) {
  rows.push([`hubgate: single publishes, ordered per key, ${keys} key(s)`, p]);
}
for (const [label, p] of rows) {
  const rate = rateOf(p);
  console.log(
    `| ${label} | ${rate.toFixed(0)} | ${(p.events / p.publishSeconds).toFixed(0)} | ${pct(rate / ceilingRate)} | ${pct(rate / peerRate)} |`,
  );
}

if (typed) {
  const perEvent = (p: Phase) => (p.publishSeconds * 1e6) / p.events;
  console.log(
    `\npublish with a schema: ${(perEvent(typed) - perEvent(hub)).toFixed(1)} µs more per event published ` +
      `(wall time at ${CONCURRENCY} publishers, against an unregistered type); the check of \`data\` alone, ` +
      `in one process: ${validationMicroseconds().toFixed(2)} µs per event`,
  );
}
console.log(
  `\nlow-load publish latency: ${LOW_RATE} events/s for ${LOW_SECONDS} s, ${LOW_PUBLISHERS} publishers, one event per request`,
);
console.log(
  '| case | publish p50 ms | publish p99 ms | publish → arrival p50 ms | publish → arrival p99 ms |',
);
console.log('|---|---:|---:|---:|---:|');
for (const [label, p] of [
  ['peer: graphile-worker', peerLow],
  ['hubgate: single publish', hubLow],
] as const) {
  console.log(
    `| ${label} | ${ms(percentile(p.requestLatencies, 0.5))} | ${ms(percentile(p.requestLatencies, 0.99))} | ` +
      `${ms(percentile(p.deliveryLatencies, 0.5))} | ${ms(percentile(p.deliveryLatencies, 0.99))} |`,
  );
}

console.log('\nwarm-ups (not counted):');
for (const [name, p] of [
  ['ceiling', ceilingWarm],
  ['peer', peerWarm],
  ['hubgate single', hubWarm],
  ['hubgate batches', batchWarm],
] as const) {
  console.log(`- ${warmLine(name, p)}`);
}
console.log(
  `duplicates (an event reaching the receiver more than once): peer ${peer.duplicates}, ` +
    `hubgate single ${hub.duplicates}, hubgate batches ${batch.duplicates}`,
);
for (const [name, p] of rows) {
  const l = p.deliveryLatencies;
  console.log(
    `${name}: publish-to-first-arrival p50 ${percentile(l, 0.5).toFixed(0)} ms, p90 ${percentile(l, 0.9).toFixed(0)} ms, ` +
      `p99 ${percentile(l, 0.99).toFixed(0)} ms, max ${percentile(l, 1).toFixed(0)} ms ` +
      `${RATE > 0 ? `(steady ${RATE}/s)` : '(publishing as fast as possible: a backlog)'}`,
  );
}

/**
 * What the delivered events left in hubgate's database, per table (its partitions summed): rows, and
 * bytes of heap and of indexes. The capacity model's inputs (docs/scaling.md).
 */
async function storageOf(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('vacuum analyze');
    const { rows } = await client.query<{ relation: string; rows: string; heap: string; indexes: string }>(`
      select parent.relname as relation,
        sum(child.reltuples)::bigint as rows,
        sum(pg_table_size(child.oid))::bigint as heap,
        sum(pg_indexes_size(child.oid))::bigint as indexes
      from pg_class parent
      join pg_inherits i on i.inhparent = parent.oid
      join pg_class child on child.oid = i.inhrelid
      where parent.relname in ('events', 'deliveries', 'delivery_attempts')
      group by parent.relname order by parent.relname`);
    return rows.map((r) => ({
      relation: r.relation,
      rows: Number(r.rows),
      heap: Number(r.heap),
      indexes: Number(r.indexes),
    }));
  } finally {
    await client.end();
  }
}

if (storage.length > 0) {
  console.log('\nstorage left by the delivered events (all partitions, after VACUUM):');
  console.log('| table | rows | heap bytes/row | index bytes/row |');
  console.log('|---|---:|---:|---:|');
  for (const t of storage) {
    const per = (bytes: number) => (t.rows > 0 ? (bytes / t.rows).toFixed(0) : '–');
    console.log(`| ${t.relation} | ${t.rows} | ${per(t.heap)} | ${per(t.indexes)} |`);
  }
}

/**
 * The database's committed transactions and written rows (inserted, updated, deleted) so far, or since
 * `before`: every statement outside a transaction is one commit, so commits per event say how many
 * statements each event cost, all processes together (the other processes' periodic work included).
 */
async function databaseWork(url: string, before?: { commits: number; tuples: number; wal: number }) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // The statistics are sent by each backend when its transaction ends, at most every second.
    if (before) await new Promise((r) => setTimeout(r, 1_500));
    // WAL is counted for the whole server: nothing else writes during hubgate's phases.
    const { rows } = await client.query<{ commits: string; tuples: string; wal: string }>(`
      select xact_commit as commits, tup_inserted + tup_updated + tup_deleted as tuples,
        (select wal_bytes from pg_stat_wal) as wal
      from pg_stat_database where datname = current_database()`);
    const now = {
      commits: Number(rows[0]?.commits ?? 0),
      tuples: Number(rows[0]?.tuples ?? 0),
      wal: Number(rows[0]?.wal ?? 0),
    };
    return before
      ? {
          commits: now.commits - before.commits,
          tuples: now.tuples - before.tuples,
          wal: now.wal - before.wal,
        }
      : now;
  } finally {
    await client.end();
  }
}

if (work.length > 0) {
  console.log('\nhubgate database work per event (all statements of all processes in the phase):');
  console.log('| phase | commits/event | rows written/event | WAL bytes/event |');
  console.log('|---|---:|---:|---:|');
  for (const w of work) {
    console.log(
      `| ${w.label} | ${(w.commits / w.events).toFixed(3)} | ${(w.tuples / w.events).toFixed(2)} | ${(w.wal / w.events).toFixed(0)} |`,
    );
  }
}
