import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { publishEvent, waitForDeliveries, type Delivery } from '../helpers/events.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { RABBITMQ_URL, rabbitSkipReason, startConsumer } from '../helpers/rabbitmq.js';

// The machine's RabbitMQ on 127.0.0.1:5672 (guest/guest), opened by DELIVERY_ALLOWED_CIDRS; plaintext
// amqp: by DELIVERY_ALLOW_HTTP. Each test has its own exchange and queue.
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

async function makeAmqpConnection(
  session: TestSession,
  config: Record<string, unknown>,
  credentials: Record<string, string> = { username: 'guest', password: 'guest' },
): Promise<{ id: string; secret: string }> {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'amqp', displayName: 'rabbit', url: RABBITMQ_URL, ...config },
  });
  assert.equal(
    created.status,
    201,
    `creating an amqp connection answered ${created.status}: ${created.text}`,
  );
  const bound = await h.request<{ credentials: { signingSecret: string } }>(
    'PUT',
    `${CONNECTIONS}/${created.body.id}/credentials`,
    { session, body: credentials },
  );
  assert.equal(bound.status, 200, `binding the amqp credentials answered ${bound.status}: ${bound.text}`);
  assert.match(bound.body.credentials.signingSecret, /^whsec_/, 'binding generated no signing secret');
  return { id: created.body.id, secret: bound.body.credentials.signingSecret };
}

const headerOf = (headers: Record<string, unknown> | undefined, name: string) => String(headers?.[name]);

