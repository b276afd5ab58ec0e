import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import {
  benchTenant,
  buildHubgate,
  buildOfCommit,
  combinedTurns,
  freePort,
  freshDatabase,
  httpJson,
  load,
  prepareHubgate,
  startProcess,
  type LoadResult,
} from './support.js';

/**
 * Issue 43's benchmark (contract §24), one run on PostgreSQL:
 *
 * 1. Isolation. Tenant B publishes at a fixed rate and reads its connections at a fixed rate, alone,
 *    then while tenant A floods the publish route far past its quotas (requestsPerMinute and
 *    eventsPerDay set by the platform, so nearly every one of A's requests is a 429). The two take
 *    turns (BENCH_ROUNDS), so load from elsewhere falls on both alike. Goal: B's p50 and p99 within
 *    10 % of alone.
 * 2. What counting costs. Single publishes with a key, as fast as CONNECTIONS clients go, on this
 *    build and on BENCH_BEFORE (default 249be7e, the last commit before issue 43: no usage meter, no
 *    quota lookup, no tenant bucket), both serving the same database, in turns. Goal: ≤ 5 % fewer
 *    publishes a second. The figure is an upper bound of the usage meter's cost: it also holds the
 *    quota lookup and the tenant's rate-limit bucket that the publish path gained with it.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 3)));
/** Tenant B's fixed publish rate, and its fixed read rate, requests a second. */
const STEADY_RATE = Number(process.env.BENCH_STEADY_RATE ?? 200);
const READ_RATE = Number(process.env.BENCH_READ_RATE ?? 100);
const BEFORE = process.env.BENCH_BEFORE ?? '249be7e';
/** Tenant A's quotas: what its flood runs into. */
const A_REQUESTS_PER_MINUTE = 6_000;
const A_EVENTS_PER_DAY = 1_000;

const db = await freshDatabase();
const env = {
  DATABASE_URL: db.url,
  HUBGATE_SECRET_KEY: randomBytes(32).toString('base64'),
  // The per-credential default no case reaches: tenant A runs into its own quotas, set below.
  RATE_LIMIT_PER_MINUTE: '100000000',
  LOG_LEVEL: 'warn',
};
buildHubgate();

const publishBody = JSON.stringify({ type: 'order.paid', data: { orderId: 'A-1', amount: 4200 } });

/** A fixed-rate client: latency, not throughput. */
function steady(label: string, url: string, key: string, rate: number, seconds: number, post: boolean) {
  return autocannon({
    url,
    connections: 10,
    duration: seconds,
    overallRate: rate,
    ...(post
      ? {
          method: 'POST' as const,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: publishBody,
        }
      : { headers: { authorization: `Bearer ${key}` } }),
  }).then((r): LoadResult => ({
    label,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
    requests: r.requests.total,
  }));
}

/** Tenant A's flood: as many publishes as CONNECTIONS clients send; the answers by status. */
async function flood(url: string, key: string, seconds: number) {
  const statuses: Record<string, number> = {};
  const r = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: publishBody,
    setupClient: (client) => {
      client.on('response', (status: number) => {
        statuses[status] = (statuses[status] ?? 0) + 1;
      });
    },
  });
  return { rps: r.requests.average, statuses };
}

const isolation = new Map<string, LoadResult[]>();
const floods: Array<{ rps: number; statuses: Record<string, number> }> = [];
const counting = new Map<string, LoadResult[]>();
const add = (into: Map<string, LoadResult[]>, r: LoadResult) =>
  into.set(r.label, [...(into.get(r.label) ?? []), r]);

