import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { type Harness, type TestSession, startHarness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const HOOK_URL = 'https://hooks.example.com/hubgate';

async function connect(session: TestSession, body: Record<string, unknown>) {
  const r = await h.request('POST', '/api/v1/integrations/connections', { session, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

describe('connector catalog', () => {
  test('lists webhook, slack and http with their fields, read from the definitions', async () => {
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('GET', '/api/v1/integration-hub/connectors', { session });
    assert.equal(r.status, 200);
    assert.equal(r.body.nextCursor, null);
    const byKey = new Map(r.body.data.map((c: { connectorKey: string }) => [c.connectorKey, c]));
    assert.deepEqual([...byKey.keys()], ['http', 'slack', 'webhook']);
    const webhook = byKey.get('webhook') as Record<string, unknown>;
    assert.equal(webhook.enabled, true);
    assert.deepEqual(
      (webhook.configFields as Array<{ name: string; required: boolean }>).map((f) => [f.name, f.required]),
      [
        ['url', true],
        ['eventTypes', false],
      ],
    );
    assert.deepEqual(
      (webhook.credentialFields as Array<{ name: string; generated: boolean }>).map((f) => [
        f.name,
        f.generated,
      ]),
      [['signingSecret', true]],
    );
    const http = byKey.get('http') as { credentialFields: Array<{ name: string; generated: boolean }> };
    assert.deepEqual(
      http.credentialFields.map((f) => [f.name, f.generated]),
      [
        ['headerName', false],
        ['headerValue', false],
      ],
    );
  });

  test('is for signed-in people: a key gets route_not_allowed', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integration_hub:ADMIN', 'integrations:ADMIN'] });
    const r = await h.request('GET', '/api/v1/integration-hub/connectors', { token: key.secret });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, 'route_not_allowed');
  });
});

describe('overview', () => {
  test('counts per connector and status: degraded while an active connection awaits credentials', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const empty = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.equal(empty.status, 200);
    assert.equal(empty.body.status, 'healthy');
    assert.equal(empty.body.tenantId, tenant.id);
    assert.deepEqual(empty.body.modules, [
      { moduleKey: 'integrations', entitled: true },
      { moduleKey: 'integration_hub', entitled: true },
    ]);
    assert.deepEqual(empty.body.totals, { connections: 0, active: 0, disabled: 0 });
    assert.deepEqual(empty.body.deliveries24h, { delivered: 0, failed: 0, pending: 0 });

    const a = await connect(session, { connectorKey: 'webhook', displayName: 'a', url: HOOK_URL });
    const b = await connect(session, { connectorKey: 'webhook', displayName: 'b', url: HOOK_URL });
    await connect(session, { connectorKey: 'slack', displayName: 'c' });
    await h.request('POST', `/api/v1/integrations/connections/${b.id}/revoke`, { session });
    const other = await makeSignedInTenant(h);
    await connect(other.session, { connectorKey: 'webhook', displayName: 'theirs', url: HOOK_URL });

    const r = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.equal(r.body.status, 'degraded');
    assert.deepEqual(r.body.totals, { connections: 3, active: 2, disabled: 1 });
    const webhook = r.body.connectors.find((c: { connectorKey: string }) => c.connectorKey === 'webhook');
    assert.deepEqual(webhook, {
      connectorKey: 'webhook',
      name: 'Webhook',
      active: 1,
      disabled: 1,
      awaitingCredentials: 1,
    });

    await h.request('PUT', `/api/v1/integrations/connections/${a.id}/credentials`, { session, body: {} });
    const slack = (await h.request('GET', '/api/v1/integrations/connections', { session })).body.data.find(
      (c: { connectorKey: string }) => c.connectorKey === 'slack',
    );
    await h.request('PUT', `/api/v1/integrations/connections/${slack.id}/credentials`, {
      session,
      body: { webhookUrl: 'https://hooks.slack.com/services/T/B/x' },
    });
    const healthy = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.equal(healthy.body.status, 'healthy');
  });

  test('keys need integration_hub:READER', async () => {
    const { session } = await makeSignedInTenant(h);
    const hub = await makeKey(h, session, { scopes: ['integration_hub:READER'] });
    const integrations = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    assert.equal(
      (await h.request('GET', '/api/v1/integration-hub/overview', { token: hub.secret })).status,
      200,
    );
    const r = await h.request('GET', '/api/v1/integration-hub/credential-readiness', {
      token: integrations.secret,
    });
    assert.equal(r.status, 403);
    assert.equal(r.body.code, 'insufficient_scope');
  });
});

describe('credential readiness', () => {
  test('per connector: ready, or why not; how many connections await credentials', async () => {
    const { session } = await makeSignedInTenant(h);
    const first = await h.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
    assert.equal(first.status, 200);
    for (const c of first.body.connectors) {
      assert.equal(c.ready, false);
      assert.deepEqual(c.reasons, ['no_active_connection']);
      assert.equal(c.connectionsAwaitingCredentials, 0);
    }
    await connect(session, { connectorKey: 'webhook', displayName: 'a', url: HOOK_URL });
    const r = await h.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
    const webhook = r.body.connectors.find((c: { connectorKey: string }) => c.connectorKey === 'webhook');
    assert.deepEqual(webhook, {
      connectorKey: 'webhook',
      name: 'Webhook',
      ready: true,
      reasons: [],
      credentialFields: [{ name: 'signingSecret', generated: true }],
      connectionsAwaitingCredentials: 1,
    });
  });

  test('a tenant without the integrations module cannot bind anything', async () => {
    const { session } = await makeSignedInTenant(h, { entitlements: ['integration_hub'] });
    const r = await h.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
    for (const c of r.body.connectors) assert.ok(c.reasons.includes('entitlement_missing'));
    const overview = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.deepEqual(overview.body.modules, [
      { moduleKey: 'integrations', entitled: false },
      { moduleKey: 'integration_hub', entitled: true },
    ]);
  });
});

describe('a connector switched off by the platform (CONNECTORS_DISABLED)', () => {
  test('is listed as disabled, takes no new connection or credentials, and readiness says why', async () => {
    const off = await startHarness({
      env: { CONNECTORS_DISABLED: 'slack' },
      testDatabase: h.testDatabase,
      keyring: h.keyring,
    });
    try {
      const { session } = await makeSignedInTenant(h);
      // Made while slack was on (the first harness), then seen by the hub where it is off.
      const made = await connect(session, { connectorKey: 'slack', displayName: 'before' });
      const catalog = await off.request('GET', '/api/v1/integration-hub/connectors', { session });
      const slack = catalog.body.data.find((c: { connectorKey: string }) => c.connectorKey === 'slack');
      assert.equal(slack.enabled, false);
      const create = await off.request('POST', '/api/v1/integrations/connections', {
        session,
        body: { connectorKey: 'slack', displayName: 'after' },
      });
      assert.equal(create.status, 400);
      assert.equal(create.body.code, 'validation_failed');
      const bind = await off.request('PUT', `/api/v1/integrations/connections/${made.id}/credentials`, {
        session,
        body: { webhookUrl: 'https://hooks.slack.com/services/T/B/x' },
      });
      assert.equal(bind.status, 409);
      const readiness = await off.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
      const entry = readiness.body.connectors.find(
        (c: { connectorKey: string }) => c.connectorKey === 'slack',
      );
      assert.deepEqual(entry.reasons, ['connector_disabled']);
      assert.equal(entry.connectionsAwaitingCredentials, 1);
    } finally {
      await off.close();
    }
  });
});
