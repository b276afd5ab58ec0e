import assert from 'node:assert/strict';
import { test } from 'node:test';
import { brokerSuite } from '../helpers/broker-suite.js';
import { BROKERS } from '../helpers/brokers.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startConsumer } from '../helpers/rabbitmq.js';

// The machine's RabbitMQ on 127.0.0.1:5672 (guest/guest), opened by DELIVERY_ALLOWED_CIDRS; plaintext
// amqp: by DELIVERY_ALLOW_HTTP. Each test has its own exchange and queue. What every broker does is in
// broker-suite.ts; here, what only AMQP has: a message no queue takes, an exchange that does not exist.

await brokerSuite(BROKERS.amqp, ({ harness, connect }) => {
  test('a message no queue takes is returned: a failed attempt that says so, retried', async (t) => {
    const h = harness();
    const consumer = await startConsumer(t); // nothing bound
    const { session } = await makeSignedInTenant(h);
    const connection = await connect(
      session,
      { exchange: consumer.exchange, routingKey: 'nowhere' },
      { username: 'guest', password: 'guest' },
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attemptCount, 3, 'the unroutable message was not retried on schedule');
    for (const attempt of entry.attempts) {
      assert.equal(attempt.error, 'connection_error', 'a returned message is not a failed attempt');
      assert.match(
        String(attempt.errorDetail),
        /returned the message as unroutable: 312 NO_ROUTE/,
        'the attempt does not say the message came back unroutable',
      );
    }
    assert.equal(consumer.received.length, 0, 'an unbound exchange delivered something');
  });

  test('an exchange that does not exist fails the attempt with what the broker said, every retry', async () => {
    const h = harness();
    const { session } = await makeSignedInTenant(h);
    const connection = await connect(
      session,
      { exchange: `hubgate-test-missing-${Date.now()}`, routingKey: 'k' },
      { username: 'guest', password: 'guest' },
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attemptCount, 3, 'the attempts to a missing exchange were not retried');
    for (const attempt of entry.attempts) {
      assert.match(
        String(attempt.errorDetail),
        /NOT_FOUND - no exchange/,
        'the attempt does not say the exchange does not exist',
      );
    }
  });
});
