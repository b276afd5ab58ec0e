import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import {
  MOSQUITTO_URL,
  mosquittoSkipReason,
  startSecuredMosquitto,
  startSubscriber,
  type Received,
} from '../helpers/mosquitto.js';

// The machine's Mosquitto on 127.0.0.1:1883 (anonymous), opened by DELIVERY_ALLOWED_CIDRS; plaintext
// mqtt: by DELIVERY_ALLOW_HTTP. Each test subscribes under a topic of its own; refusals come from a
// Mosquitto of the test's own with a password file and an ACL.
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

async function makeMqttConnection(
  session: TestSession,
  config: Record<string, unknown>,
  credentials: Record<string, string> = {},
): Promise<{ id: string; secret: string }> {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'mqtt', displayName: 'mosquitto', url: MOSQUITTO_URL, ...config },
  });
  assert.equal(
    created.status,
    201,
    `creating an mqtt connection answered ${created.status}: ${created.text}`,
  );
  const bound = await h.request<{ credentials: { signingSecret: string } }>(
    'PUT',
    `${CONNECTIONS}/${created.body.id}/credentials`,
    { session, body: credentials },
  );
  assert.equal(bound.status, 200, `binding the mqtt credentials answered ${bound.status}: ${bound.text}`);
  assert.match(bound.body.credentials.signingSecret, /^whsec_/, 'binding generated no signing secret');
  return { id: created.body.id, secret: bound.body.credentials.signingSecret };
}

interface PublishAttempt {
  request: { method: string; url: string; headers: Record<string, string> };
  response: { body: string };
}

const dataOf = (message: Received | undefined) =>
  (JSON.parse(message?.body ?? 'null') as { data: unknown } | null)?.data;

