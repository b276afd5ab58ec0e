import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brokerSuite } from '../helpers/broker-suite.js';
import { BROKERS } from '../helpers/brokers.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startSecuredMosquitto, startSubscriber, type Received } from '../helpers/mosquitto.js';

// The machine's Mosquitto on 127.0.0.1:1883 (anonymous), opened by DELIVERY_ALLOWED_CIDRS; plaintext
// mqtt: by DELIVERY_ALLOW_HTTP. Each test subscribes under a topic of its own; refusals come from a
// Mosquitto of the test's own with a password file and an ACL. What every broker does is in
// broker-suite.ts; here, what only MQTT has: QoS 2, and a topic the broker's ACL refuses.

interface PublishAttempt {
  request: { method: string; url: string; headers: Record<string, string> };
  response: { body: string };
}

const dataOf = (message: Received | undefined) =>
  (JSON.parse(message?.body ?? 'null') as { data: unknown } | null)?.data;

await brokerSuite(BROKERS.mqtt, ({ harness, connect }) => {
  test('at QoS 2 the message is delivered on PUBCOMP', async (t) => {
    const h = harness();
    const subscriber = await startSubscriber(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await connect(session, { topic: `${subscriber.prefix}/orders`, qos: 2 });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    const [message] = await subscriber.waitFor(1);
    assert.equal(message?.qos, 2, 'the message was not published at QoS 2');
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['delivered'] });
    const { request, response } = entry!.attempts[0] as unknown as PublishAttempt;
    assert.match(request.url, / qos=2$/, 'the attempt does not show QoS 2');
    assert.equal(response.body, 'PUBCOMP success', 'the attempt does not say the broker completed it');
  });

  test('a topic the broker refuses (PUBACK 0x87 not authorized) fails every attempt in words', async (t) => {
    const h = harness();
    const broker = await startSecuredMosquitto(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await connect(
      session,
      { url: broker.url, topic: 'denied/{type}' },
      { username: broker.username, password: broker.password },
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attemptCount, 3, 'the refused message was not retried on schedule');
    for (const attempt of entry.attempts) {
      assert.equal(attempt.error, 'connection_error', 'a refused message is not a failed attempt');
      assert.equal(
        attempt.errorDetail,
        'the broker refused the message: PUBACK 0x87 Not authorized',
        'the attempt does not say what the broker answered',
      );
    }
    // The same login publishes where the ACL lets it: an edit of the topic, and the next event is delivered.
    const subscriber = await startSubscriber(t, { ...broker, prefix: broker.allowedPrefix });
    const edited = await h.request('PATCH', `/api/v1/integrations/connections/${connection.id}`, {
      session,
      body: { topic: `${broker.allowedPrefix}/{type}` },
    });
    assert.equal(edited.status, 200, edited.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const [message] = await subscriber.waitFor(1);
    assert.deepEqual(dataOf(message), { n: 2 }, 'the event after the edit did not reach the allowed topic');
    assertNoLeak(h, [broker.password]);
  });
});
