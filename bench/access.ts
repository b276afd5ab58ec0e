import { randomBytes } from 'node:crypto';
import {
  benchTenant,
  buildHubgate,
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
 * Issue 4's benchmark: hubgate on PostgreSQL against bare Fastify references, in one run.
 * (a) a bare route, (a2) a bare Fastify + pg route running the SQL that (c) runs (bare-pg-server.ts),
 * (b) GET /api/v1/automation/health with a tnt_ key, (c) GET /api/v1/integrations/connections with a
 * key, a first page of 20, (d) the same list with a portal session's ptl_ token (issue 39: the portal
 * gate should cost the API nothing measurable). Goals: (b) at least 70 % of (a), (c) at least 80 % of
 * (a2), (d) at least 95 % of (c).
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
// BENCH_ROUNDS=3 measures the cases in turns, SECONDS / ROUNDS (whole seconds) each turn, every
// other turn in the reverse order, so that work elsewhere on a shared machine falls on every case
// alike; the default, 1, measures each case once, in order.
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 1)));

const db = await freshDatabase();
const secretKey = randomBytes(32).toString('base64');
const env = { DATABASE_URL: db.url, HUBGATE_SECRET_KEY: secretKey };
buildHubgate();

const results: LoadResult[] = [];
let listMatches: boolean | undefined;
let portalMatches: boolean | undefined;
/** Where the first difference between two answers is, when they differ, to say what to fix. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at character ${i}: …${a.slice(Math.max(0, i - 40), i + 60)}… vs …${b.slice(Math.max(0, i - 40), i + 60)}…`;
}
let listDifference = '';
try {
  const plt = prepareHubgate(env);

  const bare = await startProcess(['bench/bare-server.ts'], {}, await freePort(), '/');
  const bareLogged = await startProcess(['bench/bare-server.ts'], { BARE_LOG: '1' }, await freePort(), '/');
  const hub = await startProcess(
    ['dist/main.js', 'serve'],
    // A limit no benchmark reaches: this measures the gate, not the limiter's refusals.
    { ...env, LOG_LEVEL, RATE_LIMIT_PER_MINUTE: '100000000' },
    await freePort(),
    '/readyz',
  );
  const servers = [bare, bareLogged, hub];
  try {
    const { session, keySecret, tenantId } = await benchTenant(
      hub.baseUrl,
      plt,
      ['integrations', 'integration_hub'],
      ['integrations:READER', 'integration_hub:READER'],
    );
    const bearer = { authorization: `Bearer ${keySecret}` };
    // A full first page for (c): 20 connections of the tenant.
    for (let i = 0; i < 20; i++) {
      await httpJson('POST', `${hub.baseUrl}/api/v1/integrations/connections`, session, {
        connectorKey: 'webhook',
        displayName: `bench ${i}`,
        url: 'https://hooks.example.com/bench',
      });
    }

    // (d): a portal session of the same tenant, read access, every connection (no connectionIds), so
    // its list runs the same statement as (c); its link exchanged once for the ptl_ token.
    const minted = await httpJson(
      'POST',
      `${hub.baseUrl}/api/v1/platform/tenants/${tenantId}/portal-sessions`,
      { authorization: `Bearer ${plt}` },
      { subject: 'bench', access: 'read', expiresInSeconds: 86_400 },
    );
    let portalBearer: Record<string, string> | undefined;
    if (minted.status === 201) {
      const code = new URL(minted.body.url as string).hash.replace(/^#code=/, '');
      const exchanged = await httpJson('POST', `${hub.baseUrl}/api/v1/portal/exchange`, {}, { code });
      if (exchanged.status === 200) portalBearer = { authorization: `Bearer ${exchanged.body.token}` };
    }
    if (!portalBearer) console.log(`(d) skipped: a portal session answered ${minted.status} (not built yet)`);

    // (a2) starts once the tenant and its connections exist: it reads them from the same database.
    const barePg = await startProcess(
      ['bench/bare-pg-server.ts'],
      { DATABASE_URL: db.url, BARE_TENANT_ID: tenantId },
      await freePort(),
      '/healthz',
    );
    servers.push(barePg);
    const barePgUrl = `${barePg.baseUrl}/connections`;
    const listUrl = `${hub.baseUrl}/api/v1/integrations/connections`;
    const probe = await httpJson('GET', listUrl, bearer);
    if (probe.status === 200) {
      // The reference answers exactly what hubgate answers, or the comparison is not like for like.
      const reference = await httpJson('GET', barePgUrl);
      listMatches = JSON.stringify(reference.body) === JSON.stringify(probe.body);
      if (!listMatches)
        listDifference = firstDifference(JSON.stringify(reference.body), JSON.stringify(probe.body));
      if (portalBearer) {
        // The ptl_ token sees what the key sees: the same page, or the cases are not comparable.
        const portal = await httpJson('GET', listUrl, portalBearer);
        portalMatches = JSON.stringify(portal.body) === JSON.stringify(probe.body);
      }
    }

    const options = { connections: CONNECTIONS, seconds: SECONDS };
    // A short warm-up of each, so JIT and connection pools are settled before measuring.
    await load('warm-up', `${bare.baseUrl}/`, { ...options, seconds: 2 });
    await load('warm-up', barePgUrl, { ...options, seconds: 2 });
    await load('warm-up', `${hub.baseUrl}/api/v1/automation/health`, {
      ...options,
      seconds: 2,
      headers: bearer,
    });
    if (probe.status === 200) await load('warm-up', listUrl, { ...options, seconds: 2, headers: bearer });
    if (probe.status === 200 && portalBearer)
      await load('warm-up', listUrl, { ...options, seconds: 2, headers: portalBearer });

    const cases: Array<{ label: string; url: string; headers?: Record<string, string> }> = [
      { label: '(a) bare Fastify route', url: `${bare.baseUrl}/` },
      { label: '(a2) bare Fastify + pg, same SQL as (c)', url: barePgUrl },
      // Not part of the target; they show where the time goes: a log line per request, and
      // hubgate's framework (request IDs, headers, access log) without a credential.
      { label: '(-) bare Fastify + pino access line', url: `${bareLogged.baseUrl}/` },
      { label: '(-) GET /healthz, no credential', url: `${hub.baseUrl}/healthz` },
      {
        label: '(b) GET /automation/health, tnt_ key',
        url: `${hub.baseUrl}/api/v1/automation/health`,
        headers: bearer,
      },
    ];
    if (probe.status === 200) {
      cases.push({ label: '(c) GET /integrations/connections, tnt_ key', url: listUrl, headers: bearer });
      if (portalBearer)
        cases.push({
          label: '(d) GET /integrations/connections, ptl_ token',
          url: listUrl,
          headers: portalBearer,
        });
    } else {
      console.log(
        `(c) skipped: GET /api/v1/integrations/connections answers ${probe.status} (not built yet)`,
      );
    }
    const turns = new Map<string, LoadResult[]>();
    for (let round = 0; round < ROUNDS; round++) {
      // Every other turn in the reverse order: a case measured right after another (as (d) after
      // (c)) is not always the one that meets what the previous case left behind.
      for (const { label, url, headers } of round % 2 ? [...cases].reverse() : cases) {
        const seconds = Math.max(1, Math.round(SECONDS / ROUNDS));
        const turn = await load(label, url, { ...options, seconds, headers });
        turns.set(label, [...(turns.get(label) ?? []), turn]);
      }
    }
    for (const { label } of cases) results.push(combinedTurns(label, turns.get(label) ?? []));
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
} finally {
  await db.drop();
}

const rpsOf = (prefix: string) => results.find((r) => r.label.startsWith(prefix))?.rps;
const ceiling = rpsOf('(a) ') ?? 1;
// (b) against (a), (c) against (a2): the reference that does the same work without hubgate; (d)
// against (c): the same work through hubgate with the other credential.
const references: Record<string, { of: string; goal: number }> = {
  '(b) ': { of: '(a) ', goal: 0.7 },
  '(c) ': { of: '(a2) ', goal: 0.8 },
  '(d) ': { of: '(c) ', goal: 0.95 },
};
const referenceOf = (label: string) =>
  Object.entries(references).find(([prefix]) => label.startsWith(prefix));
const percent = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
console.log(
  `\naccess benchmark: ${CONNECTIONS} connections, ${SECONDS} s each${ROUNDS > 1 ? ` in ${ROUNDS} turns` : ''}, hubgate LOG_LEVEL=${LOG_LEVEL}, PostgreSQL`,
);
console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors | vs (a) | vs ref |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const ref = referenceOf(r.label);
  const refRps = ref ? rpsOf(ref[1].of) : undefined;
  const vsRef = ref && refRps ? `${percent(r.rps / refRps)} of ${ref[1].of.trim()}` : '';
  console.log(
    `| ${r.label} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${percent(r.rps / ceiling)} | ${vsRef} |`,
  );
}
const goals = Object.entries(references).flatMap(([prefix, { of, goal }]) => {
  const rps = rpsOf(prefix);
  const refRps = rpsOf(of);
  if (rps === undefined || refRps === undefined) return [];
  const ratio = rps / refRps;
  return [
    `${prefix.trim()} ≥ ${percent(goal)} of ${of.trim()}: ${percent(ratio)} ${ratio >= goal ? 'met' : 'NOT met'}`,
  ];
});
console.log(`goals: ${goals.join('; ')}`);
if (listMatches !== undefined) {
  console.log(
    listMatches
      ? '(a2) answers the same JSON as (c), byte for byte'
      : `warning: (a2) does not answer what (c) answers, ${listDifference}: the comparison is not like for like`,
  );
}
if (portalMatches !== undefined) {
  console.log(
    portalMatches
      ? '(d) answers the same JSON as (c), byte for byte'
      : 'warning: (d) does not answer what (c) answers: the comparison is not like for like',
  );
}
