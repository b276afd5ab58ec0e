import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { REDIS_URL, redisAdmin, redisSkipReason, redisUser, streamReader } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

// The machine's Redis on 127.0.0.1:6379 (no password; other people's tests use it too), opened by
// DELIVERY_ALLOWED_CIDRS; plaintext redis: by DELIVERY_ALLOW_HTTP. Each test has its own stream (and
// ACL user where it needs one), deleted after it.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '0,0',
  DELIVERY_TIMEOUT_MS: '5000',
};

const CONNECTIONS = '/api/v1/integrations/connections';

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

async function makeRedisConnection(
  session: TestSession,
  config: Record<string, unknown>,
  credentials: Record<string, string> = {},
): Promise<{ id: string; secret: string }> {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'redis', displayName: 'stream', url: REDIS_URL, ...config },
  });
  assert.equal(
    created.status,
    201,
    `creating a redis connection answered ${created.status}: ${created.text}`,
  );
  const bound = await h.request<{ credentials: { signingSecret: string } }>(
    'PUT',
    `${CONNECTIONS}/${created.body.id}/credentials`,
    { session, body: credentials },
  );
  assert.equal(bound.status, 200, `binding the redis credentials answered ${bound.status}: ${bound.text}`);
  assert.match(bound.body.credentials.signingSecret, /^whsec_/, 'binding generated no signing secret');
  return { id: created.body.id, secret: bound.body.credentials.signingSecret };
}

const dataOf = (body: string | undefined) => (JSON.parse(String(body)) as { data: unknown }).data;

