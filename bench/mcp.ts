import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
 * Issue 41's benchmark: an MCP tool call beside the API route it stands for, in one run, on
 * PostgreSQL. (c) GET /api/v1/integrations/connections with a tnt_ key, a first page of 20; (m) the
 * same page as `tools/call list_connections` through POST /api/v1/mcp with the same key. Goal: the
 * MCP layer costs at most 25 % over the route, (m) at least 80 % of (c)'s rate. Beside them, where
 * the difference goes: (p) a JSON-RPC `ping` through the same POST (the request, the gate and the
 * SDK's server and transport, no route called) and (h) GET /api/v1/automation/health with the key
 * (the request and the gate, no query).
 */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
// BENCH_ROUNDS=3 measures the cases in turns, SECONDS / ROUNDS (whole seconds) each turn, every
// other turn in the reverse order, so that work elsewhere on a shared machine falls on each alike.
const ROUNDS = Math.max(1, Math.round(Number(process.env.BENCH_ROUNDS ?? 1)));
// BENCH_CASES=m (letters) runs only those cases: a profile of one case alone.
const CASES = process.env.BENCH_CASES ?? 'cmph';

const db = await freshDatabase();
const env = { DATABASE_URL: db.url, HUBGATE_SECRET_KEY: randomBytes(32).toString('base64') };
buildHubgate();

/**
 * CPU milliseconds (user + system) `serve` has used so far, from /proc/PID/stat (fields 14 and 15,
 * in ticks of 10 ms). Per request, it says what a case costs hubgate whatever else the machine runs;
 * the rates move with the other work of a shared machine.
 */
function cpuOf(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  return ((fields[11] ?? 0) + (fields[12] ?? 0)) * 10;
}

const results: LoadResult[] = [];
const cpuPerRequest = new Map<string, number>();
let sameAnswer = false;
let sizes = '';
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
    sizes = `answers (as compact JSON): (c) ${JSON.stringify(api.body).length} bytes, (m) ${JSON.stringify(tool.body).length} bytes`;

    const options = { connections: CONNECTIONS, seconds: SECONDS };
    const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const cases = [
      { label: '(c) GET /integrations/connections, tnt_ key', url: listUrl, headers: bearer },
      { label: '(m) tools/call list_connections, tnt_ key', url: mcpUrl, headers: mcpHeaders, body: call },
      { label: '(p) ping through POST /mcp, tnt_ key', url: mcpUrl, headers: mcpHeaders, body: ping },
      {
        label: '(h) GET /automation/health, tnt_ key',
        url: `${hub.baseUrl}/api/v1/automation/health`,
        headers: bearer,
      },
    ];
    const chosen = cases.filter(({ label }) => CASES.includes(label.charAt(1)));
    for (const { url, headers, body } of chosen) {
      await load('warm-up', url, { ...options, seconds: 2, headers, body });
    }
    const turns = new Map<string, LoadResult[]>();
    const cpu = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? chosen : [...chosen].reverse();
      for (const { label, url, headers, body } of order) {
        const seconds = Math.max(1, Math.round(SECONDS / ROUNDS));
        const before = cpuOf(hub.child.pid);
        const turn = await load(label, url, { ...options, seconds, headers, body });
        cpu.set(label, (cpu.get(label) ?? 0) + cpuOf(hub.child.pid) - before);
        turns.set(label, [...(turns.get(label) ?? []), turn]);
      }
    }
    for (const { label } of chosen) {
      const result = combinedTurns(label, turns.get(label) ?? []);
      results.push(result);
      if (result.requests) cpuPerRequest.set(label, (cpu.get(label) ?? 0) / result.requests);
    }
  } finally {
    await hub.stop();
  }
} finally {
  await db.drop();
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(0)} %`;
console.log(
  `\nmcp benchmark: ${CONNECTIONS} connections, ${SECONDS} s each${ROUNDS > 1 ? ` in ${ROUNDS} turns` : ''}, PostgreSQL`,
);
console.log('| case | req/s | p50 ms | p99 ms | non-2xx | errors | `serve` CPU ms per request |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const cpu = cpuPerRequest.get(r.label);
  console.log(
    `| ${r.label} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.non2xx} | ${r.errors} | ${cpu === undefined ? '–' : cpu.toFixed(3)} |`,
  );
}
const api = results.find((r) => r.label.startsWith('(c)'));
const mcp = results.find((r) => r.label.startsWith('(m)'));
if (api && mcp) {
  const ratio = mcp.rps / api.rps;
  console.log(`goal: (m) ≥ 80 % of (c) (≤ 25 % cost): ${percent(ratio)} ${ratio >= 0.8 ? 'met' : 'NOT met'}`);
  const apiCpu = cpuPerRequest.get(api.label);
  const mcpCpu = cpuPerRequest.get(mcp.label);
  if (apiCpu && mcpCpu) {
    console.log(`CPU of serve per request: (m) ${percent(mcpCpu / apiCpu)} of (c)'s`);
  }
}
console.log(sizes);
console.log(
  sameAnswer
    ? "(m)'s structured content is (c)'s answer"
    : "warning: (m)'s structured content is not (c)'s answer: the comparison is not like for like",
);
