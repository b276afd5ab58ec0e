import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { type Harness, startHarness } from '../helpers/harness.js';

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
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'ok');
    assert.ok(Math.abs(Date.parse(r.body.time) - Date.now()) < 60_000);
  }
});

test('capabilities lists the key, its effective scopes and exactly the allowlisted routes it can call', async () => {
  const { tenant, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  const r = await h.request('GET', '/api/v1/automation/capabilities', { token: key.secret });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.key, {
    id: key.id,
    prefix: key.prefix,
    scopes: ['integrations:OPERATOR'],
    expiresAt: key.expiresAt,
  });
  assert.equal(r.body.tenantId, tenant.id);
  assert.deepEqual(r.body.effectiveScopes, ['integrations:OPERATOR']);

  // Derived from the same rules as the gate: every listed route answers, every unlisted one refuses.
  const automationRoutes = h.app.declaredRoutes.filter(
    (route) => route.method !== 'HEAD' && route.access.class === 'tenant' && route.access.automation,
  );
  const listed = new Set(r.body.routes.map((x: { method: string; path: string }) => `${x.method} ${x.path}`));
  assert.ok(listed.has('GET /api/v1/automation/health'));
  assert.ok(listed.has('GET /api/v1/automation/capabilities'));
  for (const route of automationRoutes) {
    if (route.method !== 'GET' || route.url.includes(':')) continue;
    const answer = await h.request('GET', route.url, { token: key.secret });
    assert.equal(answer.status < 400, listed.has(`GET ${route.url}`), `${route.url}: ${answer.status}`);
  }
  for (const entry of r.body.routes) assert.match(entry.scope, /^integrations:(READER|OPERATOR|ADMIN)$/);
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
  await new Promise((r) => setTimeout(r, 600));
  const r = await h.request('GET', '/api/v1/automation/capabilities', { token: key.secret });
  assert.deepEqual(r.body.effectiveScopes, ['integration_hub:READER']);
  assert.ok(r.body.routes.every((x: { scope: string }) => x.scope.startsWith('integration_hub:')));
});

test('a session may ask too: no key, scopes from its role', async () => {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const r = await h.request('GET', '/api/v1/automation/capabilities', { session });
  assert.equal(r.status, 200);
  assert.equal(r.body.key, null);
  assert.deepEqual(r.body.effectiveScopes, [
    'integrations:READER',
    'integrations:OPERATOR',
    'integrations:ADMIN',
  ]);
});
