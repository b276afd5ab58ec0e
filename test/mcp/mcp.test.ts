import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { assertNoLeak, makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';
import { connectAgent, MCP_PATH, problemIn } from './helpers.js';

// Nothing is delivered (no workers): the hook's host is never contacted.
const HOOK_URL = 'https://hooks.example.com/hubgate';
const CONNECTIONS = '/api/v1/integrations/connections';

const READ_TOOLS = [
  'list_connections',
  'get_connection',
  'list_deliveries',
  'get_delivery',
  'list_event_types',
];
const WRITE_TOOLS = [
  'publish_event',
  'send_test_event',
  'pause_connection',
  'resume_connection',
  'recover_deliveries',
  'retry_delivery',
  'call_connection_api',
];

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const MCP_HEADERS = { accept: 'application/json, text/event-stream' };

let h: Harness;
/** Every tool result of this file, searched for secrets at the end. */
const seen: string[] = [];
const secrets: string[] = [];
before(async () => {
  h = await startHarness();
});
after(async () => {
  try {
    for (const secret of secrets) {
      assert.ok(!seen.some((result) => result.includes(secret)), 'a secret appeared in a tool result');
    }
    // Each key's secret and each signing secret in the one answer that created it, nowhere else.
    assertNoLeak(h, [], secrets);
  } finally {
    await h.close();
  }
});

const expectedHeader = () =>
  `Bearer resource_metadata="${new URL('/.well-known/oauth-protected-resource/api/v1/mcp', h.config.publicUrl).href}"`;

test('no key or a bad key: 401 naming the protected resource metadata', async () => {
  for (const token of [undefined, 'tnt_not_a_key_at_all', 'garbage']) {
    const r = await h.request('POST', MCP_PATH, { token, body: INITIALIZE, headers: MCP_HEADERS });
    assert.equal(r.status, 401, `${token ?? 'no key'}: answered ${r.status} ${r.text}`);
    assert.equal(r.body.code, 'unauthenticated', `${token ?? 'no key'}: ${r.text}`);
    assert.equal(r.headers.get('www-authenticate'), expectedHeader(), 'the 401 names no resource metadata');
  }
});

test('a session or a portal token is not an agent: 403 route_not_allowed', async () => {
  const { tenant, session } = await makeSignedInTenant(h);
  const bySession = await h.request('POST', MCP_PATH, { session, body: INITIALIZE, headers: MCP_HEADERS });
  assert.equal(bySession.status, 403, bySession.text);
  assert.equal(bySession.body.code, 'route_not_allowed', bySession.text);
  // Without the CSRF token too: the route refuses every session alike.
  const noCsrf = await h.request('POST', MCP_PATH, {
    body: INITIALIZE,
    headers: { ...MCP_HEADERS, cookie: session.cookie },
  });
  assert.equal(noCsrf.body.code, 'route_not_allowed', noCsrf.text);

  const minted = await h.request('POST', `/api/v1/platform/tenants/${tenant.id}/portal-sessions`, {
    token: h.platformToken,
    body: { subject: 'kim@customer.example' },
  });
  assert.equal(minted.status, 201, minted.text);
  const code = new URL(minted.body.url as string).hash.replace(/^#code=/, '');
  const exchanged = await h.request('POST', '/api/v1/portal/exchange', { body: { code } });
  assert.equal(exchanged.status, 200, exchanged.text);
  const byPortal = await h.request('POST', MCP_PATH, {
    token: exchanged.body.token,
    body: INITIALIZE,
    headers: MCP_HEADERS,
  });
  assert.equal(byPortal.status, 403, byPortal.text);
  assert.equal(byPortal.body.code, 'route_not_allowed', byPortal.text);
});

test('a key without either READER scope in effect is refused the server', async () => {
  const { tenant, session } = await makeSignedInTenant(h);
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  secrets.push(key.secret);
  const changed = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
    token: h.platformToken,
    body: { entitlements: ['integration_hub'] },
  });
  assert.ok(changed.status === 200 || changed.status === 204, changed.text);
  // The key's answer is cached for up to half a second (docs/api/authentication.md).
  const r = await waitUntil(
    async () => {
      const answer = await h.request('POST', MCP_PATH, {
        token: key.secret,
        body: INITIALIZE,
        headers: MCP_HEADERS,
      });
      return answer.status === 403 ? answer : undefined;
    },
    { message: 'the key to lose the MCP server with its entitlement' },
  );
  assert.equal(r.body.code, 'insufficient_scope', r.text);
});

