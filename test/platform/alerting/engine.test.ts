import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createKeyring } from '../../../src/crypto/keyring.js';
import { alertEvaluations } from '../../helpers/alert-engine.js';
import { publishEvent, waitForDeliveries } from '../../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../../helpers/harness.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';
import { ENGINE } from '../../helpers/test-database.js';
import { waitUntil } from '../../helpers/wait.js';

// The alert engine end to end: deliveries fail for good, DeliveryFailed is raised, routed by a rule
// to a WEBHOOK channel, sent once per repeat interval, resolved when a delivery succeeds again.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '0',
  DELIVERY_TIMEOUT_MS: '1000',
  ALERT_EVALUATION_INTERVAL_MS: '100',
  ALERT_RETRY_SCHEDULE: '0,0',
};
const CHANNELS = '/api/v1/platform/alerting/channels';
const RULES = '/api/v1/platform/alerting/rules';

const keyring = createKeyring(randomBytes(32));
let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, keyring, workers: { pollMs: 50 } });
});
after(() => h.close());

async function webhookConnection(session: TestSession, url: string): Promise<string> {
  return (await makeWebhookConnection(h, session, url, { displayName: 'orders' })).id;
}

async function webhookChannel(url: string) {
  const created = await h.request('POST', CHANNELS, {
    token: h.platformToken,
    body: { name: 'on-call', kind: 'WEBHOOK', config: { url } },
  });
  assert.equal(created.status, 201, created.text);
  return { id: created.body.id as string, secret: created.body.signingSecret as string };
}

async function routeDeliveryFailedTo(channelId: string, repeatIntervalSeconds = 3600) {
  const r = await h.request('PUT', RULES, {
    token: h.platformToken,
    body: {
      defaults: { channelIds: [], repeatIntervalSeconds: 3600 },
      rules: [
        {
          name: 'failed deliveries to on-call',
          matchers: [{ name: 'alertname', op: '=', value: 'DeliveryFailed' }],
          channelIds: [channelId],
          repeatIntervalSeconds,
        },
      ],
    },
  });
  assert.equal(r.status, 200, r.text);
}

type AlertBody = {
  status: string;
  receiver: string;
  alerts: Array<{ status: string; labels: Record<string, string>; endsAt: string; fingerprint: string }>;
};

function verified(secret: string, received: Received): AlertBody {
  return new Webhook(secret).verify(received.body, {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  }) as AlertBody;
}

test('DeliveryFailed reaches the channel a rule names, once per repeat interval, and resolves on success', async (t) => {
  const { tenant, session } = await makeSignedInTenant(h);
  let healthy = false;
  const target = await startReceiver(t, (_r, _i, res) => {
    res.statusCode = healthy ? 200 : 500;
    res.end();
  });
  const pager = await startReceiver(t);
  const channel = await webhookChannel(pager.url('/alerts'));
  await routeDeliveryFailedTo(channel.id);
  const connectionId = await webhookConnection(session, target.url());

  await publishEvent(h, session);
  await waitForDeliveries(h, session, connectionId, { statuses: ['failed'] });
  const [first] = await pager.waitFor(1);
  const firing = verified(channel.secret, first!);
  assert.equal(firing.status, 'firing', 'the first DeliveryFailed notice is not a firing one');
  assert.equal(firing.alerts.length, 1, 'the first notice does not hold exactly the one alert');
  assert.deepEqual(
    firing.alerts[0]!.labels,
    {
      alertname: 'DeliveryFailed',
      severity: 'warning',
      tenantId: tenant.id,
      connectionId,
    },
    'the DeliveryFailed alert does not carry its name, severity, tenant and connection',
  );

  // The console lists what fires now.
  const firingNow = await h.request('GET', '/api/v1/platform/alerting/alerts', { token: h.platformToken });
  assert.equal(firingNow.status, 200, firingNow.text);
  assert.equal(firingNow.body.truncated, false, "the console's list of firing alerts says it was cut short");
  const listed = firingNow.body.data.find(
    (a: { fingerprint: string }) => a.fingerprint === firing.alerts[0]!.fingerprint,
  );
  assert.equal(
    listed?.labels.alertname,
    'DeliveryFailed',
    'the console does not list the firing DeliveryFailed alert',
  );
  assert.equal(
    listed?.labels.connectionId,
    connectionId,
    'the console lists the alert for another connection',
  );

  // A second failure within the repeat interval: the alert still fires, and is not sent again.
  await publishEvent(h, session);
  await waitForDeliveries(h, session, connectionId, { statuses: ['failed', 'failed'] });
  await alertEvaluations(h.database, 3); // evaluations that saw the second failure
  assert.equal(pager.received.length, 1, 'not sent again within repeatIntervalSeconds');

  // A delivery that succeeds clears the condition: one resolved notice.
  healthy = true;
  await publishEvent(h, session);
  await waitForDeliveries(h, session, connectionId, { statuses: ['delivered', 'failed', 'failed'] });
  const [, second] = await pager.waitFor(2);
  const resolved = verified(channel.secret, second!);
  assert.equal(resolved.status, 'resolved', 'the second notice is not a resolved one');
  assert.equal(
    resolved.alerts[0]!.fingerprint,
    firing.alerts[0]!.fingerprint,
    'the resolved notice is for another alert than the one that fired',
  );
  assert.ok(
    Date.parse(resolved.alerts[0]!.endsAt) >= Number(first!.headers['webhook-timestamp']) * 1000,
    'the resolved alert ended before it first fired',
  );
  await alertEvaluations(h.database, 3);
  assert.equal(pager.received.length, 2, 'a notice was sent after the resolved one');
  const after = await h.request('GET', '/api/v1/platform/alerting/alerts', { token: h.platformToken });
  assert.ok(
    !after.body.data.some((a: { fingerprint: string }) => a.fingerprint === firing.alerts[0]!.fingerprint),
    'a resolved alert is no longer listed',
  );
});

