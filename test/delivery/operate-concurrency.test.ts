import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { CONNECTIONS, pause, resume } from '../helpers/operate.js';
import { startReceiver } from '../helpers/receiver.js';

// docs/api/events.md: recover, resume and manual retry racing a worker or each other never send one
// delivery twice at once and never lose one. Receivers listen on 127.0.0.1 only.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  // Two attempts at once: a delivery to a failing receiver is `failed` within milliseconds.
  DELIVERY_RETRY_SCHEDULE: '0',
  DELIVERY_TIMEOUT_MS: '5000',
  RATE_LIMIT_PER_MINUTE: '1000000',
  CONNECTION_PAUSE_AFTER_FAILURES: '0',
};
const EVENTS = 30;

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 20 } });
});
after(() => h.close());

test('recovers, manual retries, a pause and a resume with replay all at once: each delivery arrives once, never twice at once', async (t) => {
  let healthy = false;
  const inFlight = new Map<string, number>();
  const arrivals = new Map<string, number>();
  let overlapping = 0;
  let refused = 0;
  const receiver = await startReceiver(t, async (request, _i, res) => {
    const id = String(request.headers['webhook-id']);
    if (!healthy) {
      refused++;
      res.statusCode = 500;
      return void res.end();
    }
    const now = (inFlight.get(id) ?? 0) + 1;
    inFlight.set(id, now);
    if (now > 1) overlapping++;
    arrivals.set(id, (arrivals.get(id) ?? 0) + 1);
    // Slow enough that requeues and the pause land while attempts are in flight.
    await sleep(20 + Math.floor(Math.random() * 30));
    inFlight.set(id, (inFlight.get(id) ?? 1) - 1);
    res.end('ok');
  });
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, receiver.url());
  const since = new Date(Date.now() - 60_000).toISOString();
  for (let i = 0; i < EVENTS; i++) await publishEvent(h, session, { type: `race.e${i}` });
  const failed = await waitForDeliveries(
    h,
    session,
    hook.id,
    (ds) => ds.length === EVENTS && ds.every((d) => d.status === 'failed'),
    {
      message: `all ${EVENTS} deliveries failed once`,
    },
  );

  healthy = true;
  const recover = () => h.request('POST', `${CONNECTIONS}/${hook.id}/recover`, { session, body: { since } });
  const retries = failed.map((d) =>
    h.request('POST', `${CONNECTIONS}/${hook.id}/events/${d.id}/retry`, { session }),
  );
  const answers = await Promise.all([recover(), ...retries, recover(), recover()]);
  for (const answer of answers) {
    assert.ok(
      [202, 409].includes(answer.status),
      `a recover or retry answered ${answer.status}: ${answer.text}`,
    );
  }
  // Whatever was requeued twice over is still one delivery; a pause now skips what is left, and the
  // resume replays it while the attempts the pause waited for have ended.
  await pause(h, session, hook.id);
  await resume(h, session, hook.id, { replaySkipped: true });

  await waitForDeliveries(
    h,
    session,
    hook.id,
    (ds) => ds.length === EVENTS && ds.every((d) => d.status === 'delivered'),
    {
      message: `all ${EVENTS} deliveries delivered`,
      timeoutMs: 30_000,
    },
  );
  t.diagnostic(
    `${arrivals.size} deliveries arrived, ${[...arrivals.values()].reduce((a, b) => a + b, 0)} requests`,
  );
  assert.equal(overlapping, 0, 'a delivery was being sent twice at the same time');
  assert.equal(arrivals.size, EVENTS, 'a recovered delivery never arrived');
  for (const [id, count] of arrivals) {
    assert.equal(count, 1, `${id} arrived ${count} times after the receiver was fixed`);
  }
  assert.equal(
    receiver.received.length - refused,
    EVENTS,
    'each delivery arrived once after the receiver was fixed',
  );
});
