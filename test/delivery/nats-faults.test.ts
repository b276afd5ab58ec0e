import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { madeBeforeThePolicy } from '../helpers/broker-policy.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { NATS_PORT, natsSkipReason, startStream } from '../helpers/nats.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// A NATS server that goes away and comes back (a TCP proxy on loopback in front of the machine's
// server, cut and restored), one that stops answering, and a hub that allows no plaintext.

const CONNECTIONS = '/api/v1/integrations/connections';

/**
 * A proxy in front of NATS that can stop passing on what the server says (a server that stores
 * publishes but whose PubAck never arrives), while the client's bytes still reach it.
 */
async function startStallingProxy(t: { after(fn: () => unknown): void }) {
  const state = { stalled: false };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const broker = connect(NATS_PORT, '127.0.0.1');
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
  /** Drops every connection through the proxy, as a server that went away. */
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  return { port: (server.address() as AddressInfo).port, state, cut };
}

async function natsConnection(h: Harness, session: TestSession, config: Record<string, unknown>) {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'nats', displayName: 'nats', ...config },
  });
  assert.equal(created.status, 201, `creating a nats connection answered ${created.status}: ${created.text}`);
  const bound = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
    session,
    body: {},
  });
  assert.equal(bound.status, 200, `binding answered ${bound.status}: ${bound.text}`);
  return created.body.id;
}

interface Attempt {
  error: string | null;
  errorDetail: string | null;
  response: { body: string } | null;
}

describe('nats: a server that goes away', { skip: await natsSkipReason() }, () => {
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

  test('fails the attempts while it is away, and is reconnected to once it is back, without a restart', async (t) => {
    const consumer = await startStream(t);
    const proxy = await startTcpProxy('127.0.0.1', NATS_PORT);
    t.after(() => proxy.close());
    const { session } = await makeSignedInTenant(h);
    const id = await natsConnection(h, session, {
      url: `nats://127.0.0.1:${proxy.port}`,
      subject: `${consumer.prefix}.k`,
    });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await consumer.waitFor(1);
    await waitForDeliveries(h, session, id, { statuses: ['delivered'] });

    await proxy.cut();
    const away = await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const log = await waitForDeliveries(h, session, id, { statuses: ['delivered', 'failed'] });
    const failed = log.find((d) => d.eventId === away.body.id);
    assert.ok(failed, 'the log does not show the event published while the server was away');
    assert.equal(failed.attemptCount, 3, 'the attempts while the server was away were not retried');
    for (const attempt of failed.attempts) {
      assert.equal(attempt.error, 'connection_error', 'a server that is away is not a connection error');
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
      second?.json<{ data: unknown }>().data,
      { n: 2 },
      'the server that came back did not get the retried event',
    );
    await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
  });

  test('no PubAck in time is a timeout; the retry is de-duplicated by its Nats-Msg-Id, stored once', async (t) => {
    const consumer = await startStream(t);
    const proxy = await startStallingProxy(t);
    const { session } = await makeSignedInTenant(h);
    const id = await natsConnection(h, session, {
      url: `nats://127.0.0.1:${proxy.port}`,
      subject: `${consumer.prefix}.k`,
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
    assert.equal(attempt?.error, 'timeout', 'no PubAck within DELIVERY_TIMEOUT_MS is not a timeout');
    assert.match(
      String(attempt?.errorDetail),
      /no PubAck from JetStream/,
      'the timeout does not say what was missing',
    );
    // The stalled publish reached the stream; only its PubAck was lost.
    await consumer.waitFor(2);

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
    const done = await waitForDeliveries(
      h,
      session,
      id,
      { statuses: ['delivered', 'delivered'] },
      { timeoutMs: 15_000 },
    );
    const attempts = done.find((d) => d.eventId === stalled.body.id)?.attempts as unknown as Attempt[];
    const last = attempts.at(-1);
    assert.equal(
      last?.response?.body,
      `stream ${consumer.stream} seq 2 (duplicate)`,
      'the retry was not recognised by JetStream as the message it already had',
    );
    assert.equal(
      consumer.received.filter((m) => m.headers?.get('Nats-Msg-Id') === stalled.body.id).length,
      1,
      'the stream stored the retried event more than once',
    );
  });
});

describe('nats: a server that goes away with a publish in flight', { skip: await natsSkipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: {
        DELIVERY_ALLOW_HTTP: 'true',
        DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
        DELIVERY_RETRY_SCHEDULE: '0,0',
        DELIVERY_TIMEOUT_MS: '10000',
      },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('fails that attempt at once, in words, and the retry reaches the server on a new connection', async (t) => {
    const consumer = await startStream(t);
    const proxy = await startStallingProxy(t);
    const { session } = await makeSignedInTenant(h);
    const id = await natsConnection(h, session, {
      url: `nats://127.0.0.1:${proxy.port}`,
      subject: `${consumer.prefix}.k`,
    });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await waitForDeliveries(h, session, id, { statuses: ['delivered'] });

    proxy.state.stalled = true;
    const inFlight = await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    // The stream has it, so the publish is out and waits for its PubAck: now the server goes away.
    await consumer.waitFor(2);
    proxy.cut();
    proxy.state.stalled = false;
    const done = await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
    const [first, ...retries] = done.find((d) => d.eventId === inFlight.body.id)?.attempts ?? [];
    assert.equal(
      first?.error,
      'connection_error',
      'an attempt in flight was not failed when the server went',
    );
    assert.equal(
      first?.errorDetail,
      'the connection to the broker closed before its PubAck',
      'the failed attempt does not say the connection closed under it',
    );
    assert.ok(Number(first?.durationMs) < 10_000, 'the attempt in flight waited for its timeout');
    assert.ok(retries.length > 0, 'the event was not retried');
  });
});

describe('nats: a hub without plaintext', { skip: await natsSkipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: { DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32', DELIVERY_RETRY_SCHEDULE: '0' },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('refuses nats: (no TLS) unless DELIVERY_ALLOW_HTTP=true, and publishes nothing', async (t) => {
    const consumer = await startStream(t);
    const { session } = await makeSignedInTenant(h);
    const id = await madeBeforeThePolicy(
      h,
      session,
      'nats',
      { url: `nats://127.0.0.1:${NATS_PORT}`, subject: `${consumer.prefix}.k` },
      `tls://127.0.0.1:${NATS_PORT}`,
      (body) => natsConnection(h, session, body),
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attempts[0]?.error, 'destination_forbidden', 'plaintext NATS was not refused');
    assert.match(
      String(entry.attempts[0]?.errorDetail),
      /DELIVERY_ALLOW_HTTP/,
      'the refusal does not say why',
    );
    assert.equal(consumer.received.length, 0, 'a refused destination got a message');
  });

  test('a broker address outside DELIVERY_ALLOWED_CIDRS is refused at connect', async (t) => {
    const consumer = await startStream(t);
    const { session } = await makeSignedInTenant(h);
    const id = await madeBeforeThePolicy(
      h,
      session,
      'nats',
      { url: `tls://127.0.0.2:${NATS_PORT}`, subject: `${consumer.prefix}.k` },
      `tls://127.0.0.1:${NATS_PORT}`,
      (body) => natsConnection(h, session, body),
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
    assert.equal(
      entry?.attempts[0]?.error,
      'destination_forbidden',
      'a loopback address not allowed was connected to',
    );
    assert.match(
      String(entry?.attempts[0]?.errorDetail),
      /127\.0\.0\.2 is in a refused range/,
      'the refusal does not say why',
    );
  });
});
