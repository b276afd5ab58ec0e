import { randomBytes } from 'node:crypto';
import {
  benchTenant,
  buildHubgate,
  freePort,
  freshDatabase,
  httpJson,
  load,
  prepareHubgate,
  startProcess,
  type LoadResult,
} from './support.js';

/**
 * Issue 41's benchmark: an MCP tool call beside the API route it stands for, in one run, on
 * PostgreSQL. (c) GET /api/v1/integrations/connections with a tnt_ key, a first page of 20; (m) the
 * same page as `tools/call list_connections` through POST /api/v1/mcp with the same key. Goal: the
 * MCP layer costs at most 25 % over the route, (m) at least 80 % of (c)'s rate.
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

const db = await freshDatabase();
const env = { DATABASE_URL: db.url, HUBGATE_SECRET_KEY: randomBytes(32).toString('base64') };
buildHubgate();

const results: LoadResult[] = [];
let sameAnswer = false;
try {
  const plt = prepareHubgate(env);
  const hub = await startProcess(
    ['dist/main.js', 'serve'],
    // A limit no benchmark reaches: this measures the MCP layer, not the limiter's refusals.
    { ...env, LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '100000000' },
    await freePort(),
    '/readyz',
  );
  try {
    const { session, keySecret } = await benchTenant(
      hub.baseUrl,
      plt,
      ['integrations'],
      ['integrations:READER'],
    );
    for (let i = 0; i < 20; i++) {
      await httpJson('POST', `${hub.baseUrl}/api/v1/integrations/connections`, session, {
        connectorKey: 'webhook',
        displayName: `bench ${i}`,
        url: 'https://hooks.example.com/bench',
      });
    }
    const bearer = { authorization: `Bearer ${keySecret}` };
    const listUrl = `${hub.baseUrl}/api/v1/integrations/connections`;
    const mcpUrl = `${hub.baseUrl}/api/v1/mcp`;
    const mcpHeaders = { ...bearer, accept: 'application/json, text/event-stream' };
    const call = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_connections', arguments: {} },
    };
    // Like for like: the tool's structured content is the route's answer.
    const api = await httpJson('GET', listUrl, bearer);
    const tool = await httpJson('POST', mcpUrl, mcpHeaders, call);
    sameAnswer = JSON.stringify(tool.body?.result?.structuredContent) === JSON.stringify(api.body);

    const options = { connections: CONNECTIONS, seconds: SECONDS };
    await load('warm-up', listUrl, { ...options, seconds: 2, headers: bearer });
    await load('warm-up', mcpUrl, { ...options, seconds: 2, headers: mcpHeaders, body: call });
    results.push(
      await load('(c) GET /integrations/connections, tnt_ key', listUrl, { ...options, headers: bearer }),
    );
    results.push(
      await load('(m) tools/call list_connections, tnt_ key', mcpUrl, {
        ...options,
        headers: mcpHeaders,
        body: call,
      }),
    );
  } finally {
    await hub.stop();
  }
} finally {
  await db.drop();
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
console.log(`\nmcp benchmark: ${CONNECTIONS} connections, ${SECONDS} s each, PostgreSQL`);
console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of results) {
  console.log(`| ${r.label} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} |`);
}
const [api, mcp] = results;
if (api && mcp) {
  const ratio = mcp.rps / api.rps;
  console.log(`goal: (m) ≥ 80 % of (c) (≤ 25 % cost): ${percent(ratio)} ${ratio >= 0.8 ? 'met' : 'NOT met'}`);
}
console.log(
  sameAnswer
    ? "(m)'s structured content is (c)'s answer"
    : "warning: (m)'s structured content is not (c)'s answer: the comparison is not like for like",
);