test('a notice the channel does not take is retried until it does', async (t) => {
  const { session } = await makeSignedInTenant(h);
  const target = await startReceiver(t, (_r, _i, res) => {
    res.statusCode = 500;
    res.end();
  });
  // The channel fails twice, then takes it (ALERT_RETRY_SCHEDULE=0,0: three attempts in all).
  const pager = await startReceiver(t, (_r, i, res) => {
    res.statusCode = i < 2 ? 503 : 200;
    res.end();
  });
  const channel = await webhookChannel(pager.url('/alerts'));
  await routeDeliveryFailedTo(channel.id);
  const connectionId = await webhookConnection(session, target.url());
  await publishEvent(h, session);
  await waitForDeliveries(h, session, connectionId, { statuses: ['failed'] });
  const attempts = await pager.waitFor(3);
  const bodies = attempts.map((a) => verified(channel.secret, a));
  assert.ok(
    bodies.every((b) => b.status === 'firing' && b.alerts[0]!.labels.connectionId === connectionId),
    'a retried notice is not the firing alert of this connection',
  );
  // One notice, three attempts: the same webhook-id each time, so a receiver can deduplicate.
  assert.equal(
    new Set(attempts.map((a) => a.headers['webhook-id'])).size,
    1,
    'the retries of one notice carry different webhook-ids, so a receiver cannot deduplicate',
  );
  await alertEvaluations(h.database, 3);
  assert.equal(pager.received.length, 3, 'the notice was sent again after the channel took it');
  // The channel's last attempt is the one it took (a notification, not a test).
  const read = await h.request('GET', `/api/v1/platform/alerting/channels/${channel.id}`, {
    token: h.platformToken,
  });
  assert.deepEqual(
    { ...read.body.lastAttempt, at: typeof read.body.lastAttempt?.at },
    { at: 'string', ok: true, responseStatus: 200, error: null, test: false },
    "the channel's last attempt is not the notification the channel took",
  );
});

test('an alert still firing is sent again once repeatIntervalSeconds has passed', async (t) => {
  const { session } = await makeSignedInTenant(h);
  const target = await startReceiver(t, (_r, _i, res) => {
    res.statusCode = 500;
    res.end();
  });
  const pager = await startReceiver(t);
  const channel = await webhookChannel(pager.url('/alerts'));
  await routeDeliveryFailedTo(channel.id, 2);
  const connectionId = await webhookConnection(session, target.url());
  await publishEvent(h, session);
  await waitForDeliveries(h, session, connectionId, { statuses: ['failed'] });
  // Alerts of earlier tests that still fire go to this channel too: only this connection's count.
  const mine = () =>
    pager.received.filter((r) => verified(channel.secret, r).alerts[0]!.labels.connectionId === connectionId);
  await waitUntil(() => mine().length >= 2, { message: 'a second notice', timeoutMs: 10_000 });
  const [first, second] = mine();
  assert.ok(first && second, 'sent twice');
  for (const notice of [first, second])
    assert.equal(verified(channel.secret, notice).status, 'firing', 'a repeated notice is not a firing one');
  assert.notEqual(first.headers['webhook-id'], second.headers['webhook-id'], 'a new notice, not a retry');
  // The interval runs from when the first notice was queued, and its arrival may lag that on a
  // loaded machine: 2 s of interval against evaluations every 100 ms leaves a second of slack.
  assert.ok(second.at - first.at >= 1000, `repeated after ${second.at - first.at} ms, not after 2 s`);
});

// Two hubgate processes on one PostgreSQL database, both evaluating alerts: one notice, not two.
test(
  'with two processes on PostgreSQL, one alert is sent once',
  { skip: ENGINE !== 'postgres' },
  async (t) => {
    const second = await startHarness({
      env: ENV,
      keyring,
      testDatabase: h.testDatabase,
      workers: { pollMs: 50 },
    });
    t.after(() => second.close());
    const { session } = await makeSignedInTenant(h);
    const target = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = 500;
      res.end();
    });
    const pager = await startReceiver(t);
    const channel = await webhookChannel(pager.url('/alerts'));
    await routeDeliveryFailedTo(channel.id);
    const connectionId = await webhookConnection(session, target.url());
    for (let i = 0; i < 3; i++) await publishEvent(h, session);
    await waitForDeliveries(h, session, connectionId, { statuses: ['failed', 'failed', 'failed'] });
    await pager.waitFor(1);
    await alertEvaluations(h.database, 5); // each process trying every one
    const forThisConnection = pager.received.filter(
      (r) => verified(channel.secret, r).alerts[0]!.labels.connectionId === connectionId,
    );
    assert.equal(forThisConnection.length, 1, 'two evaluating processes both sent the notice');
  },
);