describe('mqtt connector (MQTT 5, Mosquitto)', { skip: await mosquittoSkipReason() }, () => {
  test('an event becomes a signed message acknowledged by PUBACK, and its attempt reads as a publish', async (t) => {
    const subscriber = await startSubscriber(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeMqttConnection(session, { topic: `${subscriber.prefix}/{type}` });
    const published = await publishEvent(h, session, { type: 'order.paid', data: { order: 42 } });
    assert.equal(published.status, 202, published.text);
    const [message] = await subscriber.waitFor(1);
    assert.ok(message, 'the subscriber got no message');
    assert.equal(message.topic, `${subscriber.prefix}/order.paid`, '{type} was not replaced in the topic');
    assert.equal(message.qos, 1, 'the message was not published at QoS 1');
    assert.equal(message.contentType, 'application/json', 'the message is not marked as JSON');
    assert.equal(
      message.userProperties['content-type'],
      'application/json',
      'content-type is not a user property',
    );
    const verified = new Webhook(connection.secret).verify(message.body, {
      'webhook-id': String(message.userProperties['webhook-id']),
      'webhook-timestamp': String(message.userProperties['webhook-timestamp']),
      'webhook-signature': String(message.userProperties['webhook-signature']),
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
    const { request, response } = attempt as unknown as PublishAttempt;
    assert.equal(request.method, 'PUBLISH', 'the attempt does not read as a publish');
    assert.equal(
      request.url,
      `mqtt://127.0.0.1:1883 topic=${subscriber.prefix}/order.paid qos=1`,
      'the attempt does not name the broker and the topic',
    );
    assert.equal(
      request.headers['webhook-id'],
      published.body.id,
      'the attempt does not show the properties sent',
    );
    assert.equal(response.body, 'PUBACK success', 'the attempt does not say the broker acknowledged it');
  });

  test('at QoS 2 the message is delivered on PUBCOMP', async (t) => {
    const subscriber = await startSubscriber(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeMqttConnection(session, { topic: `${subscriber.prefix}/orders`, qos: 2 });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    const [message] = await subscriber.waitFor(1);
    assert.equal(message?.qos, 2, 'the message was not published at QoS 2');
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['delivered'] });
    const { request, response } = entry!.attempts[0] as unknown as PublishAttempt;
    assert.match(request.url, / qos=2$/, 'the attempt does not show QoS 2');
    assert.equal(response.body, 'PUBCOMP success', 'the attempt does not say the broker completed it');
  });

  test('a topic the broker refuses (PUBACK 0x87 not authorized) fails every attempt in words', async (t) => {
    const broker = await startSecuredMosquitto(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeMqttConnection(
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
    const edited = await h.request('PATCH', `${CONNECTIONS}/${connection.id}`, {
      session,
      body: { topic: `${broker.allowedPrefix}/{type}` },
    });
    assert.equal(edited.status, 200, edited.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const [message] = await subscriber.waitFor(1);
    assert.deepEqual(dataOf(message), { n: 2 }, 'the event after the edit did not reach the allowed topic');
    assertNoLeak(h, [broker.password]);
  });

  test('a broker that refuses the credentials fails the attempt in words, and the password stays unseen', async (t) => {
    const broker = await startSecuredMosquitto(t);
    const { session } = await makeSignedInTenant(h);
    const password = `wrong-${Date.now()}-pw`;
    const connection = await makeMqttConnection(
      session,
      { url: broker.url, topic: `${broker.allowedPrefix}/{type}` },
      { username: broker.username, password },
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, connection.id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    assert.equal(entry.attemptCount, 3, 'a refused login was not retried on schedule');
    const [attempt] = entry.attempts;
    assert.equal(attempt?.error, 'connection_error', 'a refused login is not a failed attempt');
    assert.match(
      String(attempt?.errorDetail),
      /^the broker refused the credentials: CONNACK 0x8[67] /,
      'the attempt does not say the broker refused the credentials',
    );
    assertNoLeak(h, [password]);
    // Re-bound with the right password, the next event is delivered.
    const rebound = await h.request('PUT', `${CONNECTIONS}/${connection.id}/credentials`, {
      session,
      body: { username: broker.username, password: broker.password },
    });
    assert.equal(rebound.status, 200, rebound.text);
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'failed'] });
    assertNoLeak(h, [password, broker.password]);
  });

  test('a test event is published like any event, and a per-key connection keeps publish order', async (t) => {
    const subscriber = await startSubscriber(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeMqttConnection(session, {
      topic: `${subscriber.prefix}/k`,
      ordering: 'per-key',
    });
    const tested = await h.request<{ eventId: string }>('POST', `${CONNECTIONS}/${connection.id}/test`, {
      session,
      body: {},
    });
    assert.equal(tested.status, 202, tested.text);
    const [first] = await subscriber.waitFor(1);
    assert.equal(
      first?.userProperties['webhook-id'],
      tested.body.eventId,
      'the test event was not published',
    );
    const events = Array.from({ length: 20 }, (_, n) => ({
      type: 'order.paid',
      data: { n },
      orderingKey: 'A',
    }));
    const batch = await h.request('POST', '/api/v1/integrations/events/batch', { session, body: { events } });
    assert.equal(batch.status, 202, batch.text);
    const messages = await subscriber.waitFor(21);
    assert.deepEqual(
      messages.slice(1).map((m) => (dataOf(m) as { n: number }).n),
      events.map((e) => e.data.n),
      'messages of one ordering key reached the broker out of publish order',
    );
  });

  test('paused, nothing is published; resumed with replay, the skipped event is', async (t) => {
    const subscriber = await startSubscriber(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeMqttConnection(session, { topic: `${subscriber.prefix}/k` });
    const paused = await h.request('POST', `${CONNECTIONS}/${connection.id}/pause`, { session, body: {} });
    assert.equal(paused.status, 200, paused.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await waitForDeliveries(h, session, connection.id, { statuses: ['skipped'] });
    assert.equal(subscriber.received.length, 0, 'a paused connection published');
    const resumed = await h.request('POST', `${CONNECTIONS}/${connection.id}/resume`, {
      session,
      body: { replaySkipped: true },
    });
    assert.equal(resumed.status, 200, resumed.text);
    const [message] = await subscriber.waitFor(1);
    assert.deepEqual(dataOf(message), { n: 1 }, 'the replayed message is not the skipped event');
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered'] });
  });

  test('an edit of the topic takes effect at the next publish; once revoked, nothing is published', async (t) => {
    const subscriber = await startSubscriber(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeMqttConnection(session, { topic: `${subscriber.prefix}/before` });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await subscriber.waitFor(1);
    const edited = await h.request('PATCH', `${CONNECTIONS}/${connection.id}`, {
      session,
      body: { topic: `${subscriber.prefix}/after` },
    });
    assert.equal(edited.status, 200, edited.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const [, moved] = await subscriber.waitFor(2);
    assert.equal(
      moved?.topic,
      `${subscriber.prefix}/after`,
      'the event after the edit did not go to the new topic',
    );
    const revoked = await h.request('POST', `${CONNECTIONS}/${connection.id}/revoke`, { session, body: {} });
    assert.equal(revoked.status, 200, revoked.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 3 } }, { status: 202 });
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'delivered'] });
    assert.equal(subscriber.received.length, 2, 'a revoked connection published');
  });

  test('a URL with a user or password, a topic with a wildcard, or a QoS other than 1 or 2 is refused with 400', async () => {
    const { session } = await makeSignedInTenant(h);
    const bodies: Array<Record<string, unknown>> = [
      { url: 'mqtt://user:secret-pw@127.0.0.1:1883', topic: 't' },
      { url: 'mqtt://user@127.0.0.1', topic: 't' },
      { url: 'http://127.0.0.1/', topic: 't' },
      { url: 'mqtt://127.0.0.1:1883/path', topic: 't' },
      { url: MOSQUITTO_URL, topic: 'orders/+/paid' },
      { url: MOSQUITTO_URL, topic: 'orders/#' },
      { url: MOSQUITTO_URL, topic: '' },
      { url: MOSQUITTO_URL, topic: 'x'.repeat(201) },
      { url: MOSQUITTO_URL, topic: 't', qos: 0 },
    ];
    for (const body of bodies) {
      const r = await h.request<{ code: string }>('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'mqtt', displayName: 'mosquitto', ...body },
      });
      assert.equal(r.status, 400, `${JSON.stringify(body)} answered ${r.status}`);
      assert.equal(r.body.code, 'validation_failed', `${JSON.stringify(body)} is not refused as invalid`);
      assert.ok(!r.text.includes('secret-pw'), 'the refusal quotes the credentials');
    }
  });
});
