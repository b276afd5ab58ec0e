import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createKeyring } from '../../../src/crypto/keyring.js';
import { makeSignedInTenant, makeWebhookConnection, until } from '../../helpers/factories.js';
import { type Harness, type TestSession, startHarness } from '../../helpers/harness.js';
import { type Received, startReceiver } from '../../helpers/receiver.js';
import { ENGINE } from '../../helpers/test-database.js';

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
const CONNECTIONS = '/api/v1/integrations/connections';

const keyring = createKeyring(randomBytes(32));
let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, keyring, workers: { pollMs: 50 } });
});
after(() => h.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function webhookConnection(session: TestSession, url: string): Promise<string> {
  return (await makeWebhookConnection(h, session, url, { displayName: 'orders' })).id;
}

async function publish(session: TestSession): Promise<void> {
  const r = await h.request('POST', '/api/v1/integrations/events', {
    session,
    body: { type: 'order.created', data: { n: 1 } },
  });
  assert.equal(r.status, 202, r.text);
}

/** Waits until the connection's deliveries reached these statuses (newest first). */
async function deliveries(session: TestSession, connectionId: string, statuses: string[]) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const log = await h.request('GET', `${CONNECTIONS}/${connectionId}/events`, { session });
    const seen = log.body.data.map((d: { status: string }) => d.status);
    if (JSON.stringify(seen) === JSON.stringify(statuses)) return;
    if (Date.now() > deadline)
      assert.fail(`deliveries are ${JSON.stringify(seen)}, expected ${JSON.stringify(statuses)}`);
    await sleep(50);
  }
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

test('DeliveryFailed reaches the channel a rule names, once per repeat interval, and resolves on success', async () => {
  const { tenant, session } = await makeSignedInTenant(h);
  let healthy = false;
  const target = await startReceiver((_r, _i, res) => {
    res.statusCode = healthy ? 200 : 500;
    res.end();
  });
  const pager = await startReceiver();
  try {
    const channel = await webhookChannel(pager.url('/alerts'));
    await routeDeliveryFailedTo(channel.id);
    const connectionId = await webhookConnection(session, target.url());

    await publish(session);
    await deliveries(session, connectionId, ['failed']);
    const [first] = await pager.waitFor(1);
    const firing = verified(channel.secret, first!);
    assert.equal(firing.status, 'firing');
    assert.equal(firing.alerts.length, 1);
    assert.deepEqual(firing.alerts[0]!.labels, {
      alertname: 'DeliveryFailed',
      severity: 'warning',
      tenantId: tenant.id,
      connectionId,
    });

    // The console lists what fires now.
    const firingNow = await h.request('GET', '/api/v1/platform/alerting/alerts', { token: h.platformToken });
    assert.equal(firingNow.status, 200, firingNow.text);
    assert.equal(firingNow.body.truncated, false);
    const listed = firingNow.body.data.find(
      (a: { fingerprint: string }) => a.fingerprint === firing.alerts[0]!.fingerprint,
    );
    assert.equal(listed?.labels.alertname, 'DeliveryFailed');
    assert.equal(listed?.labels.connectionId, connectionId);

    // A second failure within the repeat interval: the alert still fires, and is not sent again.
    await publish(session);
    await deliveries(session, connectionId, ['failed', 'failed']);
    await sleep(1_000); // ten evaluations
    assert.equal(pager.received.length, 1, 'not sent again within repeatIntervalSeconds');

    // A delivery that succeeds clears the condition: one resolved notice.
    healthy = true;
    await publish(session);
    await deliveries(session, connectionId, ['delivered', 'failed', 'failed']);
    const [, second] = await pager.waitFor(2);
    const resolved = verified(channel.secret, second!);
    assert.equal(resolved.status, 'resolved');
    assert.equal(resolved.alerts[0]!.fingerprint, firing.alerts[0]!.fingerprint);
    assert.ok(Date.parse(resolved.alerts[0]!.endsAt) >= Number(first!.headers['webhook-timestamp']) * 1000);
    await sleep(500);
    assert.equal(pager.received.length, 2);
    const after = await h.request('GET', '/api/v1/platform/alerting/alerts', { token: h.platformToken });
    assert.ok(
      !after.body.data.some((a: { fingerprint: string }) => a.fingerprint === firing.alerts[0]!.fingerprint),
      'a resolved alert is no longer listed',
    );
  } finally {
    await Promise.all([target.close(), pager.close()]);
  }
});

