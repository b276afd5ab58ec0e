import { randomBytes } from 'node:crypto';
import {
  benchTenant,
  buildHubgate,
  freePort,
  freshDatabase,
  httpJson,
  load,
  type LoadResult,
  prepareHubgate,
  startProcess,
} from './support.js';

/**
 * Issue 4's benchmark: hubgate on PostgreSQL against a bare Fastify route, in one run.
 * (a) the bare route, (b) GET /api/v1/automation/health with a tnt_ key, (c) GET
 * /api/v1/integrations/connections with a key (only once that route exists).
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';

const db = await freshDatabase();
const secretKey = randomBytes(32).toString('base64');
const env = { DATABASE_URL: db.url, HUBGATE_SECRET_KEY: secretKey };
buildHubgate();

const results: LoadResult[] = [];
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
  try {
    const { session, keySecret } = await benchTenant(
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

    const options = { connections: CONNECTIONS, seconds: SECONDS };
    // A short warm-up of each, so JIT and connection pools are settled before measuring.
    await load('warm-up', `${bare.baseUrl}/`, { ...options, seconds: 2 });
    await load('warm-up', `${hub.baseUrl}/api/v1/automation/health`, {
      ...options,
      seconds: 2,
      headers: bearer,
    });

    results.push(await load('(a) bare Fastify route', `${bare.baseUrl}/`, options));
    // Not part of the target; they show where the time goes: a log line per request, and
    // hubgate's framework (request IDs, headers, access log) without a credential.
    results.push(await load('(-) bare Fastify + pino access line', `${bareLogged.baseUrl}/`, options));
    results.push(await load('(-) GET /healthz, no credential', `${hub.baseUrl}/healthz`, options));
    results.push(
      await load('(b) GET /automation/health, tnt_ key', `${hub.baseUrl}/api/v1/automation/health`, {
        ...options,
        headers: bearer,
      }),
    );
    const probe = await httpJson('GET', `${hub.baseUrl}/api/v1/integrations/connections`, bearer);
    if (probe.status === 200) {
      results.push(
        await load(
          '(c) GET /integrations/connections, tnt_ key',
          `${hub.baseUrl}/api/v1/integrations/connections`,
          {
            ...options,
            headers: bearer,
          },
        ),
      );
    } else {
      console.log(
        `(c) skipped: GET /api/v1/integrations/connections answers ${probe.status} (not built yet)`,
      );
    }
  } finally {
    await Promise.all([bare.stop(), bareLogged.stop(), hub.stop()]);
  }
} finally {
  await db.drop();
}

const ceiling = results[0]?.rps ?? 1;
console.log(
  `\naccess benchmark: ${CONNECTIONS} connections, ${SECONDS} s each, hubgate LOG_LEVEL=${LOG_LEVEL}, PostgreSQL`,
);
console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors | vs (a) |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(
    `| ${r.label} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${((r.rps / ceiling) * 100).toFixed(0)} % |`,
  );
}
