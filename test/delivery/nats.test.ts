import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brokerSuite } from '../helpers/broker-suite.js';
import { BROKERS } from '../helpers/brokers.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { NATS_URL, startAuthNats, startStream } from '../helpers/nats.js';

// The machine's NATS server on 127.0.0.1:4222 (JetStream, no auth), opened by DELIVERY_ALLOWED_CIDRS;
// plaintext nats: by DELIVERY_ALLOW_HTTP. Each test has its own stream. What every broker does is in
// broker-suite.ts; here, what only NATS has: a subject no stream takes, tls:, and a token as a login.

await brokerSuite(BROKERS.nats, ({ harness, connect }) => {
  test('a subject no stream takes fails every attempt in words, and is retried', async () => {
    const h = harness();
    const { session } = await makeSignedInTenant(h);
    const subject = `hubgate.nowhere.${Date.now()}`;
    const connection = await connect(session, { subject });
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attemptCount, 3, 'the attempts to a subject without a stream were not retried');
    for (const attempt of entry.attempts) {
      assert.equal(attempt.error, 'connection_error', 'no stream is not a failed attempt');
      assert.equal(
        attempt.errorDetail,
        `no JetStream stream takes the subject ${subject} (no responders)`,
        'the attempt does not say that no stream takes the subject',
      );
    }
  });

  test('a token is a login: one the server does not take is refused in words, and it goes with no username', async (t) => {
    const h = harness();
    const server = await startAuthNats(t, 'hubgate', `right-${Date.now()}-pw`);
    if (!server) return t.skip('no nats-server binary to start a server with auth');
    const { session } = await makeSignedInTenant(h);
    const token = `token-${Date.now()}-secret`;
    const byToken = await connect(session, { url: server.url, subject: 'orders' }, { token });
    await publishEvent(h, session, { type: 'order.refunded', data: {} });
    const [tokenEntry] = await waitForDeliveries(h, session, byToken.id, { statuses: ['failed'] });
    assert.match(
      String(tokenEntry?.attempts[0]?.errorDetail),
      /the broker refused the credentials/,
      'a refused token is not said to be refused',
    );
    const both = await h.request<{ code: string }>(
      'PUT',
      `/api/v1/integrations/connections/${byToken.id}/credentials`,
      { session, body: { username: 'hubgate', token } },
    );
    assert.equal(both.status, 400, 'a token with a username was bound');
    assertNoLeak(h, [token]);
  });

  test('tls: to a server that offers no TLS fails the attempt in words, and publishes nothing', async (t) => {
    const h = harness();
    const consumer = await startStream(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await connect(session, {
      url: NATS_URL.replace('nats:', 'tls:'),
      subject: `${consumer.prefix}.k`,
    });
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
    assert.equal(
      entry?.attempts[0]?.error,
      'connection_error',
      'TLS that did not happen is not a failed attempt',
    );
    assert.equal(
      entry?.attempts[0]?.errorDetail,
      "server does not support 'tls'",
      'the attempt does not say the server has no TLS',
    );
    assert.equal(consumer.received.length, 0, 'a message went without TLS');
  });
});