test('GET answers 405: no event stream; what is no JSON-RPC message is a 400', async () => {
  const { session } = await makeSignedInTenant(h);
  const key = await makeKey(h, session);
  secrets.push(key.secret);
  const r = await h.request('GET', MCP_PATH, { token: key.secret, headers: MCP_HEADERS });
  assert.equal(r.status, 405, r.text);
  assert.equal(r.headers.get('allow'), 'POST', 'the 405 does not say POST is allowed');
  // Not a JSON-RPC message: problem details, as every refusal of the API.
  const notRpc = await h.request('POST', MCP_PATH, { token: key.secret, body: { hello: 1 } });
  assert.equal(notRpc.status, 400, notRpc.text);
  assert.equal(notRpc.body.code, 'validation_failed', notRpc.text);
  // A client accepting JSON alone is answered all the same: every answer is JSON.
  const jsonOnly = await h.request('POST', MCP_PATH, {
    token: key.secret,
    body: INITIALIZE,
    headers: { accept: 'application/json' },
  });
  assert.equal(jsonOnly.status, 200, jsonOnly.text);
  assert.equal(jsonOnly.body.result.protocolVersion, '2025-06-18', jsonOnly.text);
});

test('tools/list lists exactly what the key may call: its scopes ∩ the entitlements', async () => {
  const { session } = await makeSignedInTenant(h);
  const cases: Array<[string[], string[]]> = [
    [['integrations:READER'], READ_TOOLS],
    [['integration_hub:READER'], ['hub_overview']],
    [['integrations:OPERATOR'], [...READ_TOOLS, ...WRITE_TOOLS]],
    [
      ['integrations:ADMIN', 'integration_hub:READER'],
      ['hub_overview', ...READ_TOOLS, ...WRITE_TOOLS],
    ],
  ];
  for (const [scopes, expected] of cases) {
    const key = await makeKey(h, session, { scopes });
    secrets.push(key.secret);
    const agent = await connectAgent(h, key.secret, seen);
    const { tools } = await agent.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...expected].sort(), `tools for ${scopes.join(' ')}`);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', `${tool.name}: input schema`);
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name}: output schema`);
      const readOnly = READ_TOOLS.includes(tool.name) || tool.name === 'hub_overview';
      assert.equal(tool.annotations?.readOnlyHint, readOnly, `${tool.name}: readOnlyHint`);
      assert.equal(typeof tool.annotations?.idempotentHint, 'boolean', `${tool.name}: idempotentHint`);
    }
    await agent.close();
  }
  // The tenant loses integrations: its tools go at once, with the entitlement.
  const { tenant, session: other } = await makeSignedInTenant(h);
  const key = await makeKey(h, other, { scopes: ['integrations:OPERATOR', 'integration_hub:READER'] });
  secrets.push(key.secret);
  const changed = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
    token: h.platformToken,
    body: { entitlements: ['integration_hub'] },
  });
  assert.ok(changed.status === 200 || changed.status === 204, changed.text);
  const agent = await connectAgent(h, key.secret, seen);
  // The key's answer is cached for up to half a second (docs/api/authentication.md).
  const names = await waitUntil(
    async () => {
      const listed = (await agent.listTools()).tools.map((t) => t.name);
      return listed.length === 1 ? listed : undefined;
    },
    { message: 'the tools to shrink with the entitlement' },
  );
  assert.deepEqual(names, ['hub_overview'], 'the tools did not shrink to the entitlement');
  await agent.close();
});

test('a READER key cannot call a write tool: the route refuses it as the API does', async () => {
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, HOOK_URL);
  secrets.push(hook.secret);
  const key = await makeKey(h, session, { scopes: ['integrations:READER'] });
  secrets.push(key.secret);
  const agent = await connectAgent(h, key.secret, seen);
  const api = await h.request('POST', `${CONNECTIONS}/${hook.id}/pause`, { token: key.secret });
  for (const [name, args] of [
    ['pause_connection', { connectionId: hook.id }],
    ['publish_event', { type: 'order.created', data: {} }],
    ['call_connection_api', { connectionId: hook.id, method: 'GET', path: 'v1/me' }],
  ] as const) {
    const result = await agent.tool(name, args);
    assert.equal(result.isError, true, `${name} was not refused`);
    const problem = problemIn(result);
    assert.equal(problem.code, 'insufficient_scope', `${name}: ${JSON.stringify(problem)}`);
    assert.equal(problem.code, api.body.code, `${name}: another refusal than the API's`);
  }
  const connection = await h.request('GET', `${CONNECTIONS}/${hook.id}`, { session });
  assert.equal(connection.body.status, 'active', 'the READER key paused the connection');
  await agent.close();
});

