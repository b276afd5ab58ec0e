import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { assertNoLeak, makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import type { TestOAuthProvider } from '../helpers/oauth-provider.js';
import { startProxyRig } from '../helpers/proxy-rig.js';
import type { Received, Receiver } from '../helpers/receiver.js';
import { connectAgent, problemIn } from './helpers.js';

// call_connection_api against a real OAuth 2.0 provider (oidc-provider on 127.0.0.1) and a real
// HTTP API on 127.0.0.1 that records the bearer token it is sent: no token may reach the agent.
let h: Harness;
let idp: TestOAuthProvider;
let api: Receiver;
let close: () => Promise<unknown>;
const tokensSeen = new Set<string>();
const seen: string[] = [];
const keySecrets: string[] = [];
type Handler = (request: Received, response: ServerResponse) => void | Promise<void>;
let handler: Handler = (_r, res) => {
  res.end('ok');
};
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
  try {
    const never = [idp.clientSecret, ...tokensSeen];
    assert.ok(tokensSeen.size > 0, 'the API never got a token: the test proved nothing');
    for (const secret of [...never, ...keySecrets]) {
      assert.ok(!seen.some((result) => result.includes(secret)), 'a secret appeared in a tool result');
    }
    assertNoLeak(h, never, keySecrets);
  } finally {
    await close();
    await h.close();
  }
});

/** A tenant with an OPERATOR key, an agent holding it, and a client-credentials connection to the API. */
async function setUp() {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  keySecrets.push(key.secret);
  const provider = await h.request('POST', '/api/v1/platform/oauth-providers', {
    token: h.platformToken,
    body: {
      key: `mcp${++n}-${Date.now().toString(36)}`,
      name: 'Test API',
      authorizationUrl: idp.authorizationUrl,
      tokenUrl: idp.tokenUrl,
      apiBaseUrl: api.url('/v1'),
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scopes: idp.scopes,
      grant: 'client_credentials',
    },
  });
  assert.equal(provider.status, 201, provider.text);
  const connection = await h.request('POST', '/api/v1/integrations/connections', {
    session,
    body: { connectorKey: provider.body.connectorKey, displayName: 'API' },
  });
  assert.equal(connection.status, 201, connection.text);
  const agent = await connectAgent(h, key.secret, seen);
  return { agent, connectionId: connection.body.id as string };
}

type Answer = { status: number; contentType: string | null; body: string; truncated: boolean };

test('a GET with a query reaches the API with the token; the answer comes back as text, no token in it', async () => {
  const { agent, connectionId } = await setUp();
  handler = (_r, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end('{"items":[1,2,3]}');
  };
  const before = api.received.length;
  const result = await agent.tool('call_connection_api', {
    connectionId,
    method: 'GET',
    path: 'items/42',
    query: { filter: 'a b', page: '2' },
  });
  assert.equal(result.isError, undefined, JSON.stringify(result));
  assert.deepEqual(
    result.structuredContent,
    {
      status: 200,
      contentType: 'application/json; charset=utf-8',
      body: '{"items":[1,2,3]}',
      truncated: false,
    },
    'the answer changed on the way',
  );
  const [call] = api.received.slice(before);
  assert.ok(call, 'the API got no request');
  assert.equal(call.url, '/v1/items/42?filter=a+b&page=2', 'the path or the query changed');
  assert.ok(
    await idp.accepts(/^Bearer (.+)$/.exec(String(call.headers.authorization))?.[1] ?? ''),
    'no token',
  );
  await agent.close();
});

test("a POST passes its body and content type; a provider's 404 is its answer, not an error", async () => {
  const { agent, connectionId } = await setUp();
  handler = (request, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ echoed: request.body, type: request.headers['content-type'] }));
  };
  const result = await agent.tool('call_connection_api', {
    connectionId,
    method: 'POST',
    path: '/orders',
    body: 'name=widget',
    contentType: 'application/x-www-form-urlencoded',
  });
  assert.equal(result.isError, undefined, JSON.stringify(result));
  const answer = result.structuredContent as Answer;
  assert.equal(answer.status, 404, JSON.stringify(answer));
  assert.deepEqual(
    JSON.parse(answer.body),
    { echoed: 'name=widget', type: 'application/x-www-form-urlencoded' },
    'the body or its content type changed on the way',
  );
  await agent.close();
});

test('an answer over 1 MiB is cut at 1 MiB and says so', async () => {
  const { agent, connectionId } = await setUp();
  handler = (_r, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('x'.repeat(1024 * 1024 + 10));
  };
  const result = await agent.tool('call_connection_api', { connectionId, method: 'GET', path: 'big' });
  const answer = result.structuredContent as Answer;
  assert.equal(answer.truncated, true, 'a long answer was not marked as cut');
  assert.equal(answer.body.length, 1024 * 1024, 'the answer was not cut at 1 MiB');
  await agent.close();
});

test('climbing paths are refused before the provider is called; hubgate refusals are errors', async () => {
  const { agent, connectionId } = await setUp();
  const before = api.received.length;
  for (const path of ['../../pause', 'a/%2e%2e/%2e%2e/x', 'a\\..\\b', 'a/%252e%252e/b', 'x?y=1']) {
    await assert.rejects(
      agent.callTool({ name: 'call_connection_api', arguments: { connectionId, method: 'POST', path } }),
      (error: unknown) => error instanceof McpError && error.code === -32602,
      `${path} was not refused as a bad argument`,
    );
  }
  assert.equal(api.received.length, before, 'a climbing path reached the provider');
  const paused = await h.request('GET', `/api/v1/integrations/connections/${connectionId}`, {
    token: keySecrets.at(-1),
  });
  assert.equal(paused.body.status, 'active', 'a climbing path reached another route');
  const unknown = await agent.tool('call_connection_api', {
    connectionId: 'con_nothere',
    method: 'GET',
    path: 'x',
  });
  assert.equal(unknown.isError, true, JSON.stringify(unknown));
  assert.equal(problemIn(unknown).code, 'not_found', 'an unknown connection is not 404');
  await agent.close();
});
