import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';

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
  test('lists amqp, mqtt, nats, redis, webhook, slack and http with their fields, read from the definitions', async () => {
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('GET', '/api/v1/integration-hub/connectors', { session });
    assert.equal(r.status, 200, 'listing connectors fails');
    assert.equal(r.body.nextCursor, null, 'the connector catalog offers a next page');
    const byKey = new Map(r.body.data.map((c: { connectorKey: string }) => [c.connectorKey, c]));
    assert.deepEqual(
      [...byKey.keys()],
      ['amqp', 'http', 'mqtt', 'nats', 'redis', 'slack', 'webhook'],
      'the catalog lists other connectors than amqp, http, mqtt, nats, redis, slack and webhook',
    );
    const webhook = byKey.get('webhook') as Record<string, unknown>;
    assert.equal(webhook.enabled, true, 'the webhook connector is listed as disabled');
    assert.deepEqual(
      (webhook.configFields as Array<{ name: string; required: boolean }>).map((f) => [f.name, f.required]),
      [
        ['url', true],
        ['eventTypes', false],
        ['filter', false],
        ['maxPerSecond', false],
        ['ordering', false],
      ],
      'the webhook connector lists other config fields than url (required), eventTypes, filter, maxPerSecond and ordering',
    );
    assert.deepEqual(
      (webhook.credentialFields as Array<{ name: string; generated: boolean }>).map((f) => [
        f.name,
        f.generated,
      ]),
      [
        ['signingSecret', true],
        ['oauth2ClientCredentials', false],
      ],
      'the webhook connector does not say its signing secret is generated (and OAuth2 client credentials optional)',
    );
    const http = byKey.get('http') as { credentialFields: Array<{ name: string; generated: boolean }> };
    assert.deepEqual(
      http.credentialFields.map((f) => [f.name, f.generated]),
      [
        ['headerName', false],
        ['headerValue', false],
        ['oauth2ClientCredentials', false],
      ],
      'the http connector does not ask for a header name and value, or OAuth2 client credentials',
    );
    const amqp = byKey.get('amqp') as {
      configFields: Array<{ name: string; required: boolean }>;
      credentialFields: Array<{ name: string; generated: boolean }>;
    };
    assert.deepEqual(
      amqp.configFields.map((f) => [f.name, f.required]),
      [
        ['url', true],
        ['exchange', false],
        ['routingKey', true],
        ['eventTypes', false],
        ['filter', false],
        ['maxPerSecond', false],
        ['ordering', false],
      ],
      'the amqp connector lists other config fields than url, exchange, routingKey and the common ones',
    );
    assert.deepEqual(
      amqp.credentialFields.map((f) => [f.name, f.generated]),
      [
        ['username', false],
        ['password', false],
        ['signingSecret', true],
      ],
      'the amqp connector does not ask for a username and password, with a generated signing secret',
    );
    const mqtt = byKey.get('mqtt') as {
      configFields: Array<{ name: string; required: boolean }>;
      credentialFields: Array<{ name: string; generated: boolean }>;
    };
    assert.deepEqual(
      mqtt.configFields.map((f) => [f.name, f.required]),
      [
        ['url', true],
        ['topic', true],
        ['qos', false],
        ['eventTypes', false],
        ['filter', false],
        ['maxPerSecond', false],
        ['ordering', false],
      ],
      'the mqtt connector lists other config fields than url, topic, qos and the common ones',
    );
    // QoS is a choice of two numbers: listed as options in text (as every option is), typed a number.
    const qos = (mqtt.configFields as Array<Record<string, unknown>>).find((f) => f.name === 'qos');
    assert.deepEqual(
      { type: qos?.type, options: qos?.options, default: qos?.default },
      { type: 'number', options: ['1', '2'], default: '1' },
      "the mqtt connector's qos is not listed as a number with the options 1 and 2, 1 by default",
    );
    // A broker connector says so, with where each message carries its signature (contract §21).
    assert.deepEqual(
      Object.fromEntries(
        [...byKey.entries()].map(([key, c]) => [key, (c as { broker?: unknown }).broker ?? null]),
      ),
      {
        amqp: { signatureCarrier: 'AMQP header' },
        http: null,
        mqtt: { signatureCarrier: 'MQTT 5 user property' },
        nats: { signatureCarrier: 'NATS header' },
        redis: { signatureCarrier: 'Redis stream field' },
        slack: null,
        webhook: null,
      },
      'the catalog does not mark exactly the broker connectors as brokers, with where a message carries its signature',
    );
    assert.deepEqual(
      mqtt.credentialFields.map((f) => [f.name, f.generated]),
      [
        ['username', false],
        ['password', false],
        ['signingSecret', true],
      ],
      'the mqtt connector does not ask for a username and password, with a generated signing secret',
    );
    const redis = byKey.get('redis') as typeof amqp;
    assert.deepEqual(
      redis.configFields.map((f) => [f.name, f.required]),
      [
        ['url', true],
        ['stream', true],
        ['maxLen', false],
        ['eventTypes', false],
        ['filter', false],
        ['maxPerSecond', false],
        ['ordering', false],
      ],
      'the redis connector lists other config fields than url, stream, maxLen and the common ones',
    );
    assert.deepEqual(
      redis.credentialFields.map((f) => [f.name, f.generated]),
      [
        ['username', false],
        ['password', false],
        ['signingSecret', true],
      ],
      'the redis connector does not ask for a username and password, with a generated signing secret',
    );
    const nats = byKey.get('nats') as typeof amqp;
    assert.deepEqual(
      nats.configFields.map((f) => [f.name, f.required]),
      [
        ['url', true],
        ['subject', true],
        ['eventTypes', false],
        ['filter', false],
        ['maxPerSecond', false],
        ['ordering', false],
      ],
      'the nats connector lists other config fields than url, subject and the common ones',
    );
    assert.deepEqual(
      nats.credentialFields.map((f) => [f.name, f.generated]),
      [
        ['username', false],
        ['password', false],
        ['token', false],
        ['signingSecret', true],
      ],
      'the nats connector does not ask for a username and password or a token, with a generated signing secret',
    );
  });

  test('is for signed-in people: a key gets route_not_allowed', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integration_hub:ADMIN', 'integrations:ADMIN'] });
    const r = await h.request('GET', '/api/v1/integration-hub/connectors', { token: key.secret });
    assert.equal(r.status, 403, 'a key can read the connector catalog');
    assert.equal(
      r.body.code,
      'route_not_allowed',
      'a key is refused the catalog with another code than route_not_allowed',
    );
  });
});

