import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { publishEvent } from '../../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../../helpers/harness.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';
import { waitUntil } from '../../helpers/wait.js';

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

test('QueueBacklogHigh fires while more deliveries are due than the threshold, and resolves when they are sent', async (t) => {
  const { session } = await makeSignedInTenant(h);
  const slow = await startReceiver(t, (_r, _i, res) => {
    setTimeout(() => res.end('ok'), 250);
  });
  await connectionTo(session, slow.url());
  for (let i = 0; i < 10; i++) await publishEvent(h, session);
  await waitUntil(() => notices('QueueBacklogHigh').length >= 1, { message: 'QueueBacklogHigh firing' });
  const [firing] = notices('QueueBacklogHigh');
  assert.equal(firing!.body.status, 'firing', 'the first QueueBacklogHigh notice is not a firing one');
  assert.deepEqual(
    firing!.body.alerts[0]!.labels,
    { alertname: 'QueueBacklogHigh', severity: 'warning' },
    'the QueueBacklogHigh alert carries other labels than its name and severity',
  );
  assert.equal(
    firing!.received.headers['x-pager-token'],
    'pager-5ecret',
    "the HTTP channel's header was not sent with the notice",
  );
  await slow.waitFor(10);
  await waitUntil(() => notices('QueueBacklogHigh').length >= 2, { message: 'QueueBacklogHigh resolved' });
  assert.equal(
    notices('QueueBacklogHigh')[1]!.body.status,
    'resolved',
    'QueueBacklogHigh does not resolve once the queue is sent',
  );
});

test('DeliveryFailureRateHigh fires for the tenant whose attempts fail above the threshold', async (t) => {
  const { tenant, session } = await makeSignedInTenant(h);
  const failing = await startReceiver(t, (_r, _i, res) => {
    res.statusCode = 502;
    res.end();
  });
  await connectionTo(session, failing.url());
  for (let i = 0; i < 2; i++) await publishEvent(h, session);
  await waitUntil(
    () => notices('DeliveryFailureRateHigh').some((n) => n.body.alerts[0]!.labels.tenantId === tenant.id),
    { message: 'DeliveryFailureRateHigh for the tenant' },
  );
  const notice = notices('DeliveryFailureRateHigh').find(
    (n) => n.body.alerts[0]!.labels.tenantId === tenant.id,
  );
  assert.equal(
    notice!.body.status,
    'firing',
    "the tenant's DeliveryFailureRateHigh notice is not a firing one",
  );
  assert.equal(
    notice!.body.alerts[0]!.labels.severity,
    'warning',
    'DeliveryFailureRateHigh is not a warning',
  );
});

test('a channel that was down when an alert fired hears "resolved" last, never a stale "firing" after it', async (t) => {
  const { session } = await makeSignedInTenant(h);
  let healthy = false;
  const target = await startReceiver(t, (_r, _i, res) => {
    res.statusCode = healthy ? 200 : 500;
    res.end();
  });
  // Down for the first notice (retried 2 s later, ALERT_RETRY_SCHEDULE=2), up afterwards.
  const flaky = await startReceiver(t, (_r, i, res) => {
    res.statusCode = i === 0 ? 503 : 200;
    res.end();
  });
  const channel = await h.request('POST', '/api/v1/platform/alerting/channels', {
    token: h.platformToken,
    body: { name: 'flaky', kind: 'HTTP', config: { url: flaky.url('/notify') } },
  });
  assert.equal(channel.status, 201, 'the flaky channel cannot be created');
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
  await publishEvent(h, session);
  await flaky.waitFor(1); // the firing notice, refused
  healthy = true;
  await publishEvent(h, session); // delivered: the alert resolves
  await flaky.waitFor(2);
  // The refused firing notice is retried 2 s later unless the resolved one superseded it: wait until no notice
  // for the channel is left to send, so a stale retry would have arrived.
  await waitUntil(
    async () =>
      (
        await sql<{ n: number }>`
          select count(*)::int as n from alert_notifications
          where channel_id = ${channel.body.id} and state = 'pending'`.execute(h.database.kysely)
      ).rows[0]?.n === 0,
    { message: 'every notice of the flaky channel sent or given up' },
  );
  const statuses = flaky.received.map((r) => (JSON.parse(r.body) as Body).status);
  assert.deepEqual(
    statuses,
    ['firing', 'resolved'],
    'the channel that was down did not hear firing then resolved, in that order, and nothing stale after',
  );
});