test("another tenant's connection: the same refusal as the API", async () => {
  const mine = await makeSignedInTenant(h);
  const theirs = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, theirs.session, HOOK_URL);
  secrets.push(hook.secret);
  const key = await makeKey(h, mine.session, { scopes: ['integrations:OPERATOR'] });
  secrets.push(key.secret);
  const agent = await connectAgent(h, key.secret, seen);
  const api = await h.request('GET', `${CONNECTIONS}/${hook.id}`, { token: key.secret });
  assert.equal(api.status, 404, `the API showed another tenant's connection: ${api.text}`);
  for (const [name, args] of [
    ['get_connection', { connectionId: hook.id }],
    ['list_deliveries', { connectionId: hook.id }],
    ['pause_connection', { connectionId: hook.id }],
    ['send_test_event', { connectionId: hook.id }],
    ['call_connection_api', { connectionId: hook.id, method: 'GET', path: 'v1/me' }],
  ] as const) {
    const result = await agent.tool(name, args);
    assert.equal(result.isError, true, `${name} reached another tenant's connection`);
    const problem = problemIn(result);
    assert.equal(problem.status, 404, `${name}: ${JSON.stringify(problem)}`);
    assert.equal(problem.code, api.body.code, `${name}: another refusal than the API's`);
  }
  const theirsNow = await h.request('GET', `${CONNECTIONS}/${hook.id}`, { session: theirs.session });
  assert.equal(theirsNow.body.status, 'active', "another tenant's connection was paused");
  await agent.close();
});

test('unknown tools, bad arguments and climbing ids are JSON-RPC errors -32602', async () => {
  const { session } = await makeSignedInTenant(h);
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  secrets.push(key.secret);
  const agent = await connectAgent(h, key.secret, seen);
  for (const [name, args] of [
    ['no_such_tool', {}],
    ['get_connection', {}],
    ['get_connection', { connectionId: 'x', extra: 1 }],
    ['get_connection', { connectionId: '..' }],
    ['list_connections', { limit: 'many' }],
    ['publish_event', { type: 'Not A Type!', data: {} }],
    ['call_connection_api', { connectionId: 'con_x', method: 'GET', path: '../../pause' }],
    ['call_connection_api', { connectionId: 'con_x', method: 'GET', path: '%2e%2e/x' }],
    ['call_connection_api', { connectionId: 'con_x', method: 'TRACE', path: 'x' }],
    [
      'call_connection_api',
      { connectionId: 'con_x', method: 'POST', path: 'x', body: 'x'.repeat(1024 * 1024 + 1) },
    ],
  ] as const) {
    await assert.rejects(
      agent.callTool({ name, arguments: args }),
      (error: unknown) => error instanceof McpError && error.code === -32602,
      `${name} ${JSON.stringify(args).slice(0, 80)} was not refused as bad arguments`,
    );
  }
  await agent.close();
});

test("each read tool's structured content is the API's answer for the same data", async () => {
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, HOOK_URL);
  secrets.push(hook.secret);
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR', 'integration_hub:READER'] });
  secrets.push(key.secret);
  const agent = await connectAgent(h, key.secret, seen);
  const tested = await agent.tool('send_test_event', { connectionId: hook.id });
  assert.equal(tested.isError, undefined, JSON.stringify(tested));
  const { deliveryId } = tested.structuredContent as { deliveryId: string };

  const api = async (path: string) => {
    const r = await h.request('GET', path, { token: key.secret });
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    return r.body;
  };
  const cases: Array<[string, Record<string, unknown>, unknown]> = [
    ['list_connections', {}, await api(CONNECTIONS)],
    ['list_connections', { limit: 1 }, await api(`${CONNECTIONS}?limit=1`)],
    ['get_connection', { connectionId: hook.id }, await api(`${CONNECTIONS}/${hook.id}`)],
    ['list_deliveries', { connectionId: hook.id }, await api(`${CONNECTIONS}/${hook.id}/events`)],
    [
      'list_deliveries',
      { connectionId: hook.id, test: true, status: 'pending' },
      await api(`${CONNECTIONS}/${hook.id}/events?test=true&status=pending`),
    ],
    [
      'get_delivery',
      { connectionId: hook.id, deliveryId },
      await api(`${CONNECTIONS}/${hook.id}/events/${deliveryId}`),
    ],
    ['list_event_types', {}, await api('/api/v1/integrations/event-types')],
    [
      'hub_overview',
      {},
      {
        overview: await api('/api/v1/integration-hub/overview'),
        credentialReadiness: await api('/api/v1/integration-hub/credential-readiness'),
      },
    ],
  ];
  for (const [name, args, expected] of cases) {
    const result = await agent.tool(name, args);
    assert.equal(result.isError, undefined, `${name}: ${JSON.stringify(result)}`);
    assert.deepEqual(result.structuredContent, expected, `${name} ${JSON.stringify(args)}`);
  }
  await agent.close();
});