try {
  const plt = prepareHubgate(env);
  const auth = { authorization: `Bearer ${plt}` };
  const hub = await startProcess(['dist/main.js', 'serve'], env, await freePort(), '/readyz');
  try {
    const scopes = ['integrations:OPERATOR'];
    const a = await benchTenant(hub.baseUrl, plt, ['integrations'], scopes);
    const b = await benchTenant(hub.baseUrl, plt, ['integrations'], scopes);
    const quotas = await httpJson(
      'PUT',
      `${hub.baseUrl}/api/v1/platform/tenants/${a.tenantId}/quotas`,
      auth,
      {
        eventsPerDay: A_EVENTS_PER_DAY,
        connections: null,
        requestsPerMinute: A_REQUESTS_PER_MINUTE,
        retentionDays: null,
      },
    );
    if (quotas.status !== 200) throw new Error(`setting tenant A's quotas: ${JSON.stringify(quotas.body)}`);
    const events = `${hub.baseUrl}/api/v1/integrations/events`;
    const connections = `${hub.baseUrl}/api/v1/integrations/connections`;
    const seconds = Math.max(1, Math.round(SECONDS / ROUNDS));
    // Warm-up: both tenants' paths, and A past its quotas.
    await Promise.all([
      steady('', events, b.keySecret, STEADY_RATE, 2, true),
      steady('', connections, b.keySecret, READ_RATE, 2, false),
      flood(events, a.keySecret, 2),
    ]);
    for (let round = 0; round < ROUNDS; round++) {
      const [publishAlone, readAlone] = await Promise.all([
        steady('(b) B publishes, alone', events, b.keySecret, STEADY_RATE, seconds, true),
        steady('(b) B reads its connections, alone', connections, b.keySecret, READ_RATE, seconds, false),
      ]);
      add(isolation, publishAlone);
      add(isolation, readAlone);
      const [publishFlooded, readFlooded, flooded] = await Promise.all([
        steady('(b) B publishes, A flooding', events, b.keySecret, STEADY_RATE, seconds, true),
        steady(
          '(b) B reads its connections, A flooding',
          connections,
          b.keySecret,
          READ_RATE,
          seconds,
          false,
        ),
        flood(events, a.keySecret, seconds),
      ]);
      add(isolation, publishFlooded);
      add(isolation, readFlooded);
      floods.push(flooded);
    }
  } finally {
    await hub.stop();
  }

  // Part 2: this build beside the one before issue 43, on the same database, in turns.
  const now = await startProcess(['dist/main.js', 'serve'], env, await freePort(), '/readyz');
  const before = BEFORE
    ? await startProcess(['dist/main.js', 'serve'], env, await freePort(), '/readyz', buildOfCommit(BEFORE))
    : undefined;
  try {
    const c = await benchTenant(now.baseUrl, plt, ['integrations'], ['integrations:OPERATOR']);
    const servers = [
      ...(before ? [[`${BEFORE}, before issue 43`, before] as const] : []),
      ['this build', now] as const,
    ];
    const publish = (label: string, baseUrl: string, s: number) =>
      load(label, `${baseUrl}/api/v1/integrations/events`, {
        connections: CONNECTIONS,
        seconds: s,
        headers: { authorization: `Bearer ${c.keySecret}` },
        body: JSON.parse(publishBody),
      });
    for (const [, server] of servers) await publish('', server.baseUrl, 2); // warm-up
    const seconds = Math.max(1, Math.round(SECONDS / ROUNDS));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, server] of servers)
        add(counting, await publish(`POST /integrations/events, ${name}`, server.baseUrl, seconds));
    }
  } finally {
    await Promise.all([now.stop(), before?.stop()]);
  }
} finally {
  await db.drop();
}

const row = (r: LoadResult) =>
  `| ${r.label} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`;
const header = () => {
  console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors |');
  console.log('|---|---:|---:|---:|---:|---:|');
};
const combined = (into: Map<string, LoadResult[]>) =>
  [...into].map(([label, turns]) => combinedTurns(label, turns));

console.log(
  `\ntenants benchmark, PostgreSQL, ${ROUNDS} turns of ${Math.max(1, Math.round(SECONDS / ROUNDS))} s per case`,
);
console.log(
  `\n1. tenant B at ${STEADY_RATE} publishes/s and ${READ_RATE} reads/s, alone and while tenant A ` +
    `(requestsPerMinute ${A_REQUESTS_PER_MINUTE}, eventsPerDay ${A_EVENTS_PER_DAY}) floods with ${CONNECTIONS} connections`,
);
header();
const iso = combined(isolation);
for (const r of iso) console.log(row(r));
const statuses: Record<string, number> = {};
for (const f of floods) for (const [s, n] of Object.entries(f.statuses)) statuses[s] = (statuses[s] ?? 0) + n;
const floodRps = floods.reduce((t, f) => t + f.rps, 0) / Math.max(1, floods.length);
console.log(`flood: ${Math.round(floodRps)} req/s from tenant A, answers ${JSON.stringify(statuses)}`);
for (const kind of ['publishes', 'reads its connections']) {
  const alone = iso.find((r) => r.label.includes(kind) && r.label.endsWith('alone'));
  const flooded = iso.find((r) => r.label.includes(kind) && r.label.endsWith('flooding'));
  if (!alone || !flooded) continue;
  const within = (x: number, y: number) => y <= x * 1.1;
  console.log(
    `goal (B ${kind}): p50 ${alone.p50} → ${flooded.p50} ms, p99 ${alone.p99} → ${flooded.p99} ms: ` +
      `${within(alone.p50, flooded.p50) && within(alone.p99, flooded.p99) ? 'within 10 %, met' : 'NOT within 10 %'}`,
  );
}

console.log(`\n2. single publishes, ${CONNECTIONS} connections, this build beside ${BEFORE || '(none)'}`);
header();
const cost = combined(counting);
for (const r of cost) console.log(row(r));
const [was, is] = cost.length === 2 ? cost : [undefined, cost[0]];
if (was && is) {
  const loss = 1 - is.rps / was.rps;
  console.log(
    `goal: counting usage costs ≤ 5 % of publishes/s: ${(loss * 100).toFixed(1)} % ${loss <= 0.05 ? 'met' : 'NOT met'}`,
  );
}
