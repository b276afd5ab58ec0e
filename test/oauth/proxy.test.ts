import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { HttpProblem } from '../../src/http/problem.js';
import { PROXY_CALLS_AT_ONCE_PER_TENANT, targetUrl } from '../../src/oauth/proxy.js';
import { assertNoLeak, makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import type { TestOAuthProvider } from '../helpers/oauth-provider.js';
import { startProxyRig } from '../helpers/proxy-rig.js';
import type { Received, Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { startOtlpSink } from '../telemetry/otlp-sink.js';

// The credential proxy (docs/api/oauth.md) against a real OAuth 2.0 provider (oidc-provider on
// 127.0.0.1) and a real HTTP API on 127.0.0.1 that checks the bearer token with that provider.
let h: Harness;
let idp: TestOAuthProvider;
let api: Receiver;
let close: () => Promise<unknown>;
/** Every access token the API was sent: none may appear in a log or an answer. */
const tokensSeen = new Set<string>();
type Handler = (request: Received, response: ServerResponse) => void | Promise<void>;
let handler: Handler = (_r, res) => {
  res.end('ok');
};

const PROVIDERS = '/api/v1/platform/oauth-providers';
const CONNECTIONS = '/api/v1/integrations/connections';
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/;
let n = 0;

before(async () => {
  h = await startHarness({
    env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32', DELIVERY_TIMEOUT_MS: '5000' },
  });
  ({ idp, api, close } = await startProxyRig(h, tokensSeen, (request, response) =>
    handler(request, response),
  ));
});
after(async () => {
  assertNoLeak(h, [idp.clientSecret, ...tokensSeen]);
  await close();
  await h.close();
});

/** A provider whose API is the test API under /v1 (client credentials unless told otherwise). */
async function makeProvider(overrides: Record<string, unknown> = {}, on: Harness = h) {
  const r = await on.request('POST', PROVIDERS, {
    token: on.platformToken,
    body: {
      key: `api${++n}-${Date.now().toString(36)}`,
      name: 'Test API',
      authorizationUrl: idp.authorizationUrl,
      tokenUrl: idp.tokenUrl,
      apiBaseUrl: api.url('/v1'),
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scopes: idp.scopes,
      grant: 'client_credentials',
      ...overrides,
    },
  });
  assert.equal(r.status, 201, `creating the provider answered ${r.status}: ${r.text}`);
  return r.body as { key: string; connectorKey: string };
}

async function makeConnection(
  session: TestSession,
  connectorKey: string,
  extra: Record<string, unknown> = {},
  on: Harness = h,
) {
  const r = await on.request('POST', CONNECTIONS, {
    session,
    body: { connectorKey, displayName: 'API', ...extra },
  });
  assert.equal(r.status, 201, `creating the connection answered ${r.status}: ${r.text}`);
  return r.body as { id: string };
}

/** A tenant with an OPERATOR key and a client-credentials connection to the test API. */
async function setUp(extra: Record<string, unknown> = {}) {
  const { tenant, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  const provider = await makeProvider();
  const connection = await makeConnection(session, provider.connectorKey, extra);
  const proxy = (path: string) => `${CONNECTIONS}/${connection.id}/proxy/${path}`;
  return { tenant, session, key, provider, connection, proxy };
}

const bearerOf = (request: Received) =>
  /^Bearer (.+)$/.exec(String(request.headers.authorization))?.[1] ?? '';

const answer =
  (status: number, contentType: string, body: string | Buffer): Handler =>
  (_r, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(body);
  };

describe('passing calls on', () => {
  test('a GET with a query string reaches the provider’s API with the access token, the accept header and a traceparent', async () => {
    const { key, proxy } = await setUp();
    handler = answer(200, 'application/json; charset=utf-8', '{"items":[1,2,3]}');
    const before = api.received.length;
    const r = await h.request('GET', proxy('items/42?filter=a%20b&page=2'), {
      token: key.secret,
      headers: { accept: 'application/json' },
    });
    assert.equal(r.status, 200, `the proxy answered ${r.status}: ${r.text}`);
    assert.equal(
      r.headers.get('content-type'),
      'application/json; charset=utf-8',
      'the content type changed',
    );
    assert.equal(r.text, '{"items":[1,2,3]}', 'the body changed on the way');
    const [call] = api.received.slice(before);
    assert.ok(call, 'the API got no request');
    assert.equal(call.method, 'GET', 'the method changed');
    assert.equal(call.url, '/v1/items/42?filter=a%20b&page=2', 'the path or the query string changed');
    assert.equal(call.headers.accept, 'application/json', 'the accept header was not passed on');
    assert.ok(await idp.accepts(bearerOf(call)), 'the bearer token is not one the provider issued');
    assert.match(String(call.headers.traceparent), TRACEPARENT, 'no W3C traceparent came with the call');
    assert.equal(call.headers.cookie, undefined, 'a header of the client’s came through');
  });

  test('a POST passes on its body and content type, and the provider’s status and content type come back', async () => {
    const { key, proxy } = await setUp();
    handler = (request, res) => {
      res.writeHead(201, { 'content-type': 'application/vnd.test+json' });
      res.end(JSON.stringify({ echoed: request.body, type: request.headers['content-type'] }));
    };
    const r = await h.request('POST', proxy('orders'), {
      token: key.secret,
      rawBody: 'name=widget&qty=3',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(r.status, 201, `the proxy answered ${r.status}: ${r.text}`);
    assert.equal(r.headers.get('content-type'), 'application/vnd.test+json', 'the content type changed');
    assert.deepEqual(
      JSON.parse(r.text),
      { echoed: 'name=widget&qty=3', type: 'application/x-www-form-urlencoded' },
      'the body or its content type did not reach the API as sent',
    );
    const json = await h.request('PUT', proxy('orders/1'), { token: key.secret, body: { qty: 4 } });
    assert.equal(json.status, 201, `a JSON PUT answered ${json.status}`);
    assert.deepEqual(
      JSON.parse(json.text),
      { echoed: '{"qty":4}', type: 'application/json' },
      'a JSON body did not reach the API as sent',
    );
  });

  test('the provider’s error statuses are passed back as they are', async () => {
    const { key, proxy } = await setUp();
    handler = answer(404, 'text/plain', 'no such item');
    const r = await h.request('DELETE', proxy('items/9'), { token: key.secret });
    assert.equal(r.status, 404, `the proxy answered ${r.status}`);
    assert.equal(r.text, 'no such item', 'the provider’s body did not come back');
  });

  test('a provider 401 refreshes the token once and tries once more', async () => {
    const { key, proxy } = await setUp();
    const grantsBefore = idp.tokenCalls.filter((c) => c.grantType === 'client_credentials').length;
    let calls = 0;
    handler = (_r, res) => {
      calls += 1;
      res.writeHead(calls === 1 ? 401 : 200, { 'content-type': 'text/plain' });
      res.end(calls === 1 ? 'expired' : 'fine');
    };
    const before = api.received.length;
    const r = await h.request('GET', proxy('me'), { token: key.secret });
    assert.equal(r.status, 200, `the retry did not answer: ${r.status} ${r.text}`);
    const [first, second] = api.received.slice(before);
    assert.ok(first && second, 'the API was not called twice');
    assert.notEqual(bearerOf(first), bearerOf(second), 'the retry went with the refused token');
    assert.ok(await idp.accepts(bearerOf(second)), 'the new token is not the provider’s');
    const grantsAfter = idp.tokenCalls.filter((c) => c.grantType === 'client_credentials').length;
    assert.equal(grantsAfter, grantsBefore + 1, 'not exactly one new token was fetched');

    handler = answer(401, 'text/plain', 'never');
    const again = api.received.length;
    const refused = await h.request('GET', proxy('me'), { token: key.secret });
    assert.equal(refused.status, 401, 'a second 401 is not passed back');
    assert.equal(api.received.length - again, 2, 'the proxy tried more than once more');
  });
});

describe('limits and refusals', () => {
  test('an answer over 10 MiB is 502, one of exactly 10 MiB passes', async () => {
    const { key, proxy } = await setUp();
    const limit = 10 * 1024 * 1024;
    handler = answer(200, 'application/octet-stream', Buffer.alloc(limit + 1, 0x61));
    const r = await h.request('GET', proxy('big'), { token: key.secret });
    assert.equal(r.status, 502, `an answer of 10 MiB + 1 answered ${r.status}`);
    assert.equal(r.body.code, 'bad_gateway', 'the 502 is not bad_gateway');
    assert.match(r.body.detail, /10 MiB/, 'the 502 does not say why');
    handler = answer(200, 'application/octet-stream', Buffer.alloc(limit, 0x61));
    const ok = await h.request('GET', proxy('big'), { token: key.secret });
    assert.equal(ok.status, 200, `an answer of 10 MiB answered ${ok.status}`);
    assert.equal(ok.text.length, limit, 'the 10 MiB answer did not come back whole');
  });

  test('a request body over 1 MiB is 413 and not sent', async () => {
    const { key, proxy } = await setUp();
    const before = api.received.length;
    const r = await h.request('POST', proxy('upload'), {
      token: key.secret,
      rawBody: Buffer.alloc(1024 * 1024 + 1, 0x62),
      headers: { 'content-type': 'application/octet-stream' },
    });
    assert.equal(r.status, 413, `a body of 1 MiB + 1 answered ${r.status}`);
    assert.equal(api.received.length, before, 'the body went to the provider');
  });

  test('a redirect is not followed', async () => {
    const { key, proxy } = await setUp();
    handler = (_r, res) => {
      res.writeHead(302, { location: api.url('/v1/elsewhere') });
      res.end();
    };
    const before = api.received.length;
    const r = await h.request('GET', proxy('moved'), { token: key.secret });
    assert.equal(r.status, 502, `a redirect answered ${r.status}`);
    assert.match(r.body.detail, /redirect/, 'the 502 does not say it was a redirect');
    assert.equal(api.received.length - before, 1, 'the redirect was followed');
  });

  test('the SSRF policy holds at every call, and a path cannot climb out of the API base', async () => {
    const { key, proxy, provider } = await setUp();
    const before = api.received.length;
    // A client's URL parser resolves `..` and `%2e%2e` itself, and the router refuses an encoded slash.
    const climb = await h.request('GET', proxy('items%2F..%2F..%2Ftoken'), { token: key.secret });
    assert.ok([400, 404].includes(climb.status), `a path climbing out answered ${climb.status}`);
    for (const path of ['../token', 'a/%2e%2e/%2E%2E/token', 'a/./b', 'a%2f..%2fb', 'a\\b', '..']) {
      assert.throws(
        () => targetUrl(api.url('/v1'), path),
        (e: unknown) => e instanceof HttpProblem && e.code === 'validation_failed',
        `${path} is not refused`,
      );
    }
    assert.equal(
      targetUrl(api.url('/v1/'), 'items/1?q=%2e'),
      api.url('/v1/items/1?q=%2e'),
      'a plain path is not appended to the base',
    );
    // The API moves to a refused address (as if the policy changed since the provider was saved).
    await h.database.kysely
      .updateTable('oauth_providers')
      .set({ api_base_url: `http://127.0.0.2:${api.port}/v1` })
      .where('key', '=', provider.key)
      .execute();
    const r = await h.request('GET', proxy('items'), { token: key.secret });
    assert.equal(r.status, 502, `a refused destination answered ${r.status}`);
    assert.match(r.body.detail, /refused/, 'the 502 does not say the destination is refused');
    assert.equal(api.received.length, before, 'a refused call reached the API');
  });

  test('over maxPerSecond a call is 429 with Retry-After', async () => {
    const { key, proxy } = await setUp({ maxPerSecond: 1 });
    handler = answer(200, 'text/plain', 'ok');
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => h.request('GET', proxy('items'), { token: key.secret })),
    );
    const statuses = answers.map((a) => a.status);
    const refused = answers.find((a) => a.status === 429);
    assert.ok(refused, `five calls at once under maxPerSecond 1 all went through: ${statuses.join(',')}`);
    assert.ok(statuses.includes(200), `none of five calls went through: ${statuses.join(',')}`);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1, 'the 429 has no Retry-After');
    // Every 429 carries the rate-limit fields, set from its Retry-After where it names no limit.
    assert.ok(refused.headers.get('ratelimit-policy'), 'the 429 has no RateLimit-Policy');
    assert.match(refused.headers.get('ratelimit') ?? '', /;r=0;t=\d+$/, 'the 429 has no RateLimit');
    assert.equal(refused.body.code, 'rate_limited', 'the 429 is not rate_limited');
  });

  test('a revoked, paused or unauthorized connection is 409, saying why', async () => {
    const { session, key, provider, proxy, connection } = await setUp();
    const paused = await makeConnection(session, provider.connectorKey);
    const p = await h.request('POST', `${CONNECTIONS}/${paused.id}/pause`, { session, body: {} });
    assert.equal(p.status, 200, `pausing answered ${p.status}: ${p.text}`);
    const pausedAnswer = await h.request('GET', `${CONNECTIONS}/${paused.id}/proxy/x`, { token: key.secret });
    assert.equal(pausedAnswer.status, 409, `a paused connection answered ${pausedAnswer.status}`);
    assert.match(pausedAnswer.body.detail, /paused/, 'the 409 does not say the connection is paused');

    const codeGrant = await makeProvider({ grant: 'authorization_code' });
    const unauthorized = await makeConnection(session, codeGrant.connectorKey);
    const u = await h.request('GET', `${CONNECTIONS}/${unauthorized.id}/proxy/x`, { token: key.secret });
    assert.equal(u.status, 409, `an unauthorized connection answered ${u.status}`);
    assert.match(u.body.detail, /not authorized/, 'the 409 does not say the connection is not authorized');

    const revoked = await h.request('POST', `${CONNECTIONS}/${connection.id}/revoke`, { session, body: {} });
    assert.equal(revoked.status, 200, `revoking answered ${revoked.status}: ${revoked.text}`);
    const r = await h.request('GET', proxy('x'), { token: key.secret });
    assert.equal(r.status, 409, `a revoked connection answered ${r.status}`);
    assert.match(r.body.detail, /disabled|revoked/, 'the 409 does not say the connection is revoked');
  });

  test('a test event to an OAuth2 connection is refused in words', async () => {
    const { session, connection } = await setUp();
    const r = await h.request('POST', `${CONNECTIONS}/${connection.id}/test`, { session, body: {} });
    assert.equal(r.status, 409, `a test event to an OAuth2 connection answered ${r.status}`);
    assert.match(r.body.detail, /OAuth2 connection/, 'the refusal does not say why');
  });
});

describe('who may call it', () => {
  test('a tnt_ key with integrations:READER is refused, another tenant’s connection is 404, and a session works', async () => {
    const { session, proxy } = await setUp();
    handler = answer(200, 'text/plain', 'ok');
    const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const r = await h.request('GET', proxy('x'), { token: reader.secret });
    assert.equal(r.status, 403, `a READER key answered ${r.status}`);
    assert.equal(r.body.code, 'insufficient_scope', 'a READER key is not refused for its scope');

    const other = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const otherKey = await makeKey(h, other.session, { scopes: ['integrations:OPERATOR'] });
    const foreign = await h.request('GET', proxy('x'), { token: otherKey.secret });
    assert.equal(foreign.status, 404, `another tenant’s connection answered ${foreign.status}`);
    const foreignSession = await h.request('POST', proxy('x'), { session: other.session, body: {} });
    assert.equal(foreignSession.status, 404, `another tenant’s session answered ${foreignSession.status}`);

    const own = await h.request('GET', proxy('x'), { session });
    assert.equal(own.status, 200, `the tenant’s own session answered ${own.status}`);
  });

  test('the proxy is on the allowlist a key’s capabilities list', async () => {
    const { key } = await setUp();
    const r = await h.request('GET', '/api/v1/automation/capabilities', { token: key.secret });
    assert.equal(r.status, 200, `capabilities answered ${r.status}`);
    const listed = new Set(
      r.body.routes.map((x: { method: string; path: string }) => `${x.method} ${x.path}`),
    );
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      assert.ok(
        listed.has(`${method} /api/v1/integrations/connections/:id/proxy/*`),
        `${method} of the proxy is not on the allowlist`,
      );
    }
  });
});

test('every proxied call is counted per provider and status class', async () => {
  const { key, provider, proxy } = await setUp();
  handler = answer(200, 'text/plain', 'ok');
  await h.request('GET', proxy('a'), { token: key.secret });
  handler = answer(503, 'text/plain', 'down');
  await h.request('GET', proxy('b'), { token: key.secret });
  await h.request('GET', proxy('c'), { token: key.secret });
  const metrics = await h.request('GET', '/metrics', { token: h.platformToken });
  assert.equal(metrics.status, 200, `/metrics answered ${metrics.status}`);
  const line = (cls: string) =>
    new RegExp(
      `hubgate_oauth_proxy_requests_total\\{provider="${provider.key}",status_class="${cls}"\\} (\\d+)`,
    ).exec(metrics.text)?.[1];
  assert.equal(line('2xx'), '1', 'the 2xx call is not counted once');
  assert.equal(line('5xx'), '2', 'the 5xx calls are not counted twice');
});

test('every call the provider answered counts in the tenant usage; a call refused before it does not', async () => {
  const { key, session, proxy } = await setUp();
  handler = answer(200, 'text/plain', 'ok');
  await h.request('GET', proxy('a'), { token: key.secret });
  handler = answer(503, 'text/plain', 'down');
  await h.request('GET', proxy('b'), { token: key.secret });
  const climbing = await h.request('GET', proxy('..%2f..%2fadmin'), { token: key.secret });
  assert.equal(climbing.status, 400, `a climbing path answered ${climbing.status}`);
  let seen = -1;
  await waitUntil(
    async () => {
      const usage = await h.request('GET', '/api/v1/integrations/usage', { session });
      seen = (usage.body.data as Array<{ proxyCalls: number }>).reduce((sum, b) => sum + b.proxyCalls, 0);
      return seen === 2;
    },
    { message: () => `two proxy calls in the usage, not ${seen}` },
  );
});

test("tracing on: the call to the provider carries the proxy request's span, in the caller's trace; no token is exported", async () => {
  const sink = await startOtlpSink();
  const traced = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_TIMEOUT_MS: '5000',
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
    },
    testDatabase: h.testDatabase,
    keyring: h.keyring,
  });
  let closed = false;
  const upstream = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
  try {
    const { session } = await makeSignedInTenant(traced, { entitlements: ['integrations'] });
    const key = await makeKey(traced, session, { scopes: ['integrations:OPERATOR'] });
    const provider = await makeProvider({}, traced);
    const connection = await makeConnection(session, provider.connectorKey, {}, traced);
    handler = answer(200, 'application/json', '{"traced":true}');
    const before = api.received.length;
    const r = await traced.request('GET', `${CONNECTIONS}/${connection.id}/proxy/traced?x=1`, {
      token: key.secret,
      headers: { traceparent: `00-${upstream.traceId}-${upstream.spanId}-01` },
    });
    assert.equal(r.status, 200, `the proxy answered ${r.status}: ${r.text}`);
    const [call] = api.received.slice(before);
    assert.ok(call, 'the API got no request');
    // Closing the app exports every span ended so far.
    await traced.close();
    closed = true;
    const server = sink.spans.filter(
      (span) => span.traceId === upstream.traceId && span.parentSpanId === upstream.spanId,
    );
    assert.equal(
      server.length,
      1,
      `one request span in the caller's trace, the collector got ${server.length}`,
    );
    assert.equal(
      call.headers.traceparent,
      `00-${server[0]!.traceId}-${server[0]!.spanId}-01`,
      "the provider's traceparent is not the proxy request span's context",
    );
    const exported = Buffer.concat(sink.bodies).toString('latin1');
    const token = bearerOf(call);
    assert.ok(token.length > 0, 'the call carried no bearer token');
    assert.ok(!exported.includes(token), 'the access token was exported in a span');
    assert.ok(!exported.includes(key.secret), 'the API key was exported in a span');
  } finally {
    if (!closed) await traced.close();
    await sink.close();
  }
});

