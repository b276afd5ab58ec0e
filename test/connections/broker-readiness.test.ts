import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';

// Credential readiness (contract §6) for the broker connectors of §21: a broker connection made and not
// yet bound awaits credentials like any other; binding `{}` (a broker that needs no login) binds it, and
// it no longer awaits them. Nothing here connects to a broker.

let h: Harness;
before(async () => {
  h = await startHarness({ env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' } });
});
after(() => h?.close());

const CONNECTIONS = '/api/v1/integrations/connections';

const BROKERS: Record<string, Record<string, unknown>> = {
  amqp: { url: 'amqp://127.0.0.1:5672/', exchange: 'orders', routingKey: 'order.paid' },
  nats: { url: 'nats://127.0.0.1:4222', subject: 'orders.paid' },
  redis: { url: 'redis://127.0.0.1:6379/0', stream: 'orders' },
  mqtt: { url: 'mqtt://127.0.0.1:1883', topic: 'orders/paid' },
};

interface Readiness {
  connectorKey: string;
  ready: boolean;
  reasons: string[];
  connectionsAwaitingCredentials: number;
}

async function readinessOf(session: TestSession, connectorKey: string): Promise<Readiness> {
  const r = await h.request<{ connectors: Readiness[] }>(
    'GET',
    '/api/v1/integration-hub/credential-readiness',
    {
      session,
    },
  );
  assert.equal(r.status, 200, `reading credential readiness: ${r.text}`);
  const entry = r.body.connectors.find((c) => c.connectorKey === connectorKey);
  assert.ok(entry, `credential readiness does not list ${connectorKey}`);
  return entry;
}

async function awaitingInOverview(session: TestSession, connectorKey: string): Promise<number> {
  const r = await h.request<{ connectors: Array<{ connectorKey: string; awaitingCredentials: number }> }>(
    'GET',
    '/api/v1/integration-hub/overview',
    { session },
  );
  assert.equal(r.status, 200, `reading the overview: ${r.text}`);
  return r.body.connectors.find((c) => c.connectorKey === connectorKey)?.awaitingCredentials ?? -1;
}

describe('credential readiness of the broker connectors (§6, §21)', () => {
  for (const [connectorKey, config] of Object.entries(BROKERS)) {
    test(`${connectorKey}: a connection awaiting credentials is counted, and bound with {} it no longer is`, async () => {
      const { session } = await makeSignedInTenant(h);
      const before = await readinessOf(session, connectorKey);
      assert.deepEqual(
        [before.ready, before.reasons, before.connectionsAwaitingCredentials],
        [false, ['no_active_connection'], 0],
        `${connectorKey} without a connection is not "no_active_connection" with none awaiting`,
      );

      const created = await h.request<{ id: string; credentialsBound: boolean; deliveryEnabled: boolean }>(
        'POST',
        CONNECTIONS,
        { session, body: { connectorKey, displayName: connectorKey, ...config } },
      );
      assert.equal(created.status, 201, `creating a ${connectorKey} connection: ${created.text}`);
      assert.equal(created.body.credentialsBound, false, 'a new broker connection has credentials bound');
      assert.equal(created.body.deliveryEnabled, false, 'a broker connection delivers before it is bound');
      const awaiting = await readinessOf(session, connectorKey);
      assert.equal(awaiting.connectionsAwaitingCredentials, 1, 'the connection is not counted as awaiting');
      assert.equal(
        awaiting.ready,
        true,
        `${connectorKey}: credentials cannot be bound (${awaiting.reasons})`,
      );
      assert.deepEqual(awaiting.reasons, [], `${connectorKey} gives reasons though ready`);
      assert.equal(await awaitingInOverview(session, connectorKey), 1, 'the overview does not count it');

      const bound = await h.request<{
        connection: { credentialsBound: boolean; deliveryEnabled: boolean };
        credentials: { signingSecret?: string };
      }>('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, { session, body: {} });
      assert.equal(bound.status, 200, `binding {} to ${connectorKey}: ${bound.text}`);
      assert.equal(bound.body.connection.credentialsBound, true, 'binding {} left it unbound');
      assert.equal(bound.body.connection.deliveryEnabled, true, 'binding {} did not enable delivery');
      assert.match(String(bound.body.credentials.signingSecret), /^whsec_/, 'binding generated no secret');

      const after = await readinessOf(session, connectorKey);
      assert.equal(
        after.connectionsAwaitingCredentials,
        0,
        'a bound connection is still counted as awaiting',
      );
      assert.equal(after.ready, true, `${connectorKey} is not ready with a bound connection`);
      assert.equal(await awaitingInOverview(session, connectorKey), 0, 'the overview still counts it');
    });
  }
});