describe('redis connector (Redis Streams)', { skip: await redisSkipReason() }, () => {
  test('an event becomes a signed stream entry, and its attempt reads as a publish answered by the entry ID', async (t) => {
    const reader = await streamReader(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeRedisConnection(session, { stream: reader.stream });
    const published = await publishEvent(h, session, { type: 'order.paid', data: { order: 42 } });
    const [entry] = await reader.waitFor(1);
    assert.ok(entry, 'the stream got no entry');
    assert.deepEqual(
      entry.fields.slice(0, 5).map(([name]) => name),
      ['webhook-id', 'webhook-timestamp', 'webhook-signature', 'content-type', 'body'],
      'the entry does not carry the fields §21 names, in that order',
    );
    assert.equal(entry.field('content-type'), 'application/json', 'the entry is not marked as JSON');
    assert.equal(entry.field('webhook-id'), published.body.id, "the entry's webhook-id is not the event ID");
    const verified = new Webhook(connection.secret).verify(String(entry.field('body')), {
      'webhook-id': String(entry.field('webhook-id')),
      'webhook-timestamp': String(entry.field('webhook-timestamp')),
      'webhook-signature': String(entry.field('webhook-signature')),
    });
    assert.deepEqual(
      verified,
      { id: published.body.id, type: 'order.paid', timestamp: published.body.createdAt, data: { order: 42 } },
      'the signed entry is not the event as published',
    );
    const [delivery] = await waitForDeliveries(h, session, connection.id, { settled: 1 });
    assert.equal(delivery.status, 'delivered', 'the log does not show the entry as delivered');
    const [attempt] = delivery.attempts;
    assert.ok(attempt, 'the log shows no attempt');
    assert.equal(attempt.responseStatus, null, 'a broker attempt shows an HTTP status');
    assert.equal(attempt.remoteAddress, '127.0.0.1', 'the attempt does not show the address it went to');
    const { request, response } = attempt as unknown as {
      request: { method: string; url: string; headers: Record<string, string> };
      response: { body: string };
    };
    assert.equal(request.method, 'PUBLISH', 'the attempt does not read as a publish');
    assert.equal(
      request.url,
      `redis://127.0.0.1:6379/0 stream=${reader.stream}`,
      'the attempt does not name the broker and the stream',
    );
    assert.equal(
      request.headers['webhook-id'],
      published.body.id,
      'the attempt does not show the fields sent',
    );
    assert.equal(response.body, entry.id, "the attempt's answer is not the entry ID Redis gave");
    assert.match(response.body, /^\d+-\d+$/, 'the answer is not an entry ID');
  });

  test('an ACL user logs in with its password; the password is never in a log or an answer', async (t) => {
    const reader = await streamReader(t);
    const password = `pw-${Date.now()}-secret`;
    const username = await redisUser(t, ['on', `>${password}`, `~${reader.stream}`, '+xadd']);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeRedisConnection(session, { stream: reader.stream }, { username, password });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await reader.waitFor(1);
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered'] });
    assertNoLeak(h, [password]);
  });

  test('a wrong password fails the attempt in words, retried, and the password stays unseen', async (t) => {
    const reader = await streamReader(t);
    const username = await redisUser(t, ['on', '>the-right-one', `~${reader.stream}`, '+xadd']);
    const { session } = await makeSignedInTenant(h);
    const password = `wrong-${Date.now()}-pw`;
    const connection = await makeRedisConnection(session, { stream: reader.stream }, { username, password });
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attemptCount, 3, 'a refused login was not retried on schedule');
    for (const attempt of entry.attempts) {
      assert.equal(attempt.error, 'connection_error', 'a refused login is not a failed attempt');
      assert.match(
        String(attempt.errorDetail),
        /^the broker refused the credentials: WRONGPASS/,
        'the attempt does not say Redis refused the credentials',
      );
    }
    assert.equal((await reader.entries()).length, 0, 'a refused login appended something');
    assertNoLeak(h, [password]);
  });

  test("a key of another type (WRONGTYPE) and a key the ACL forbids (NOPERM) fail in Redis's words, every retry", async (t) => {
    const { session } = await makeSignedInTenant(h);
    const reader = await streamReader(t);
    const admin = await redisAdmin(t, (client) => client.del(reader.stream));
    await admin.set(reader.stream, 'not a stream');
    const wrongType = await makeRedisConnection(session, { stream: reader.stream });
    const other = await streamReader(t);
    const password = 'acl-test-pw';
    const username = await redisUser(t, ['on', `>${password}`, '~somewhere-else', '+xadd']);
    const forbidden = await makeRedisConnection(session, { stream: other.stream }, { username, password });
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    for (const [connection, words] of [
      [
        wrongType,
        /^the broker refused the message: WRONGTYPE Operation against a key holding the wrong kind of value/,
      ],
      [forbidden, /^the broker refused the message: NOPERM/],
    ] as const) {
      const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
      assert.ok(entry, 'the log shows no delivery');
      assert.equal(entry.attemptCount, 3, 'a refused XADD was not retried on schedule');
      for (const attempt of entry.attempts) {
        assert.equal(attempt.error, 'connection_error', 'a refused XADD is not a failed attempt');
        assert.match(String(attempt.errorDetail), words, 'the attempt does not say what Redis answered');
      }
    }
    assert.equal(await admin.get(reader.stream), 'not a stream', 'the key of another type was changed');
    assert.equal((await other.entries()).length, 0, 'a forbidden key got an entry');
  });

  test('maxLen trims the stream approximately (MAXLEN ~) and the attempt says so', async (t) => {
    const reader = await streamReader(t);
    const admin = await redisAdmin(t);
    for (let n = 0; n < 3000; n += 500) {
      const batch = admin.multi();
      for (let i = 0; i < 500; i++) batch.addCommand(['XADD', reader.stream, '*', 'n', String(n + i)]);
      await batch.exec();
    }
    const { session } = await makeSignedInTenant(h);
    const connection = await makeRedisConnection(session, { stream: reader.stream, maxLen: 1000 });
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['delivered'] });
    const length = await admin.xLen(reader.stream);
    assert.ok(length >= 1000 && length < 3001, `the stream was not trimmed to about 1000 entries: ${length}`);
    const url = (entry?.attempts[0]?.request as { url?: string } | undefined)?.url;
    assert.equal(
      url,
      `redis://127.0.0.1:6379/0 stream=${reader.stream} maxLen~1000`,
      'the attempt does not show the trim',
    );
    for (const maxLen of [999, 100_000_001, 1.5]) {
      const r = await h.request<{ code: string }>('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'redis', displayName: 'stream', url: REDIS_URL, stream: 's', maxLen },
      });
      assert.equal(r.status, 400, `maxLen ${maxLen} answered ${r.status}`);
    }
  });

  test("the URL's database is the one written to; one Redis does not have fails in its words", async (t) => {
    const stream = `hubgate-test-db1-${Date.now()}`;
    const admin = await redisAdmin(t, async (client) => {
      await client.sendCommand(['SELECT', '1']);
      await client.del(stream);
    });
    const { session } = await makeSignedInTenant(h);
    const inOne = await makeRedisConnection(session, { url: 'redis://127.0.0.1:6379/1', stream });
    const missing = await makeRedisConnection(session, { url: 'redis://127.0.0.1:6379/99999', stream });
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    await waitForDeliveries(h, session, inOne.id, { statuses: ['delivered'] });
    assert.equal(await admin.exists(stream), 0, 'the entry went to database 0');
    await admin.sendCommand(['SELECT', '1']);
    assert.equal(await admin.xLen(stream), 1, 'the entry is not in database 1');
    const [entry] = await waitForDeliveries(h, session, missing.id, { statuses: ['failed'] });
    assert.equal(entry?.attempts[0]?.error, 'connection_error', 'a missing database is not a failed attempt');
    assert.match(
      String(entry?.attempts[0]?.errorDetail),
      /^the broker refused the connection: ERR DB index is out of range/,
      'the attempt does not say the database does not exist',
    );
  });

  test('a test event is appended like any event, and a per-key connection keeps publish order', async (t) => {
    const reader = await streamReader(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeRedisConnection(session, { stream: reader.stream, ordering: 'per-key' });
    const tested = await h.request<{ eventId: string }>('POST', `${CONNECTIONS}/${connection.id}/test`, {
      session,
      body: {},
    });
    assert.equal(tested.status, 202, tested.text);
    const [first] = await reader.waitFor(1);
    assert.equal(first?.field('webhook-id'), tested.body.eventId, 'the test event was not appended');
    const events = Array.from({ length: 20 }, (_, n) => ({
      type: 'order.paid',
      data: { n },
      orderingKey: 'A',
    }));
    const batch = await h.request('POST', '/api/v1/integrations/events/batch', { session, body: { events } });
    assert.equal(batch.status, 202, batch.text);
    const entries = await reader.waitFor(21);
    assert.deepEqual(
      entries.slice(1).map((e) => (dataOf(e.field('body')) as { n: number }).n),
      events.map((e) => e.data.n),
      'entries of one ordering key reached the stream out of publish order',
    );
  });

  test('an edit of the stream takes effect at the next publish; once revoked, nothing is appended', async (t) => {
    const before = await streamReader(t);
    const afterEdit = await streamReader(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeRedisConnection(session, { stream: before.stream });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await before.waitFor(1);
    const edited = await h.request('PATCH', `${CONNECTIONS}/${connection.id}`, {
      session,
      body: { stream: afterEdit.stream },
    });
    assert.equal(edited.status, 200, edited.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const [moved] = await afterEdit.waitFor(1);
    assert.deepEqual(
      dataOf(moved?.field('body')),
      { n: 2 },
      'the event after the edit did not go to the new stream',
    );
    const revoked = await h.request('POST', `${CONNECTIONS}/${connection.id}/revoke`, { session, body: {} });
    assert.equal(revoked.status, 200, revoked.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 3 } }, { status: 202 });
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'delivered'] });
    const total = (await before.entries()).length + (await afterEdit.entries()).length;
    assert.equal(total, 2, 'a revoked connection appended');
  });

  test('paused, nothing is appended and the session is closed within 5 s; resumed with replay, the skipped event is', async (t) => {
    const reader = await streamReader(t);
    const password = 'pause-test-pw';
    // A user of its own, so the hub's connection is the one CLIENT LIST shows with this user.
    const username = await redisUser(t, ['on', `>${password}`, `~${reader.stream}`, '+xadd']);
    const admin = await redisAdmin(t);
    const sessionsOfUser = async () =>
      String(await admin.sendCommand(['CLIENT', 'LIST']))
        .split('\n')
        .filter((line) => line.includes(` user=${username} `)).length;
    const { session } = await makeSignedInTenant(h);
    const connection = await makeRedisConnection(session, { stream: reader.stream }, { username, password });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 0 } });
    await reader.waitFor(1);
    assert.equal(await sessionsOfUser(), 1, 'the hub does not hold one connection to Redis');
    const paused = await h.request('POST', `${CONNECTIONS}/${connection.id}/pause`, { session, body: {} });
    assert.equal(paused.status, 200, paused.text);
    const pausedAt = Date.now();
    await waitUntil(async () => (await sessionsOfUser()) === 0, {
      message: "the hub's connection to Redis to close after the pause",
      timeoutMs: 6_000,
    });
    assert.ok(Date.now() - pausedAt <= 5_500, 'the connection to Redis outlived the pause by more than 5 s');
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'skipped'] });
    assert.equal((await reader.entries()).length, 1, 'a paused connection appended');
    const resumed = await h.request('POST', `${CONNECTIONS}/${connection.id}/resume`, {
      session,
      body: { replaySkipped: true },
    });
    assert.equal(resumed.status, 200, resumed.text);
    const [, replayed] = await reader.waitFor(2);
    assert.deepEqual(
      dataOf(replayed?.field('body')),
      { n: 1 },
      'the replayed entry is not the skipped event',
    );
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'delivered'] });
  });

  test('a URL with a user or password in it, or another scheme, is refused with 400; a username needs a password', async () => {
    const { session } = await makeSignedInTenant(h);
    for (const url of [
      'redis://default:hunter2@127.0.0.1:6379/0',
      'redis://:hunter2@127.0.0.1:6379',
      'rediss://someone@127.0.0.1/',
      'redis://127.0.0.1:6379/zero',
      'http://127.0.0.1/',
    ]) {
      const r = await h.request<{ code: string }>('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'redis', displayName: 'stream', url, stream: 's' },
      });
      assert.equal(r.status, 400, `${url} answered ${r.status}`);
      assert.equal(r.body.code, 'validation_failed', `${url} is not refused as invalid`);
      assert.ok(!r.text.includes('hunter2'), 'the refusal quotes the password');
    }
    for (const stream of ['', 'x'.repeat(201)]) {
      const r = await h.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'redis', displayName: 'stream', url: REDIS_URL, stream },
      });
      assert.equal(r.status, 400, `a stream of ${stream.length} characters answered ${r.status}`);
    }
    const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
      session,
      body: { connectorKey: 'redis', displayName: 'stream', url: 'rediss://redis.example.com', stream: 's' },
    });
    assert.equal(created.status, 201, created.text);
    const bound = await h.request<{ code: string }>('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
      session,
      body: { username: 'someone' },
    });
    assert.equal(bound.status, 400, `a username without a password answered ${bound.status}`);
    assert.equal(
      bound.body.code,
      'validation_failed',
      'a username without a password is not refused as invalid',
    );
  });
});
