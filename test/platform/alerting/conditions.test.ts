import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeSignedInTenant, makeWebhookConnection, until } from '../../helpers/factories.js';
import { type Harness, type TestSession, startHarness } from '../../helpers/harness.js';
import { type Received, startReceiver } from '../../helpers/receiver.js';

// QueueBacklogHigh and DeliveryFailureRateHigh, with thresholds small enough to cross in a test,
// routed by the defaults to an HTTP channel; and the order of notices to a channel that was down.
let h: Harness;
let pager: Awaited<ReturnType<typeof startReceiver>>;
before(async () => {
  h = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_RETRY_SCHEDULE: '0,0,0',
      DELIVERY_TIMEOUT_MS: '2000',
      ALERT_EVALUATION_INTERVAL_MS: '100',
      ALERT_QUEUE_BACKLOG_THRESHOLD: '3',
      ALERT_FAILURE_RATE_MIN_DELIVERIES: '3',
      ALERT_FAILURE_RATE_THRESHOLD: '0.5',
      ALERT_FAILURE_RATE_WINDOW_SECONDS: '60',
      ALERT_RETRY_SCHEDULE: '2',
    },
    // One attempt at a time, so a slow receiver makes a queue.
    workers: { pollMs: 50, concurrency: 1 },
  });
  pager = await startReceiver();
  const channel = await h.request('POST', '/api/v1/platform/alerting/channels', {
    token: h.platformToken,
    body: {
      name: 'ops http',
      kind: 'HTTP',
      config: { url: pager.url('/notify'), method: 'POST', headers: { 'x-pager-token': 'pager-5ecret' } },
    },
  });
  assert.equal(channel.status, 201, channel.text);
  const rules = await h.request('PUT', '/api/v1/platform/alerting/rules', {
    token: h.platformToken,
    body: { defaults: { channelIds: [channel.body.id], repeatIntervalSeconds: 3600 }, rules: [] },
  });
  assert.equal(rules.status, 200, rules.text);
});
after(async () => {
  await pager.close();
  await h.close();
});

type Body = { status: string; alerts: Array<{ status: string; labels: Record<string, string> }> };
const notices = (alertname: string): Array<{ received: Received; body: Body }> =>
  pager.received
    .map((received) => ({ received, body: JSON.parse(received.body) as Body }))
    .filter(({ body }) => body.alerts[0]?.labels.alertname === alertname);

async function connectionTo(session: TestSession, url: string): Promise<string> {
  return (await makeWebhookConnection(h, session, url, { displayName: 'orders' })).id;
}

const publish = (session: TestSession) =>
  h.request('POST', '/api/v1/integrations/events', { session, body: { type: 'order.created', data: {} } });

test('QueueBacklogHigh fires while more deliveries are due than the threshold, and resolves when they are sent', async () => {
  const { session } = await makeSignedInTenant(h);
  const slow = await startReceiver((_r, _i, res) => {
    setTimeout(() => res.end('ok'), 250);
  });
  try {
    await connectionTo(session, slow.url());
    for (let i = 0; i < 10; i++) assert.equal((await publish(session)).status, 202);
    await until(() => notices('QueueBacklogHigh').length >= 1, 'QueueBacklogHigh firing');
    const [firing] = notices('QueueBacklogHigh');
    assert.equal(firing!.body.status, 'firing');
    assert.deepEqual(firing!.body.alerts[0]!.labels, { alertname: 'QueueBacklogHigh', severity: 'warning' });
    assert.equal(firing!.received.headers['x-pager-token'], 'pager-5ecret');
    await slow.waitFor(10);
    await until(() => notices('QueueBacklogHigh').length >= 2, 'QueueBacklogHigh resolved');
    assert.equal(notices('QueueBacklogHigh')[1]!.body.status, 'resolved');
  } finally {
    await slow.close();
  }
});

test('DeliveryFailureRateHigh fires for the tenant whose attempts fail above the threshold', async () => {
  const { tenant, session } = await makeSignedInTenant(h);
  const failing = await startReceiver((_r, _i, res) => {
    res.statusCode = 502;
    res.end();
  });
  try {
    await connectionTo(session, failing.url());
    for (let i = 0; i < 2; i++) assert.equal((await publish(session)).status, 202);
    await until(
      () => notices('DeliveryFailureRateHigh').some((n) => n.body.alerts[0]!.labels.tenantId === tenant.id),
      'DeliveryFailureRateHigh for the tenant',
    );
    const notice = notices('DeliveryFailureRateHigh').find(
      (n) => n.body.alerts[0]!.labels.tenantId === tenant.id,
    );
    assert.equal(notice!.body.status, 'firing');
    assert.equal(notice!.body.alerts[0]!.labels.severity, 'warning');
  } finally {
    await failing.close();
  }
});

test('a channel that was down when an alert fired hears "resolved" last, never a stale "firing" after it', async () => {
  const { session } = await makeSignedInTenant(h);
  let healthy = false;
  const target = await startReceiver((_r, _i, res) => {
    res.statusCode = healthy ? 200 : 500;
    res.end();
  });
  // Down for the first notice (retried 2 s later, ALERT_RETRY_SCHEDULE=2), up afterwards.
  const flaky = await startReceiver((_r, i, res) => {
    res.statusCode = i === 0 ? 503 : 200;
    res.end();
  });
  try {
    const channel = await h.request('POST', '/api/v1/platform/alerting/channels', {
      token: h.platformToken,
      body: { name: 'flaky', kind: 'HTTP', config: { url: flaky.url('/notify') } },
    });
    assert.equal(channel.status, 201);
    const connectionId = await connectionTo(session, target.url());
    const current = await h.request('GET', '/api/v1/platform/alerting/rules', { token: h.platformToken });
    const rules = await h.request('PUT', '/api/v1/platform/alerting/rules', {
      token: h.platformToken,
      body: {
        defaults: current.body.defaults,
        rules: [
          {
            name: 'this connection',
            matchers: [{ name: 'connectionId', op: '=', value: connectionId }],
            channelIds: [channel.body.id],
          },
        ],
      },
    });
    assert.equal(rules.status, 200, rules.text);
    assert.equal((await publish(session)).status, 202);
    await flaky.waitFor(1); // the firing notice, refused
    healthy = true;
    assert.equal((await publish(session)).status, 202); // delivered: the alert resolves
    await flaky.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // past the firing notice's retry
    const statuses = flaky.received.map((r) => (JSON.parse(r.body) as Body).status);
    assert.deepEqual(statuses, ['firing', 'resolved']);
  } finally {
    await Promise.all([target.close(), flaky.close()]);
  }
});
