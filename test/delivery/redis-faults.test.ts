import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { madeBeforeThePolicy } from '../helpers/broker-policy.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { redisSkipReason, redisUser, streamReader } from '../helpers/redis.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// A Redis that goes away and comes back (a TCP proxy on loopback in front of the machine's Redis, cut
// and restored), one that stops answering, and a hub that allows no plaintext.

const CONNECTIONS = '/api/v1/integrations/connections';

/**
 * A proxy in front of Redis that can stop passing on what Redis says (a server that takes commands
 * but no longer answers), while the client's bytes still reach it.
 */
async function startStallingProxy(t: { after(fn: () => unknown): void }) {
  const state = { stalled: false };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(6379, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
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

async function redisConnection(
  h: Harness,
  session: TestSession,
  config: Record<string, unknown>,
  credentials: Record<string, string> = {},
) {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'redis', displayName: 'stream', ...config },
  });
  assert.equal(
    created.status,
    201,
    `creating a redis connection answered ${created.status}: ${created.text}`,
  );
  const bound = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
    session,
    body: credentials,
  });
  assert.equal(bound.status, 200, `binding answered ${bound.status}: ${bound.text}`);
  return created.body.id;
}

const idOf = (body: string | undefined) => (JSON.parse(String(body)) as { id: string }).id;