test('a notice the channel does not take is retried until it does', async () => {
  const { session } = await makeSignedInTenant(h);
  const target = await startReceiver((_r, _i, res) => {
    res.statusCode = 500;
    res.end();
  });
  // The channel fails twice, then takes it (ALERT_RETRY_SCHEDULE=0,0: three attempts in all).
  const pager = await startReceiver((_r, i, res) => {
    res.statusCode = i < 2 ? 503 : 200;
    res.end();
  });
  try {
    const channel = await webhookChannel(pager.url('/alerts'));
    await routeDeliveryFailedTo(channel.id);
    const connectionId = await webhookConnection(session, target.url());
    await publish(session);
    await deliveries(session, connectionId, ['failed']);
    const attempts = await pager.waitFor(3);
    const bodies = attempts.map((a) => verified(channel.secret, a));
    assert.ok(
      bodies.every((b) => b.status === 'firing' && b.alerts[0]!.labels.connectionId === connectionId),
    );
    // One notice, three attempts: the same webhook-id each time, so a receiver can deduplicate.
    assert.equal(new Set(attempts.map((a) => a.headers['webhook-id'])).size, 1);
    await sleep(500);
    assert.equal(pager.received.length, 3);
    // The channel's last attempt is the one it took (a notification, not a test).
    const read = await h.request('GET', `/api/v1/platform/alerting/channels/${channel.id}`, {
      token: h.platformToken,
    });
    assert.deepEqual(
      { ...read.body.lastAttempt, at: typeof read.body.lastAttempt?.at },
      { at: 'string', ok: true, responseStatus: 200, error: null, test: false },
    );
  } finally {
    await Promise.all([target.close(), pager.close()]);
  }
});

test('an alert still firing is sent again once repeatIntervalSeconds has passed', async () => {
  const { session } = await makeSignedInTenant(h);
  const target = await startReceiver((_r, _i, res) => {
    res.statusCode = 500;
    res.end();
  });
  const pager = await startReceiver();
  try {
    const channel = await webhookChannel(pager.url('/alerts'));
    await routeDeliveryFailedTo(channel.id, 2);
    const connectionId = await webhookConnection(session, target.url());
    await publish(session);
    await deliveries(session, connectionId, ['failed']);
    // Alerts of earlier tests that still fire go to this channel too: only this connection's count.
    const mine = () =>
      pager.received.filter(
        (r) => verified(channel.secret, r).alerts[0]!.labels.connectionId === connectionId,
      );
    await until(() => mine().length >= 2, 'a second notice', 10_000);
    const [first, second] = mine();
    assert.ok(first && second, 'sent twice');
    for (const notice of [first, second]) assert.equal(verified(channel.secret, notice).status, 'firing');
    assert.notEqual(first.headers['webhook-id'], second.headers['webhook-id'], 'a new notice, not a retry');
    // The interval runs from when the first notice was queued, and its arrival may lag that on a
    // loaded machine: 2 s of interval against evaluations every 100 ms leaves a second of slack.
    assert.ok(second.at - first.at >= 1000, `repeated after ${second.at - first.at} ms, not after 2 s`);
  } finally {
    await Promise.all([target.close(), pager.close()]);
  }
});

// Two hubgate processes on one PostgreSQL database, both evaluating alerts: one notice, not two.
test(
  'with two processes on PostgreSQL, one alert is sent once',
  { skip: ENGINE !== 'postgres' },
  async () => {
    const second = await startHarness({
      env: ENV,
      keyring,
      testDatabase: h.testDatabase,
      workers: { pollMs: 50 },
    });
    const { session } = await makeSignedInTenant(h);
    const target = await startReceiver((_r, _i, res) => {
      res.statusCode = 500;
      res.end();
    });
    const pager = await startReceiver();
    try {
      const channel = await webhookChannel(pager.url('/alerts'));
      await routeDeliveryFailedTo(channel.id);
      const connectionId = await webhookConnection(session, target.url());
      for (let i = 0; i < 3; i++) await publish(session);
      await deliveries(session, connectionId, ['failed', 'failed', 'failed']);
      await pager.waitFor(1);
      await sleep(1_500); // fifteen evaluation intervals, each process trying every one
      const forThisConnection = pager.received.filter(
        (r) => verified(channel.secret, r).alerts[0]!.labels.connectionId === connectionId,
      );
      assert.equal(forThisConnection.length, 1);
    } finally {
      await Promise.all([target.close(), pager.close()]);
      await second.close();
    }
  },
);
