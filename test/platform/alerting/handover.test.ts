import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { createKeyring } from '../../../src/crypto/keyring.js';
import { alertEvaluations } from '../../helpers/alert-engine.js';
import { makeSignedInTenant, makeWebhookConnection } from '../../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../../helpers/harness.js';
import { startReceiver } from '../../helpers/receiver.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../../helpers/test-database.js';
import { waitUntil } from '../../helpers/wait.js';

// Two processes on PostgreSQL; the one evaluating alerts stops. The other takes over, sends what is
// new, and does not send again what the first one already sent. PostgreSQL only.
if (ENGINE === 'postgres') {
  const ENV = {
    DELIVERY_ALLOW_HTTP: 'true',
    DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
    DELIVERY_RETRY_SCHEDULE: '0',
    ALERT_EVALUATION_INTERVAL_MS: '100',
  };
  const keyring = createKeyring(randomBytes(32));
  let db: TestDatabase;
  let first: Harness;
  let second: Harness;
  before(async () => {
    db = await createTestDatabase();
    first = await startHarness({ env: ENV, keyring, testDatabase: db, workers: { pollMs: 50 } });
    // Started later: the first holds the lease while it runs.
    await waitUntil(
      async () =>
        (await sql`select 1 from alert_leases where name = 'alert-engine'`.execute(first.database.kysely))
          .rows.length > 0,
      { message: 'the first process holding the alert lease' },
    );
    second = await startHarness({ env: ENV, keyring, testDatabase: db, workers: { pollMs: 50 } });
  });
  after(async () => {
    await second.close();
    await db.drop();
  });

  async function failingConnection(h: Harness, session: TestSession, url: string): Promise<string> {
    const { id } = await makeWebhookConnection(h, session, url, { displayName: 'orders' });
    const published = await h.request('POST', '/api/v1/integrations/events', {
      session,
      body: { type: 'order.created', data: {} },
    });
    assert.equal(published.status, 202, 'the event for the failing connection is not accepted');
    return id;
  }

  test('when the evaluating process stops, the other takes over without sending again what was sent', async (t) => {
    const target = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = 500;
      res.end();
    });
    const pager = await startReceiver(t);
    const channel = await first.request('POST', '/api/v1/platform/alerting/channels', {
      token: first.platformToken,
      body: { name: 'on-call', kind: 'WEBHOOK', config: { url: pager.url('/alerts') } },
    });
    assert.equal(channel.status, 201, 'the alert channel cannot be created');
    const rules = await first.request('PUT', '/api/v1/platform/alerting/rules', {
      token: first.platformToken,
      body: { defaults: { channelIds: [channel.body.id], repeatIntervalSeconds: 3600 }, rules: [] },
    });
    assert.equal(rules.status, 200, 'the routing rules cannot be saved');
    const connections = () =>
      pager.received.map(
        (r) =>
          (
            new Webhook(channel.body.signingSecret).verify(r.body, {
              'webhook-id': String(r.headers['webhook-id']),
              'webhook-timestamp': String(r.headers['webhook-timestamp']),
              'webhook-signature': String(r.headers['webhook-signature']),
            }) as { alerts: Array<{ labels: Record<string, string> }> }
          ).alerts[0]!.labels.connectionId,
      );

    const { session } = await makeSignedInTenant(first);
    const before = await failingConnection(first, session, target.url());
    await pager.waitFor(1);
    assert.deepEqual(
      connections(),
      [before],
      'the first process did not send exactly the notice for its connection',
    );

    await first.close();
    const { session: other } = await makeSignedInTenant(second);
    const afterwards = await failingConnection(second, other, target.url());
    await pager.waitFor(2);
    await alertEvaluations(second.database, 3);
    assert.deepEqual(connections(), [before, afterwards], 'the new evaluator sent only what was new');
  });
}