describe('amqp connector (RabbitMQ)', { skip: await rabbitSkipReason() }, () => {
  test('an event becomes a confirmed, persistent, signed message, and its attempt reads as a publish', async (t) => {
    const consumer = await startConsumer(t, 'order.paid');
    const { session } = await makeSignedInTenant(h);
    const connection = await makeAmqpConnection(session, {
      exchange: consumer.exchange,
      routingKey: '{type}',
    });
    const published = await publishEvent(h, session, { type: 'order.paid', data: { order: 42 } });
    assert.equal(published.status, 202, published.text);
    const [message] = await consumer.waitFor(1);
    assert.ok(message, 'the consumer got no message');
    const body = message.content.toString('utf8');
    const { headers, contentType, messageId, type, deliveryMode } = message.properties;
    assert.equal(contentType, 'application/json', 'the message is not marked as JSON');
    assert.equal(messageId, published.body.id, 'the message ID is not the event ID');
    assert.equal(type, 'order.paid', "the message's type is not the event type");
    assert.equal(deliveryMode, 2, 'the message is not persistent');
    const verified = new Webhook(connection.secret).verify(body, {
      'webhook-id': headerOf(headers, 'webhook-id'),
      'webhook-timestamp': headerOf(headers, 'webhook-timestamp'),
      'webhook-signature': headerOf(headers, 'webhook-signature'),
    });
    assert.deepEqual(
      verified,
      { id: published.body.id, type: 'order.paid', timestamp: published.body.createdAt, data: { order: 42 } },
      'the signed message is not the event as published',
    );
    const [entry] = await waitForDeliveries(h, session, connection.id, { settled: 1 });
    assert.equal(entry.status, 'delivered', 'the log does not show the message as delivered');
    const [attempt] = entry.attempts;
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
      `amqp://127.0.0.1:5672/ exchange=${consumer.exchange} routingKey=order.paid`,
      'the attempt does not name the broker and where on it',
    );
    assert.equal(
      request.headers['webhook-id'],
      published.body.id,
      'the attempt does not show the headers sent',
    );
    assert.equal(response.body, 'confirmed', 'the attempt does not say the broker confirmed');
    assertNoLeak(h, ['guest:guest']);
  });

  test('a message no queue takes is returned: a failed attempt that says so, retried', async (t) => {
    const consumer = await startConsumer(t); // nothing bound
    const { session } = await makeSignedInTenant(h);
    const connection = await makeAmqpConnection(session, {
      exchange: consumer.exchange,
      routingKey: 'nowhere',
    });
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
    const { session } = await makeSignedInTenant(h);
    const connection = await makeAmqpConnection(session, {
      exchange: `hubgate-test-missing-${Date.now()}`,
      routingKey: 'k',
    });
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

  test('a broker that refuses the credentials fails the attempt in words, and the password stays unseen', async (t) => {
    const consumer = await startConsumer(t, 'k');
    const { session } = await makeSignedInTenant(h);
    const password = `wrong-${Date.now()}-pw`;
    const connection = await makeAmqpConnection(
      session,
      { exchange: consumer.exchange, routingKey: 'k' },
      { username: 'guest', password },
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    const attempt: Delivery['attempts'][number] | undefined = entry.attempts[0];
    assert.equal(attempt?.error, 'connection_error', 'a refused login is not a failed attempt');
    assert.match(
      String(attempt?.errorDetail),
      /the broker refused the credentials/,
      'the attempt does not say the broker refused the credentials',
    );
    assertNoLeak(h, [password]);
  });

  test('a test event is published like any event, and a per-key connection keeps publish order', async (t) => {
    const consumer = await startConsumer(t, 'k');
    const { session } = await makeSignedInTenant(h);
    const connection = await makeAmqpConnection(session, {
      exchange: consumer.exchange,
      routingKey: 'k',
      ordering: 'per-key',
    });
    const tested = await h.request<{ eventId: string }>('POST', `${CONNECTIONS}/${connection.id}/test`, {
      session,
      body: {},
    });
    assert.equal(tested.status, 202, tested.text);
    const [first] = await consumer.waitFor(1);
    assert.equal(first?.properties.messageId, tested.body.eventId, 'the test event was not published');
    const events = Array.from({ length: 20 }, (_, n) => ({
      type: 'order.paid',
      data: { n },
      orderingKey: 'A',
    }));
    const batch = await h.request('POST', '/api/v1/integrations/events/batch', { session, body: { events } });
    assert.equal(batch.status, 202, batch.text);
    const messages = await consumer.waitFor(21);
    assert.deepEqual(
      messages
        .slice(1)
        .map((m) => (JSON.parse(m.content.toString('utf8')) as { data: { n: number } }).data.n),
      events.map((e) => e.data.n),
      'messages of one ordering key reached the broker out of publish order',
    );
  });

  test('an edit of the exchange takes effect at the next publish; once revoked, nothing is published', async (t) => {
    const before = await startConsumer(t, 'k');
    const afterEdit = await startConsumer(t, 'k');
    const { session } = await makeSignedInTenant(h);
    const connection = await makeAmqpConnection(session, { exchange: before.exchange, routingKey: 'k' });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await before.waitFor(1);
    const edited = await h.request('PATCH', `${CONNECTIONS}/${connection.id}`, {
      session,
      body: { exchange: afterEdit.exchange },
    });
    assert.equal(edited.status, 200, edited.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const [moved] = await afterEdit.waitFor(1);
    assert.deepEqual(
      JSON.parse(moved!.content.toString('utf8')).data,
      { n: 2 },
      'the event after the edit did not go to the new exchange',
    );
    const revoked = await h.request('POST', `${CONNECTIONS}/${connection.id}/revoke`, { session, body: {} });
    assert.equal(revoked.status, 200, revoked.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 3 } }, { status: 202 });
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'delivered'] });
    assert.equal(before.received.length + afterEdit.received.length, 2, 'a revoked connection published');
  });

  test('a URL with a user or password in it is refused with 400', async () => {
    const { session } = await makeSignedInTenant(h);
    for (const url of [
      'amqp://guest:guest@127.0.0.1:5672/',
      'amqp://guest@127.0.0.1/',
      'http://127.0.0.1/',
    ]) {
      const r = await h.request<{ code: string }>('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'amqp', displayName: 'rabbit', url, routingKey: 'k' },
      });
      assert.equal(r.status, 400, `${url} answered ${r.status}`);
      assert.equal(r.body.code, 'validation_failed', `${url} is not refused as invalid`);
      assert.ok(!r.text.includes('guest:guest'), 'the refusal quotes the credentials');
    }
  });

  test('paused, nothing is published; resumed with replay, the skipped event is', async (t) => {
    const consumer = await startConsumer(t, 'k');
    const { session } = await makeSignedInTenant(h);
    const connection = await makeAmqpConnection(session, { exchange: consumer.exchange, routingKey: 'k' });
    const paused = await h.request('POST', `${CONNECTIONS}/${connection.id}/pause`, { session, body: {} });
    assert.equal(paused.status, 200, paused.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await waitForDeliveries(h, session, connection.id, { statuses: ['skipped'] });
    assert.equal(consumer.received.length, 0, 'a paused connection published');
    const resumed = await h.request('POST', `${CONNECTIONS}/${connection.id}/resume`, {
      session,
      body: { replaySkipped: true },
    });
    assert.equal(resumed.status, 200, resumed.text);
    const [message] = await consumer.waitFor(1);
    assert.deepEqual(
      JSON.parse(message!.content.toString('utf8')).data,
      { n: 1 },
      'the replayed message is not the skipped event',
    );
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered'] });
  });
});
