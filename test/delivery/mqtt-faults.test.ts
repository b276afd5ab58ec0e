import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { madeBeforeThePolicy } from '../helpers/broker-policy.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { mosquittoSkipReason, startSubscriber, type Received } from '../helpers/mosquitto.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// A broker that goes away and comes back (a TCP proxy on loopback in front of the machine's
// Mosquitto, cut and restored), one that takes publishes but stops answering, and a hub that allows
// no plaintext.

const CONNECTIONS = '/api/v1/integrations/connections';

/**
 * A proxy in front of Mosquitto that can stop passing on what the broker says (a broker that takes
 * publishes but no longer acknowledges them) while the client's bytes still reach it, and can drop
 * the connections it carries (the broker goes away mid-publish) while it keeps accepting new ones.
 */
async function startStallingProxy(t: { after(fn: () => unknown): void }) {
  const state = { stalled: false };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const broker = connect(1883, '127.0.0.1');
    for (const socket of [client, broker]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        broker.destroy();
      });
    }
    client.pipe(broker);
    broker.on('data', (chunk: Buffer) => {
      if (!state.stalled) client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  const dropConnections = () => {
    for (const socket of sockets) socket.destroy();
  };
  return { port: (server.address() as AddressInfo).port, state, dropConnections };
}

async function mqttConnection(h: Harness, session: TestSession, config: Record<string, unknown>) {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'mqtt', displayName: 'mosquitto', ...config },
  });
  assert.equal(
    created.status,
    201,
    `creating an mqtt connection answered ${created.status}: ${created.text}`,
  );
  const bound = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
    session,
    body: {},
  });
  assert.equal(bound.status, 200, `binding answered ${bound.status}: ${bound.text}`);
  return created.body.id;
}

const idOf = (message: Received) => (JSON.parse(message.body) as { id: string }).id;

