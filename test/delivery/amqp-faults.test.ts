import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { madeBeforeThePolicy } from '../helpers/broker-policy.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { rabbitSkipReason, startConsumer } from '../helpers/rabbitmq.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// A broker that goes away and comes back (a TCP proxy on loopback in front of the machine's RabbitMQ,
// cut and restored), and a hub that allows no plaintext.

const CONNECTIONS = '/api/v1/integrations/connections';

/**
 * A proxy in front of RabbitMQ that can stop passing on what the broker says (a broker that takes
 * publishes but no longer answers: no confirm comes), while the client's bytes still reach it.
 */
async function startStallingProxy(t: { after(fn: () => unknown): void }) {
  const state = { stalled: false };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const broker = connect(5672, '127.0.0.1');
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
  return { port: (server.address() as AddressInfo).port, state };
}

async function amqpConnection(h: Harness, session: TestSession, config: Record<string, unknown>) {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'amqp', displayName: 'rabbit', ...config },
  });
  assert.equal(
    created.status,
    201,
    `creating an amqp connection answered ${created.status}: ${created.text}`,
  );
  const bound = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
    session,
    body: { username: 'guest', password: 'guest' },
  });
  assert.equal(bound.status, 200, `binding answered ${bound.status}: ${bound.text}`);
  return created.body.id;
}

describe('amqp: a broker that goes away', { skip: await rabbitSkipReason() }, () => {
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
    const consumer = await startConsumer(t, 'k');
    const proxy = await startStallingProxy(t);
    const { session } = await makeSignedInTenant(h);
    const id = await amqpConnection(h, session, {
      url: `amqp://127.0.0.1:${proxy.port}/`,
      exchange: consumer.exchange,
      routingKey: 'k',
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
    assert.equal(attempt?.error, 'timeout', 'no confirm within DELIVERY_TIMEOUT_MS is not a timeout');
    assert.match(
      String(attempt?.errorDetail),
      /no confirm from the broker/,
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
    // At least once: the stalled publish may have reached the queue too, before its retry.
    const received = consumer.received.map(
      (m) => (JSON.parse(m.content.toString('utf8')) as { id: string }).id,
    );
    assert.ok(
      received.includes(stalled.body.id),
      'the event published while the broker stalled never arrived',
    );
  });

  test('fails the attempts while it is away, and is reconnected to once it is back, without a restart', async (t) => {
    const consumer = await startConsumer(t, 'k');
    const proxy = await startTcpProxy('127.0.0.1', 5672);
    t.after(() => proxy.close());
    const { session } = await makeSignedInTenant(h);
    const id = await amqpConnection(h, session, {
      url: `amqp://127.0.0.1:${proxy.port}/`,
      exchange: consumer.exchange,
      routingKey: 'k',
    });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await consumer.waitFor(1);
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
    const [, second] = await consumer.waitFor(2);
    assert.deepEqual(
      JSON.parse(second!.content.toString('utf8')).data,
      { n: 2 },
      'the broker that came back did not get the retried event',
    );
    await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
  });
});

describe('amqp: a hub without plaintext', { skip: await rabbitSkipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: { DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32', DELIVERY_RETRY_SCHEDULE: '0' },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('refuses amqp: (no TLS) unless DELIVERY_ALLOW_HTTP=true, and publishes nothing', async (t) => {
    const consumer = await startConsumer(t, 'k');
    const { session } = await makeSignedInTenant(h);
    const id = await madeBeforeThePolicy(
      h,
      session,
      'amqp',
      { url: 'amqp://127.0.0.1:5672/', exchange: consumer.exchange, routingKey: 'k' },
      'amqps://127.0.0.1:5671/',
      (body) => amqpConnection(h, session, body),
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attempts[0]?.error, 'destination_forbidden', 'plaintext AMQP was not refused');
    assert.match(
      String(entry.attempts[0]?.errorDetail),
      /DELIVERY_ALLOW_HTTP/,
      'the refusal does not say why',
    );
    assert.equal(consumer.received.length, 0, 'a refused destination got a message');
  });
});