test('publish_event publishes an event the API shows; writes are audited with via mcp', async () => {
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, HOOK_URL, { eventTypes: ['order.created'] });
  secrets.push(hook.secret);
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  secrets.push(key.secret);
  const agent = await connectAgent(h, key.secret, seen);

  const published = await agent.tool('publish_event', {
    type: 'order.created',
    data: { id: 42 },
    idempotencyKey: 'order-42',
  });
  assert.equal(published.isError, undefined, JSON.stringify(published));
  const event = published.structuredContent as { id: string; deliveries: number };
  assert.equal(event.deliveries, 1, 'the event was not delivered to the connection');
  const again = await agent.tool('publish_event', {
    type: 'order.created',
    data: { id: 42 },
    idempotencyKey: 'order-42',
  });
  assert.equal(
    (again.structuredContent as { id: string }).id,
    event.id,
    'the idempotency key was not passed on',
  );
  const log = await h.request('GET', `${CONNECTIONS}/${hook.id}/events?eventId=${event.id}`, { session });
  assert.equal(log.body.data.length, 1, log.text);

  const paused = await agent.tool('pause_connection', { connectionId: hook.id });
  assert.equal(paused.isError, undefined, JSON.stringify(paused));
  assert.equal((paused.structuredContent as { status: string }).status, 'paused', 'pause did not pause');
  const resumed = await agent.tool('resume_connection', { connectionId: hook.id, replaySkipped: false });
  assert.equal(resumed.isError, undefined, JSON.stringify(resumed));

  const recovered = await agent.tool('recover_deliveries', {
    connectionId: hook.id,
    since: new Date(Date.now() - 60 * 60 * 1000).toISOString(),
  });
  assert.equal(recovered.isError, undefined, JSON.stringify(recovered));
  assert.equal((recovered.structuredContent as { queued: number }).queued, 0, 'nothing had failed');

  // An API error is a tool result holding the problem: a pending delivery cannot be retried.
  const [delivery] = log.body.data as Array<{ id: string }>;
  const retried = await agent.tool('retry_delivery', { connectionId: hook.id, deliveryId: delivery?.id });
  assert.equal(retried.isError, true, JSON.stringify(retried));
  assert.equal(problemIn(retried).code, 'conflict', 'retrying a pending delivery was not a conflict');

  const audit = await h.request('GET', '/api/v1/company/audit-log', { session });
  type Row = { action: string; actorType: string; actorId: string; metadata: Record<string, unknown> };
  const rows = (audit.body.data as Row[]).filter((row) =>
    ['connection.pause', 'connection.resume'].includes(row.action),
  );
  assert.equal(rows.length, 2, audit.text);
  for (const row of rows) {
    assert.equal(row.metadata.via, 'mcp', `${row.action} is not marked as via MCP`);
    assert.equal(row.actorId, key.id, `${row.action}: the key is not the actor`);
  }
  // A request off the network cannot claim to be a tool call.
  await h.request('POST', `${CONNECTIONS}/${hook.id}/pause`, {
    token: key.secret,
    headers: { 'x-hubgate-via': 'mcp' },
  });
  const later = await h.request('GET', '/api/v1/company/audit-log', { session });
  const forged = (later.body.data as Row[]).filter((row) => row.action === 'connection.pause');
  assert.equal(forged.length, 2, later.text);
  assert.ok(
    forged.some((row) => row.metadata.via === undefined),
    'a forged header marked the row as via MCP',
  );
  await agent.close();
});
