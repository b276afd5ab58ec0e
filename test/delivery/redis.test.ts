import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brokerSuite } from '../helpers/broker-suite.js';
import { BROKERS } from '../helpers/brokers.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { REDIS_URL, redisAdmin, redisUser, streamReader } from '../helpers/redis.js';

// The machine's Redis on 127.0.0.1:6379 (no password; other people's tests use it too), opened by
// DELIVERY_ALLOWED_CIDRS; plaintext redis: by DELIVERY_ALLOW_HTTP. Each test has its own stream (and
// ACL user), deleted after it. What every broker does is in broker-suite.ts (there a Redis connection
// logs in as an ACL user of the test's own); here, what only Redis has: refusals of XADD, MAXLEN,
// and the URL's database.

await brokerSuite(BROKERS.redis, ({ harness, connect }) => {
  test("a key of another type (WRONGTYPE) and a key the ACL forbids (NOPERM) fail in Redis's words, every retry", async (t) => {
    const h = harness();
    const { session } = await makeSignedInTenant(h);
    const reader = await streamReader(t);
    const admin = await redisAdmin(t, (client) => client.del(reader.stream));
    await admin.set(reader.stream, 'not a stream');
    const wrongType = await connect(session, { stream: reader.stream });
    const other = await streamReader(t);
    const password = 'acl-test-pw';
    const username = await redisUser(t, ['on', `>${password}`, '~somewhere-else', '+xadd']);
    const forbidden = await connect(session, { stream: other.stream }, { username, password });
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
    const h = harness();
    const reader = await streamReader(t);
    const admin = await redisAdmin(t);
    for (let n = 0; n < 3000; n += 500) {
      const batch = admin.multi();
      for (let i = 0; i < 500; i++) batch.addCommand(['XADD', reader.stream, '*', 'n', String(n + i)]);
      await batch.exec();
    }
    const { session } = await makeSignedInTenant(h);
    const connection = await connect(session, { stream: reader.stream, maxLen: 1000 });
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
      const r = await h.request<{ code: string }>('POST', '/api/v1/integrations/connections', {
        session,
        body: { connectorKey: 'redis', displayName: 'stream', url: REDIS_URL, stream: 's', maxLen },
      });
      assert.equal(r.status, 400, `maxLen ${maxLen} answered ${r.status}`);
    }
  });

  test("the URL's database is the one written to; one Redis does not have fails in its words", async (t) => {
    const h = harness();
    const stream = `hubgate-test-db1-${Date.now()}`;
    const admin = await redisAdmin(t, async (client) => {
      await client.sendCommand(['SELECT', '1']);
      await client.del(stream);
    });
    const { session } = await makeSignedInTenant(h);
    const inOne = await connect(session, { url: 'redis://127.0.0.1:6379/1', stream });
    const missing = await connect(session, { url: 'redis://127.0.0.1:6379/99999', stream });
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
});
