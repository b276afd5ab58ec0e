import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('health answers ok and the time, for either module’s READER scope', async () => {
  const { session } = await makeSignedInTenant(h);
  for (const scopes of [['integrations:READER'], ['integration_hub:READER']]) {
    const key = await makeKey(h, session, { scopes });
    const r = await h.request('GET', '/api/v1/automation/health', { token: key.secret });
    assert.equal(r.status, 200, `${scopes[0]}: a READER key cannot call health`);
    assert.equal(r.body.status, 'ok', `${scopes[0]}: health does not answer ok`);
    assert.ok(
      Math.abs(Date.parse(r.body.time) - Date.now()) < 60_000,
      `${scopes[0]}: health reports a time off by more than a minute`,
    );
  }
});

test('capabilities lists the key, its effective scopes and exactly the allowlisted routes it can call', async () => {
  const { tenant, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  const r = await h.request('GET', '/api/v1/automation/capabilities', { token: key.secret });
  assert.equal(r.status, 200, 'a key cannot read its capabilities');
  assert.deepEqual(
    r.body.key,
    {
      id: key.id,
      prefix: key.prefix,
      scopes: ['integrations:OPERATOR'],
      expiresAt: key.expiresAt,
    },
    'capabilities describe the key other than as created',
  );
  assert.equal(r.body.tenantId, tenant.id, 'capabilities name another tenant');
  assert.deepEqual(
    r.body.effectiveScopes,
    ['integrations:OPERATOR'],
    "capabilities show other effective scopes than the key's",
  );

  // Derived from the same rules as the gate: every listed route answers, every unlisted one refuses.
  const automationRoutes = h.app.declaredRoutes.filter(
    (route) => route.method !== 'HEAD' && route.access.class === 'tenant' && route.access.automation,
  );
  const listed = new Set(r.body.routes.map((x: { method: string; path: string }) => `${x.method} ${x.path}`));
  assert.ok(listed.has('GET /api/v1/automation/health'), 'capabilities do not list the health route');
  assert.ok(
    listed.has('GET /api/v1/automation/capabilities'),
    'capabilities do not list the capabilities route',
  );
  for (const route of automationRoutes) {
    if (route.method !== 'GET' || route.url.includes(':')) continue;
    // The MCP endpoint's GET answers 405 to everyone it lets in (docs/api/mcp.md): no event stream.
    if (route.url === '/api/v1/mcp') continue;
    const answer = await h.request('GET', route.url, { token: key.secret });
    assert.equal(answer.status < 400, listed.has(`GET ${route.url}`), `${route.url}: ${answer.status}`);
  }
  for (const entry of r.body.routes)
    assert.match(
      entry.scope,
      /^integrations:(READER|OPERATOR|ADMIN)$/,
      `a listed route needs a scope outside the integrations module: ${entry.scope}`,
    );
});

test('scopes of modules the tenant is not entitled to are not effective', async () => {
  const { tenant, session } = await makeSignedInTenant(h, {
    entitlements: ['integrations', 'integration_hub'],
  });
  const key = await makeKey(h, session, { scopes: ['integrations:READER', 'integration_hub:READER'] });
  await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
    token: h.platformToken,
    body: { entitlements: ['integration_hub'] },
  });
  // Past the key cache: within the 1 s of docs/api/authentication.md, half a second more for a loaded machine.
  const r = await waitUntil(
    async () => {
      const answer = await h.request('GET', '/api/v1/automation/capabilities', { token: key.secret });
      return answer.body.effectiveScopes?.length === 1 ? answer : undefined;
    },
    { message: 'the capabilities without the scope no longer entitled', timeoutMs: 1_500 },
  );
  assert.deepEqual(
    r.body.effectiveScopes,
    ['integration_hub:READER'],
    'a scope of a module no longer entitled stays effective',
  );
  assert.ok(
    r.body.routes.every((x: { scope: string }) => x.scope.startsWith('integration_hub:')),
    'capabilities list a route of a module no longer entitled',
  );
});

test('a session may ask too: no key, scopes from its role', async () => {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const r = await h.request('GET', '/api/v1/automation/capabilities', { session });
  assert.equal(r.status, 200, 'a session cannot read capabilities');
  assert.equal(r.body.key, null, 'capabilities show a key for a session');
  assert.deepEqual(
    r.body.effectiveScopes,
    ['integrations:READER', 'integrations:OPERATOR', 'integrations:ADMIN'],
    "a session's effective scopes are not those of its role",
  );
});
