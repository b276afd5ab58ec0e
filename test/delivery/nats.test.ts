import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JsMsg } from '@nats-io/jetstream';
import { Webhook } from 'standardwebhooks';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { NATS_URL, natsSkipReason, startAuthNats, startStream } from '../helpers/nats.js';

// The machine's NATS server on 127.0.0.1:4222 (JetStream, no auth), opened by DELIVERY_ALLOWED_CIDRS;
// plaintext nats: by DELIVERY_ALLOW_HTTP. Each test has its own stream.
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

async function makeNatsConnection(
  session: TestSession,
  config: Record<string, unknown>,
  credentials: Record<string, string> = {},
): Promise<{ id: string; secret: string }> {
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'nats', displayName: 'nats', url: NATS_URL, ...config },
  });
  assert.equal(created.status, 201, `creating a nats connection answered ${created.status}: ${created.text}`);
  const bound = await h.request<{ credentials: { signingSecret: string } }>(
    'PUT',
    `${CONNECTIONS}/${created.body.id}/credentials`,
    { session, body: credentials },
  );
  assert.equal(bound.status, 200, `binding the nats credentials answered ${bound.status}: ${bound.text}`);
  assert.match(bound.body.credentials.signingSecret, /^whsec_/, 'binding generated no signing secret');
  return { id: created.body.id, secret: bound.body.credentials.signingSecret };
}

const headerOf = (message: JsMsg, name: string) => String(message.headers?.get(name));
const dataOf = (message: JsMsg) => (message.json<{ data: unknown }>() as { data: unknown }).data;