describe('overview', () => {
  test('counts per connector and status: degraded while an active connection awaits credentials', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const empty = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.equal(empty.status, 200, 'reading the overview fails');
    assert.equal(empty.body.status, 'healthy', 'a tenant without connections is not healthy');
    assert.equal(empty.body.tenantId, tenant.id, 'the overview names another tenant');
    assert.deepEqual(
      empty.body.modules,
      [
        { moduleKey: 'integrations', entitled: true },
        { moduleKey: 'integration_hub', entitled: true },
      ],
      "the overview shows the tenant's modules or entitlements wrong",
    );
    assert.deepEqual(
      empty.body.totals,
      { connections: 0, active: 0, disabled: 0 },
      'a tenant without connections shows connection totals',
    );
    assert.deepEqual(
      empty.body.deliveries24h,
      { delivered: 0, failed: 0, pending: 0 },
      'a tenant without deliveries shows delivery counts',
    );

    const a = await connect(session, { connectorKey: 'webhook', displayName: 'a', url: HOOK_URL });
    const b = await connect(session, { connectorKey: 'webhook', displayName: 'b', url: HOOK_URL });
    await connect(session, { connectorKey: 'slack', displayName: 'c' });
    await h.request('POST', `/api/v1/integrations/connections/${b.id}/revoke`, { session });
    const other = await makeSignedInTenant(h);
    await connect(other.session, { connectorKey: 'webhook', displayName: 'theirs', url: HOOK_URL });

    const r = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.equal(
      r.body.status,
      'degraded',
      'a tenant with a connection awaiting credentials is not degraded',
    );
    assert.deepEqual(
      r.body.totals,
      { connections: 3, active: 2, disabled: 1 },
      "the overview counts other connections than the tenant's own",
    );
    const webhook = r.body.connectors.find((c: { connectorKey: string }) => c.connectorKey === 'webhook');
    assert.deepEqual(
      webhook,
      {
        connectorKey: 'webhook',
        name: 'Webhook',
        active: 1,
        disabled: 1,
        awaitingCredentials: 1,
      },
      'the webhook counts are wrong (active, disabled, awaiting credentials)',
    );

    await h.request('PUT', `/api/v1/integrations/connections/${a.id}/credentials`, { session, body: {} });
    const slack = (await h.request('GET', '/api/v1/integrations/connections', { session })).body.data.find(
      (c: { connectorKey: string }) => c.connectorKey === 'slack',
    );
    await h.request('PUT', `/api/v1/integrations/connections/${slack.id}/credentials`, {
      session,
      body: { webhookUrl: 'https://hooks.slack.com/services/T/B/x' },
    });
    const healthy = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.equal(
      healthy.body.status,
      'healthy',
      'a tenant whose every connection has credentials is not healthy',
    );
  });

  test('a paused connection counts among the connections: the total holds every state', async () => {
    const { session } = await makeSignedInTenant(h);
    const a = await connect(session, { connectorKey: 'webhook', displayName: 'a', url: HOOK_URL });
    const b = await connect(session, { connectorKey: 'webhook', displayName: 'b', url: HOOK_URL });
    const paused = await h.request('POST', `/api/v1/integrations/connections/${a.id}/pause`, { session });
    assert.equal(paused.status, 200, `pausing answered ${paused.status}: ${paused.text}`);
    const one = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.deepEqual(
      one.body.totals,
      { connections: 2, active: 1, disabled: 0 },
      'a paused connection is left out of the total of connections',
    );
    await h.request('POST', `/api/v1/integrations/connections/${b.id}/pause`, { session });
    const r = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.deepEqual(
      r.body.totals,
      { connections: 2, active: 0, disabled: 0 },
      'a tenant whose only connections are paused is shown as having none',
    );
  });

  test('keys need integration_hub:READER', async () => {
    const { session } = await makeSignedInTenant(h);
    const hub = await makeKey(h, session, { scopes: ['integration_hub:READER'] });
    const integrations = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    assert.equal(
      (await h.request('GET', '/api/v1/integration-hub/overview', { token: hub.secret })).status,
      200,
      'an integration_hub:READER key cannot read the overview',
    );
    const r = await h.request('GET', '/api/v1/integration-hub/credential-readiness', {
      token: integrations.secret,
    });
    assert.equal(r.status, 403, 'an integrations-only key can read credential readiness');
    assert.equal(
      r.body.code,
      'insufficient_scope',
      'an integrations-only key is refused with another code than insufficient_scope',
    );
  });
});