describe('mqtt: a broker that goes away', { skip: await mosquittoSkipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: {
        DELIVERY_ALLOW_HTTP: 'true',
        DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
        DELIVERY_RETRY_SCHEDULE: '0,0',
        DELIVERY_TIMEOUT_MS: '1500',
      },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('a broker that stops answering: the attempt times out, and the retry gets through on a new session', async (t) => {
    const subscriber = await startSubscriber(t);
    const proxy = await startStallingProxy(t);
    const { session } = await makeSignedInTenant(h);
    const id = await mqttConnection(h, session, {
      url: `mqtt://127.0.0.1:${proxy.port}`,
      topic: `${subscriber.prefix}/k`,
    });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await waitForDeliveries(h, session, id, { statuses: ['delivered'] });

    proxy.state.stalled = true;
    const stalled = await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const log = await waitForDeliveries(
      h,
      session,
      id,
      (deliveries) => deliveries.some((d) => d.eventId === stalled.body.id && d.attempts.length > 0),
      { message: 'a timed-out attempt', timeoutMs: 15_000 },
    );
    const attempt = log.find((d) => d.eventId === stalled.body.id)?.attempts[0];
    assert.equal(attempt?.error, 'timeout', 'no PUBACK within DELIVERY_TIMEOUT_MS is not a timeout');
    assert.equal(
      attempt?.errorDetail,
      'no acknowledgement from the broker within DELIVERY_TIMEOUT_MS',
      'the timeout does not say what was missing',
    );

    proxy.state.stalled = false;
    const settled = await waitForDeliveries(h, session, id, { settled: 2 }, { timeoutMs: 15_000 });
    const entry = settled.find((d) => d.eventId === stalled.body.id);
    if (entry?.status === 'failed') {
      const retried = await h.request('POST', `${CONNECTIONS}/${id}/events/${entry.id}/retry`, {
        session,
        body: {},
      });
      assert.equal(retried.status, 202, retried.text);
    }
    await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] }, { timeoutMs: 15_000 });
    // At least once: the stalled publish reached the broker too, before its retry.
    assert.ok(
      subscriber.received.map(idOf).includes(stalled.body.id),
      'the event published while the broker stalled never arrived',
    );
  });

  test('a broker that goes away mid-publish fails the attempt in flight; the retry is delivered', async (t) => {
    const subscriber = await startSubscriber(t);
    const proxy = await startStallingProxy(t);
    const { session } = await makeSignedInTenant(h);
    const id = await mqttConnection(h, session, {
      url: `mqtt://127.0.0.1:${proxy.port}`,
      topic: `${subscriber.prefix}/k`,
    });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await waitForDeliveries(h, session, id, { statuses: ['delivered'] });

    proxy.state.stalled = true;
    const inFlight = await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    // The broker has the message (its subscriber got it), its PUBACK is held back: then it goes away.
    await subscriber.waitFor(2);
    proxy.state.stalled = false;
    proxy.dropConnections();
    const log = await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
    const entry = log.find((d) => d.eventId === inFlight.body.id);
    assert.ok(entry && entry.attempts.length >= 2, 'the attempt in flight was not failed and retried');
    assert.equal(
      entry.attempts[0]?.error,
      'connection_error',
      'a broker gone mid-publish is not a connection error',
    );
    assert.equal(
      entry.attempts[0]?.errorDetail,
      'the connection to the broker closed before it acknowledged the message',
      'the failed attempt does not say the broker went away before acknowledging',
    );
    assert.ok(
      subscriber.received.filter((m) => idOf(m) === inFlight.body.id).length >= 2,
      'the retry did not publish the event again (at least once)',
    );
  });

  test('fails the attempts while it is away, and is reconnected to once it is back, without a restart', async (t) => {
    const subscriber = await startSubscriber(t);
    const proxy = await startTcpProxy('127.0.0.1', 1883);
    t.after(() => proxy.close());
    const { session } = await makeSignedInTenant(h);
    const id = await mqttConnection(h, session, {
      url: `mqtt://127.0.0.1:${proxy.port}`,
      topic: `${subscriber.prefix}/k`,
    });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await subscriber.waitFor(1);
    await waitForDeliveries(h, session, id, { statuses: ['delivered'] });

    await proxy.cut();
    const away = await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const log = await waitForDeliveries(h, session, id, { statuses: ['delivered', 'failed'] });
    const failed = log.find((d) => d.eventId === away.body.id);
    assert.ok(failed, 'the log does not show the event published while the broker was away');
    assert.equal(failed.attemptCount, 3, 'the attempts while the broker was away were not retried');
    for (const attempt of failed.attempts) {
      assert.equal(attempt.error, 'connection_error', 'a broker that is away is not a connection error');
      assert.ok(attempt.errorDetail, 'a failed attempt says nothing of why');
    }

    await proxy.restore();
    const retried = await h.request('POST', `${CONNECTIONS}/${id}/events/${failed.id}/retry`, {
      session,
      body: {},
    });
    assert.equal(retried.status, 202, `retrying answered ${retried.status}: ${retried.text}`);
    const [, second] = await subscriber.waitFor(2);
    assert.equal(
      second && idOf(second),
      away.body.id,
      'the broker that came back did not get the retried event',
    );
    await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
  });
});

describe('mqtt: a hub without plaintext', { skip: await mosquittoSkipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: { DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32', DELIVERY_RETRY_SCHEDULE: '0' },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('refuses mqtt: (no TLS) unless DELIVERY_ALLOW_HTTP=true, and publishes nothing', async (t) => {
    const subscriber = await startSubscriber(t);
    const { session } = await makeSignedInTenant(h);
    const id = await madeBeforeThePolicy(
      h,
      session,
      'mqtt',
      { url: 'mqtt://127.0.0.1:1883', topic: `${subscriber.prefix}/k` },
      'mqtts://127.0.0.1:8883',
      (body) => mqttConnection(h, session, body),
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attempts[0]?.error, 'destination_forbidden', 'plaintext MQTT was not refused');
    assert.match(
      String(entry.attempts[0]?.errorDetail),
      /DELIVERY_ALLOW_HTTP/,
      'the refusal does not say why',
    );
    assert.equal(subscriber.received.length, 0, 'a refused destination got a message');
  });

  test('refuses a broker in a refused range (§8) at connect, before any byte is sent', async () => {
    const { session } = await makeSignedInTenant(h);
    const id = await madeBeforeThePolicy(
      h,
      session,
      'mqtt',
      { url: 'mqtts://10.0.0.1:8883', topic: 't' },
      'mqtts://127.0.0.1:8883',
      (body) => mqttConnection(h, session, body),
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
    assert.equal(entry?.attempts[0]?.error, 'destination_forbidden', 'a private address was not refused');
    assert.match(
      String(entry?.attempts[0]?.errorDetail),
      /10\.0\.0\.1 is in a refused range/,
      'the refusal does not say why',
    );
  });
});