describe('nats connector (JetStream)', { skip: await natsSkipReason() }, () => {
  test('an event becomes a signed message a stream acknowledged, and its attempt reads as a publish', async (t) => {
    const consumer = await startStream(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeNatsConnection(session, { subject: `${consumer.prefix}.{type}` });
    const published = await publishEvent(h, session, { type: 'order.paid', data: { order: 42 } });
    assert.equal(published.status, 202, published.text);
    const [message] = await consumer.waitFor(1);
    assert.ok(message, 'the consumer got no message');
    assert.equal(message.subject, `${consumer.prefix}.order.paid`, '{type} was not replaced in the subject');
    assert.equal(headerOf(message, 'content-type'), 'application/json', 'the message is not marked as JSON');
    assert.equal(headerOf(message, 'Nats-Msg-Id'), published.body.id, 'the Nats-Msg-Id is not the event ID');
    const verified = new Webhook(connection.secret).verify(message.string(), {
      'webhook-id': headerOf(message, 'webhook-id'),
      'webhook-timestamp': headerOf(message, 'webhook-timestamp'),
      'webhook-signature': headerOf(message, 'webhook-signature'),
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
      `${NATS_URL} subject=${consumer.prefix}.order.paid`,
      'the attempt does not name the broker and the subject',
    );
    assert.equal(
      request.headers['webhook-id'],
      published.body.id,
      'the attempt does not show the headers sent',
    );
    assert.equal(
      request.headers['Nats-Msg-Id'],
      published.body.id,
      'the attempt does not show the Nats-Msg-Id',
    );
    assert.equal(
      response.body,
      `stream ${consumer.stream} seq 1`,
      'the attempt does not say which stream took it at which sequence',
    );
  });

  test('a subject no stream takes fails every attempt in words, and is retried', async () => {
    const { session } = await makeSignedInTenant(h);
    const subject = `hubgate.nowhere.${Date.now()}`;
    const connection = await makeNatsConnection(session, { subject });
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

  test('a server that refuses the credentials fails the attempt in words; the password stays unseen', async (t) => {
    const password = `right-${Date.now()}-pw`;
    const server = await startAuthNats(t, 'hubgate', password);
    if (!server) return t.skip('no nats-server binary to start a server with auth');
    const { session } = await makeSignedInTenant(h);
    const wrong = `wrong-${Date.now()}-pw`;
    const refused = await makeNatsConnection(
      session,
      { url: server.url, subject: 'orders' },
      { username: 'hubgate', password: wrong },
    );
    await publishEvent(h, session, { type: 'order.paid', data: {} });
    const [entry] = await waitForDeliveries(h, session, refused.id, { statuses: ['failed'] });
    assert.ok(entry, 'the log shows no delivery');
    for (const attempt of entry.attempts) {
      assert.equal(attempt.error, 'connection_error', 'a refused login is not a failed attempt');
      assert.match(
        String(attempt.errorDetail),
        /the broker refused the credentials: .*authorization violation/i,
        'the attempt does not say the broker refused the credentials',
      );
    }
    // With the right password the login is taken: that server has no JetStream, so the attempt fails
    // at the publish, not at the login.
    const accepted = await makeNatsConnection(
      session,
      { url: server.url, subject: 'orders' },
      { username: 'hubgate', password },
    );
    await publishEvent(h, session, { type: 'order.shipped', data: {} });
    const [taken] = await waitForDeliveries(h, session, accepted.id, { statuses: ['failed'] });
    assert.match(
      String(taken?.attempts[0]?.errorDetail),
      /no JetStream stream takes the subject orders/,
      'the right password was not taken',
    );
    // A token is a login too: one the server does not take is refused in the same words.
    const token = `token-${Date.now()}-secret`;
    const byToken = await makeNatsConnection(session, { url: server.url, subject: 'orders' }, { token });
    await publishEvent(h, session, { type: 'order.refunded', data: {} });
    const [tokenEntry] = await waitForDeliveries(h, session, byToken.id, { statuses: ['failed'] });
    assert.match(
      String(tokenEntry?.attempts[0]?.errorDetail),
      /the broker refused the credentials/,
      'a refused token is not said to be refused',
    );
    const both = await h.request<{ code: string }>('PUT', `${CONNECTIONS}/${byToken.id}/credentials`, {
      session,
      body: { username: 'hubgate', token },
    });
    assert.equal(both.status, 400, 'a token with a username was bound');
    assertNoLeak(h, [wrong, password, token]);
  });

  test('tls: to a server that offers no TLS fails the attempt in words, and publishes nothing', async (t) => {
    const consumer = await startStream(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeNatsConnection(session, {
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

  test('a test event is published like any event, and a per-key connection keeps publish order', async (t) => {
    const consumer = await startStream(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeNatsConnection(session, {
      subject: `${consumer.prefix}.k`,
      ordering: 'per-key',
    });
    const tested = await h.request<{ eventId: string }>('POST', `${CONNECTIONS}/${connection.id}/test`, {
      session,
      body: {},
    });
    assert.equal(tested.status, 202, tested.text);
    const [first] = await consumer.waitFor(1);
    assert.equal(
      first && headerOf(first, 'webhook-id'),
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
    const messages = await consumer.waitFor(21);
    assert.deepEqual(
      messages.slice(1).map((m) => (dataOf(m) as { n: number }).n),
      events.map((e) => e.data.n),
      'messages of one ordering key reached the stream out of publish order',
    );
  });

  test('an edit of the subject takes effect at the next publish; once revoked, nothing is published', async (t) => {
    const beforeEdit = await startStream(t);
    const afterEdit = await startStream(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeNatsConnection(session, { subject: `${beforeEdit.prefix}.k` });
    await publishEvent(h, session, { type: 'order.paid', data: { n: 1 } });
    await beforeEdit.waitFor(1);
    const edited = await h.request('PATCH', `${CONNECTIONS}/${connection.id}`, {
      session,
      body: { subject: `${afterEdit.prefix}.k` },
    });
    assert.equal(edited.status, 200, edited.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 2 } });
    const [moved] = await afterEdit.waitFor(1);
    assert.deepEqual(dataOf(moved!), { n: 2 }, 'the event after the edit did not go to the new subject');
    const revoked = await h.request('POST', `${CONNECTIONS}/${connection.id}/revoke`, { session, body: {} });
    assert.equal(revoked.status, 200, revoked.text);
    await publishEvent(h, session, { type: 'order.paid', data: { n: 3 } }, { status: 202 });
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered', 'delivered'] });
    assert.equal(beforeEdit.received.length + afterEdit.received.length, 2, 'a revoked connection published');
  });

  test('a URL with a user, password or token in it, or a subject with a wildcard, is refused with 400', async () => {
    const { session } = await makeSignedInTenant(h);
    const bodies = [
      { url: 'nats://hubgate:s3cret-pw@127.0.0.1:4222', subject: 'orders' },
      { url: 'nats://s3cret-token@127.0.0.1:4222', subject: 'orders' },
      { url: 'http://127.0.0.1:4222', subject: 'orders' },
      { url: NATS_URL, subject: 'orders.*' },
      { url: NATS_URL, subject: 'orders.>' },
      { url: NATS_URL, subject: 'orders..paid' },
      { url: NATS_URL, subject: 'x'.repeat(256) },
    ];
    for (const body of bodies) {
      const r = await h.request<{ code: string }>('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'nats', displayName: 'nats', ...body },
      });
      assert.equal(r.status, 400, `${body.url} ${body.subject} answered ${r.status}`);
      assert.equal(r.body.code, 'validation_failed', `${body.url} ${body.subject} is not refused as invalid`);
      assert.ok(!/s3cret/.test(r.text), 'the refusal quotes the credentials');
    }
  });

  test('paused, nothing is published; resumed with replay, the skipped event is', async (t) => {
    const consumer = await startStream(t);
    const { session } = await makeSignedInTenant(h);
    const connection = await makeNatsConnection(session, { subject: `${consumer.prefix}.k` });
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
    assert.deepEqual(dataOf(message!), { n: 1 }, 'the replayed message is not the skipped event');
    await waitForDeliveries(h, session, connection.id, { statuses: ['delivered'] });
  });
});