describe('credential readiness', () => {
  test('per connector: ready, or why not; how many connections await credentials', async () => {
    const { session } = await makeSignedInTenant(h);
    const first = await h.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
    assert.equal(first.status, 200, 'reading credential readiness fails');
    for (const c of first.body.connectors) {
      assert.equal(c.ready, false, `${c.connectorKey}: a connector without a connection is shown as ready`);
      assert.deepEqual(
        c.reasons,
        ['no_active_connection'],
        `${c.connectorKey}: a connector without a connection gives another reason than no_active_connection`,
      );
      assert.equal(
        c.connectionsAwaitingCredentials,
        0,
        `${c.connectorKey}: a tenant without connections has some awaiting credentials`,
      );
    }
    await connect(session, { connectorKey: 'webhook', displayName: 'a', url: HOOK_URL });
    const r = await h.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
    const webhook = r.body.connectors.find((c: { connectorKey: string }) => c.connectorKey === 'webhook');
    assert.deepEqual(
      webhook,
      {
        connectorKey: 'webhook',
        name: 'Webhook',
        ready: true,
        reasons: [],
        credentialFields: [
          { name: 'signingSecret', generated: true },
          { name: 'oauth2ClientCredentials', generated: false },
        ],
        connectionsAwaitingCredentials: 1,
      },
      'the webhook readiness is wrong once a connection awaits credentials',
    );
  });

  test('a tenant without the integrations module cannot bind anything', async () => {
    const { session } = await makeSignedInTenant(h, { entitlements: ['integration_hub'] });
    const r = await h.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
    for (const c of r.body.connectors)
      assert.ok(
        c.reasons.includes('entitlement_missing'),
        `${c.connectorKey}: a tenant without the integrations module is not told entitlement_missing`,
      );
    const overview = await h.request('GET', '/api/v1/integration-hub/overview', { session });
    assert.deepEqual(
      overview.body.modules,
      [
        { moduleKey: 'integrations', entitled: false },
        { moduleKey: 'integration_hub', entitled: true },
      ],
      "the overview shows the hub-only tenant's modules wrong",
    );
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
      assert.equal(slack.enabled, false, 'a connector switched off is listed as enabled');
      const create = await off.request('POST', '/api/v1/integrations/connections', {
        session,
        body: { connectorKey: 'slack', displayName: 'after' },
      });
      assert.equal(create.status, 400, 'a switched-off connector takes a new connection');
      assert.equal(
        create.body.code,
        'validation_failed',
        'a new connection of a switched-off connector is refused with another code than validation_failed',
      );
      const bind = await off.request('PUT', `/api/v1/integrations/connections/${made.id}/credentials`, {
        session,
        body: { webhookUrl: 'https://hooks.slack.com/services/T/B/x' },
      });
      assert.equal(bind.status, 409, 'credentials can be bound to a switched-off connector');
      const readiness = await off.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
      const entry = readiness.body.connectors.find(
        (c: { connectorKey: string }) => c.connectorKey === 'slack',
      );
      assert.deepEqual(
        entry.reasons,
        ['connector_disabled'],
        'readiness does not say the connector is switched off',
      );
      assert.equal(
        entry.connectionsAwaitingCredentials,
        1,
        "readiness does not count the switched-off connector's connection awaiting credentials",
      );
    } finally {
      await off.close();
    }
  });
});