describe('redis: a server that goes away', { skip: await redisSkipReason() }, () => {
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

  test('a server that stops answering: the attempt times out, and the retry gets through on a new session', async (t) => {
    const reader = await streamReader(t);
    const proxy = await startStallingProxy(t);
    const { session } = await makeSignedInTenant(h);
    const id = await redisConnection(h, session, {
      url: `redis://127.0.0.1:${proxy.port}`,
      stream: reader.stream,
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
    assert.equal(attempt?.error, 'timeout', 'no answer within DELIVERY_TIMEOUT_MS is not a timeout');
    assert.match(
      String(attempt?.errorDetail),
      /no answer from the broker within DELIVERY_TIMEOUT_MS/,
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
    // At least once: the stalled XADD reached Redis too, before its retry.
    const ids = (await reader.entries()).map((e) => idOf(e.field('body')));
    assert.ok(ids.includes(stalled.body.id), 'the event published while Redis stalled never arrived');
  });

  test('fails the attempts while it is away, and is reconnected to once it is back, without a restart', async (t) => {
    const reader = await streamReader(t);
    const password = `cut-${Date.now()}-pw`;
    const username = await redisUser(t, ['on', `>${password}`, `~${reader.stream}`, '+xadd']);
    const proxy = await startTcpProxy('127.0.0.1', 6379);
    t.after(() => proxy.close());
    const { session } = await makeSignedInTenant(h);
    const id = await redisConnection(
      h,
      session,
      { url: `redis://127.0.0.1:${proxy.port}/0`, stream: reader.stream },
      { username, password },
    );
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await reader.waitFor(1);
    await waitForDeliveries(h, session, id, { statuses: ['delivered'] });

    await proxy.cut();
    const away = await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const log = await waitForDeliveries(h, session, id, { statuses: ['delivered', 'failed'] });
    const failed = log.find((d) => d.eventId === away.body.id);
    assert.ok(failed, 'the log does not show the event published while Redis was away');
    assert.equal(failed.attemptCount, 3, 'the attempts while Redis was away were not retried');
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
    const [, second] = await reader.waitFor(2);
    assert.equal(idOf(second?.field('body')), away.body.id, 'Redis, back, did not get the retried event');
    await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
    assertNoLeak(h, [password]);
  });

  test('under a stream of events with per-key ordering, a cut loses none and keeps their order', async (t) => {
    const reader = await streamReader(t);
    const proxy = await startTcpProxy('127.0.0.1', 6379);
    t.after(() => proxy.close());
    const { session } = await makeSignedInTenant(h);
    const id = await redisConnection(h, session, {
      url: `redis://127.0.0.1:${proxy.port}`,
      stream: reader.stream,
      ordering: 'per-key',
    });
    const events = Array.from({ length: 20 }, (_, n) => ({
      type: 'order.paid',
      data: { n },
      orderingKey: 'A',
    }));
    const first = await h.request('POST', '/api/v1/integrations/events/batch', {
      session,
      body: { events: events.slice(0, 10) },
    });
    assert.equal(first.status, 202, first.text);
    await reader.waitFor(3);
    await proxy.cut();
    const second = await h.request('POST', '/api/v1/integrations/events/batch', {
      session,
      body: { events: events.slice(10) },
    });
    assert.equal(second.status, 202, second.text);
    // Every delivery ends before Redis is back (once one of a key has failed, the next goes): the
    // deliveries made while it was away all failed, none went past another.
    const ended = await waitForDeliveries(
      h,
      session,
      id,
      (deliveries) =>
        deliveries.length === 20 &&
        deliveries.every((d) => d.status === 'delivered' || d.status === 'failed'),
      { message: '20 deliveries ended', timeoutMs: 20_000 },
    );
    const failedCount = ended.filter((d) => d.status === 'failed').length;
    assert.ok(failedCount >= 10, `only ${failedCount} deliveries failed while Redis was away`);
    await proxy.restore();
    const recovered = await h.request<{ queued: number }>('POST', `${CONNECTIONS}/${id}/recover`, {
      session,
      body: { since: new Date(Date.now() - 60_000).toISOString() },
    });
    assert.equal(recovered.status, 202, `recover answered ${recovered.status}: ${recovered.text}`);
    assert.equal(recovered.body.queued, failedCount, 'recover did not queue every failed delivery');
    await waitForDeliveries(
      h,
      session,
      id,
      (deliveries) => deliveries.filter((d) => d.status === 'delivered').length === 20,
      { message: '20 delivered', timeoutMs: 20_000 },
    );
    // At least once: an XADD cut after Redis took it may come again; the first of each is in order.
    const seen: number[] = [];
    for (const entry of await reader.entries()) {
      const n = (JSON.parse(String(entry.field('body'))) as { data: { n: number } }).data.n;
      if (!seen.includes(n)) seen.push(n);
    }
    assert.deepEqual(
      seen,
      events.map((e) => e.data.n),
      'entries of one ordering key were lost or out of order',
    );
  });
});

describe('redis: a hub without plaintext', { skip: await redisSkipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: { DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32', DELIVERY_RETRY_SCHEDULE: '0' },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('refuses redis: (no TLS) unless DELIVERY_ALLOW_HTTP=true, and appends nothing', async (t) => {
    const reader = await streamReader(t);
    const { session } = await makeSignedInTenant(h);
    const id = await madeBeforeThePolicy(
      h,
      session,
      'redis',
      { url: 'redis://127.0.0.1:6379/0', stream: reader.stream },
      'rediss://127.0.0.1:6379/0',
      (body) => redisConnection(h, session, body),
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attempts[0]?.error, 'destination_forbidden', 'plaintext Redis was not refused');
    assert.match(
      String(entry.attempts[0]?.errorDetail),
      /DELIVERY_ALLOW_HTTP/,
      'the refusal does not say why',
    );
    assert.equal((await reader.entries()).length, 0, 'a refused destination got an entry');
  });
});

describe('redis: a hub without an exemption for loopback', { skip: await redisSkipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_RETRY_SCHEDULE: '0' },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('refuses the loopback address by §8 at connect, by name and by literal', async (t) => {
    const reader = await streamReader(t);
    const { session } = await makeSignedInTenant(h);
    for (const url of ['redis://127.0.0.1:6379', 'redis://localhost:6379/0']) {
      const id = await madeBeforeThePolicy(
        h,
        session,
        'redis',
        { url, stream: reader.stream },
        'redis://broker.example.com:6379/0',
        (body) => redisConnection(h, session, body),
      );
      await publishEvent(h, session, { type: 'order.paid', data: {} });
      const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
      assert.equal(entry?.attempts[0]?.error, 'destination_forbidden', `${url} was not refused by §8`);
      assert.match(
        String(entry?.attempts[0]?.errorDetail),
        /refused range/,
        `${url}: the refusal does not say why`,
      );
    }
    assert.equal((await reader.entries()).length, 0, 'a refused address got an entry');
  });
});