test('calls waiting on a slow provider are bounded per tenant: one more is 429 with Retry-After, another tenant still gets through', async () => {
  const slow = await setUp();
  const other = await setUp();
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  handler = async (request, res) => {
    if (request.url.startsWith('/v1/held')) await held;
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
  };
  const before = api.received.length;
  const waiting = Array.from({ length: PROXY_CALLS_AT_ONCE_PER_TENANT }, (_, i) =>
    h.request('GET', slow.proxy(`held/${i}`), { token: slow.key.secret }),
  );
  try {
    await waitUntil(() => api.received.length - before >= PROXY_CALLS_AT_ONCE_PER_TENANT, {
      message: `${PROXY_CALLS_AT_ONCE_PER_TENANT} calls waiting at the provider`,
    });
    const refused = await h.request('GET', slow.proxy('one-more'), { token: slow.key.secret });
    assert.equal(refused.status, 429, `one call more answered ${refused.status}: ${refused.text}`);
    assert.equal(refused.body.code, 'rate_limited', 'the refusal is not rate_limited');
    assert.equal(refused.headers.get('retry-after'), '1', 'the refusal says no Retry-After');
    assert.ok(
      !api.received.slice(before).some((r) => r.url.includes('one-more')),
      'the refused call reached the provider',
    );
    const elsewhere = await h.request('GET', other.proxy('quick'), { token: other.key.secret });
    assert.equal(
      elsewhere.status,
      200,
      `another tenant's call answered ${elsewhere.status}: ${elsewhere.text}`,
    );
  } finally {
    release();
  }
  for (const answered of await Promise.all(waiting)) {
    assert.equal(answered.status, 200, `a waiting call answered ${answered.status}: ${answered.text}`);
  }
  const again = await h.request('GET', slow.proxy('after'), { token: slow.key.secret });
  assert.equal(again.status, 200, `a call once the others ended answered ${again.status}: ${again.text}`);
});
