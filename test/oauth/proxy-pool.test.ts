import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { PROXY_CALLS_AT_ONCE, PROXY_CALLS_AT_ONCE_PER_TENANT } from '../../src/oauth/proxy.js';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse } from '../helpers/harness.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// Tenants sharing a provider do not wait for each other's slow calls (issue 37, item 4;
// docs/decisions/0065-proxy-pool-and-provider-words.md). FOUND: the proxy's calls shared one undici
// pool of 64 connections per origin with the token calls: two tenants' 32 slow calls each took
// every socket, a third tenant's call queued behind them (3.2–3.9 s measured outside), and of
// 5 × 32 calls the 64 admitted beyond the sockets ended as 502 when their time ran out in the queue.
let h: Harness;
let api: Receiver;
let tokenEndpoint: Receiver;
let close: () => Promise<unknown>;
let release!: () => void;
let held = new Promise<void>((resolve) => (release = resolve));
let n = 0;

const TIMEOUT_MS = 8000;
const CONNECTIONS = '/api/v1/integrations/connections';

before(async () => {
  h = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });
  const closing: Array<() => unknown> = [];
  const cleanup = { after: (fn: () => unknown) => closing.push(fn) };
  // One provider API for every tenant: the calls share an origin, as tenants of one provider do.
  api = await startReceiver(cleanup, async (request, _i, res) => {
    if (request.url.startsWith('/v1/slow')) await held;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  });
  tokenEndpoint = await startReceiver(cleanup, (_r, _i, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ access_token: `tok-${++n}`, token_type: 'Bearer', expires_in: 3600 }));
  });
  close = () => Promise.all(closing.map((fn) => fn()));
});
after(async () => {
  release();
  await close();
  await h.close();
});

/** A tenant with an OPERATOR key and a client-credentials connection to the shared API. */
async function tenantWithConnection() {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  const provider = await h.request('POST', '/api/v1/platform/oauth-providers', {
    token: h.platformToken,
    body: {
      key: `pool${++n}-${Date.now().toString(36)}`,
      name: 'Shared API',
      authorizationUrl: 'https://idp.example/authorize',
      tokenUrl: tokenEndpoint.url('/token'),
      apiBaseUrl: api.url('/v1'),
      clientId: 'hubgate',
      clientSecret: 'pool-secret',
      grant: 'client_credentials',
    },
  });
  assert.equal(provider.status, 201, provider.text);
  const created = await h.request('POST', CONNECTIONS, {
    session,
    body: { connectorKey: provider.body.connectorKey, displayName: 'Shared API' },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id as string;
  return {
    call: (path: string) => h.request('GET', `${CONNECTIONS}/${id}/proxy/${path}`, { token: key.secret }),
  };
}

/** Calls settle in the background; `settled` counts them, so a test sees which are still open. */
function track(calls: Array<Promise<TestResponse>>) {
  let settled = 0;
  const all = Promise.all(calls.map((c) => c.finally(() => settled++)));
  return { all, settled: () => settled };
}

const slowAtTheApi = () => api.received.filter((r) => r.url.startsWith('/v1/slow')).length;

test('two tenants’ slow calls, 32 each, do not delay a third tenant’s call to the same provider', async (t) => {
  held = new Promise<void>((resolve) => (release = resolve));
  const [a, b, c] = [
    await tenantWithConnection(),
    await tenantWithConnection(),
    await tenantWithConnection(),
  ];
  // The reference: C's call on an idle proxy.
  let started = performance.now();
  const reference = await c.call('quick/0');
  const referenceMs = performance.now() - started;
  assert.equal(reference.status, 200, reference.text);

  const before = slowAtTheApi();
  const slow = track(
    [a, b].flatMap((tenant) =>
      Array.from({ length: PROXY_CALLS_AT_ONCE_PER_TENANT }, (_, i) => tenant.call(`slow/${i}`)),
    ),
  );
  try {
    await waitUntil(() => slowAtTheApi() - before === 2 * PROXY_CALLS_AT_ONCE_PER_TENANT, {
      message: () => `64 slow calls at the API (${slowAtTheApi() - before} arrived)`,
    });
    started = performance.now();
    const quick = await c.call('quick/1');
    const quickMs = performance.now() - started;
    t.diagnostic(
      `C's call: ${quickMs.toFixed(0)} ms beside 64 slow calls, ${referenceMs.toFixed(0)} ms alone`,
    );
    assert.equal(
      quick.status,
      200,
      `C's call answered ${quick.status} after ${quickMs.toFixed(0)} ms: ${quick.text}`,
    );
    // C answered while every slow call of A and B is still open at the provider.
    assert.equal(slow.settled(), 0, 'a slow call ended before C’s answer: C may have waited for it');
    assert.ok(quickMs < TIMEOUT_MS / 4, `C's call took ${quickMs.toFixed(0)} ms beside the slow calls`);
  } finally {
    release();
  }
  for (const r of await slow.all) assert.equal(r.status, 200, `a slow call answered ${r.status}: ${r.text}`);
});

test('5 tenants × 32 slow calls: the 128 let in all reach the provider at once and answer; the rest are 429, none 502', async (t) => {
  held = new Promise<void>((resolve) => (release = resolve));
  const tenants = [];
  for (let i = 0; i < 5; i++) tenants.push(await tenantWithConnection());
  const before = slowAtTheApi();
  const calls = track(
    tenants.flatMap((tenant) =>
      Array.from({ length: PROXY_CALLS_AT_ONCE_PER_TENANT }, (_, i) => tenant.call(`slow/${i}`)),
    ),
  );
  try {
    // Every admitted call has its own connection to the provider: none waits in a queue for one.
    await waitUntil(
      () => slowAtTheApi() - before === PROXY_CALLS_AT_ONCE && calls.settled() === 160 - PROXY_CALLS_AT_ONCE,
      {
        message: () =>
          `${PROXY_CALLS_AT_ONCE} calls at the API at once (${slowAtTheApi() - before} arrived, ${calls.settled()} answered)`,
      },
    );
  } finally {
    release();
  }
  const statuses = (await calls.all).map((r) => r.status);
  const count = (status: number) => statuses.filter((s) => s === status).length;
  t.diagnostic(`200: ${count(200)}, 429: ${count(429)}, 502: ${count(502)}`);
  assert.equal(count(502), 0, 'a call ended as 502');
  assert.equal(count(200), PROXY_CALLS_AT_ONCE, 'not every admitted call answered 200');
  assert.equal(count(429), 160 - PROXY_CALLS_AT_ONCE, 'not every call beyond the bound was 429');
});
