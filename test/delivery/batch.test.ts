import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';

// Receivers listen on 127.0.0.1 only, opened by DELIVERY_ALLOWED_CIDRS; nothing else is contacted.
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
const BATCH = '/api/v1/integrations/events/batch';
const CONNECTIONS = '/api/v1/integrations/connections';

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

const batch = (session: TestSession, events: unknown, headers: Record<string, string> = {}) =>
  h.request('POST', BATCH, { session, body: { events }, headers });

async function deliveriesOf(session: TestSession, connectionId: string): Promise<{ eventId: string }[]> {
  const r = await h.request('GET', `${CONNECTIONS}/${connectionId}/events?limit=100`, { session });
  assert.equal(r.status, 200, r.text);
  return r.body.data;
}

describe('POST /api/v1/integrations/events/batch', () => {
  test('each event as if published alone, answers in order; the receiver gets every one', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver(t);
    const hook = await makeWebhookConnection(h, session, receiver.url(), { eventTypes: ['order.*'] });
    const events = [
      { type: 'order.paid', data: { n: 1 } },
      { type: 'user.created', data: {} },
      { type: 'order.shipped', data: { n: 2 } },
    ];
    const r = await batch(session, events);
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.data.length, 3, 'the batch answer has other than one item per event');
    assert.deepEqual(
      r.body.data.map((item: { type: string; deliveries: number }) => [item.type, item.deliveries]),
      [
        ['order.paid', 1],
        ['user.created', 0],
        ['order.shipped', 1],
      ],
      'the batch answer is not in order, or fans out other than each event alone would',
    );
    for (const item of r.body.data)
      assert.match(item.id, /^evt_/, `a batch item is not an event ID: ${JSON.stringify(item)}`);
    const arrived = await receiver.waitFor(2);
    const ids = arrived.map((a) => JSON.parse(a.body).id).sort();
    assert.deepEqual(
      ids,
      [r.body.data[0].id, r.body.data[2].id].sort(),
      'the receiver got other events than the two order events',
    );
    assert.equal(
      (await deliveriesOf(session, hook.id)).length,
      2,
      'the log shows other than the two order events',
    );
  });

  test('an event refused on its own is that item’s error; the others are published', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver(t);
    const hook = await makeWebhookConnection(h, session, receiver.url());
    const r = await batch(session, [
      { type: 'a.ok', data: {} },
      { type: 'Not A Type', data: {} },
      { type: 'a.b', data: [1] },
      { type: 'a.b', data: {}, extra: true },
      'not an object',
      { type: 'a.big', data: { blob: 'x'.repeat(262_200) } },
      { type: 'a.ok2', data: {} },
    ]);
    assert.equal(r.status, 202, r.text);
    const [ok, badType, badData, unknown, notObject, tooBig, ok2] = r.body.data;
    assert.match(ok.id, /^evt_/, 'the first valid event of a mixed batch is not published');
    assert.match(ok2.id, /^evt_/, 'the last valid event of a mixed batch is not published');
    for (const [item, path] of [
      [badType, 'events.1.type'],
      [badData, 'events.2.data'],
      [unknown, 'events.3.extra'],
    ] as const) {
      assert.equal(item.error.status, 400, JSON.stringify(item));
      assert.equal(
        item.error.code,
        'validation_failed',
        `${path}: a bad event is refused with another code than validation_failed`,
      );
      assert.ok(item.error.detail.startsWith(path), item.error.detail);
    }
    assert.equal(
      notObject.error.code,
      'validation_failed',
      'a batch item that is not an object is refused with another code than validation_failed',
    );
    assert.deepEqual(
      { status: tooBig.error.status, code: tooBig.error.code },
      { status: 413, code: 'payload_too_large' },
      'an event over 256 KiB in a batch is not refused with 413 payload_too_large',
    );
    const logged = (await deliveriesOf(session, hook.id)).map((d) => d.eventId).sort();
    assert.deepEqual(
      logged,
      [ok.id, ok2.id].sort(),
      'refused batch items were delivered, or valid ones were not',
    );
  });

  test('idempotency keys work per event, across batches and single publishes', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver(t);
    const hook = await makeWebhookConnection(h, session, receiver.url());
    const first = await batch(session, [
      { type: 'order.paid', data: { n: 1 }, idempotencyKey: 'order-1' },
      // The same key and body in the same batch: the first's answer, no second fan-out.
      { type: 'order.paid', data: { n: 1 }, idempotencyKey: 'order-1' },
      // The same key, another body: a conflict for this item only.
      { type: 'order.paid', data: { n: 2 }, idempotencyKey: 'order-1' },
    ]);
    assert.equal(first.status, 202, first.text);
    const [a, b, c] = first.body.data;
    assert.deepEqual(b, a, 'a repeated key and body in one batch does not answer the first event');
    assert.deepEqual(
      c.error.status,
      409,
      'the same key with another body in one batch is not refused with 409',
    );
    assert.equal(c.error.code, 'conflict', 'the reused key is refused with another code than conflict');
    // A single publish with that key answers the same event.
    const single = await h.request('POST', '/api/v1/integrations/events', {
      session,
      body: { type: 'order.paid', data: { n: 1 } },
      headers: { 'idempotency-key': 'order-1' },
    });
    assert.deepEqual(single.body, a, "a single publish with a batch event's key does not answer that event");
    await receiver.waitFor(1);
    assert.equal((await deliveriesOf(session, hook.id)).length, 1, 'a repeated key fans out again');
  });

  test('a malformed envelope is 400 for the whole batch and publishes nothing', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver(t);
    const hook = await makeWebhookConnection(h, session, receiver.url());
    const one = { type: 'a.b', data: {} };
    for (const body of [
      {},
      { events: [] },
      { events: Array.from({ length: 101 }, () => one) },
      { events: one },
      { events: [one], extra: 1 },
    ]) {
      const r = await h.request('POST', BATCH, { session, body });
      assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 60)}: ${r.text}`);
      assert.equal(
        r.body.code,
        'validation_failed',
        'a malformed batch is refused with another code than validation_failed',
      );
    }
    const huge = await batch(
      session,
      Array.from({ length: 5 }, () => ({ type: 'a.b', data: { blob: 'x'.repeat(250_000) } })),
    );
    assert.equal(huge.status, 413, 'the body is at most 1 MiB');
    assert.equal((await deliveriesOf(session, hook.id)).length, 0, 'a refused batch published events');
    // 100 is allowed.
    const hundred = await batch(
      session,
      Array.from({ length: 100 }, () => one),
    );
    assert.equal(hundred.status, 202, hundred.text);
    assert.equal(hundred.body.data.length, 100, 'a batch of 100 does not answer 100 items');
  });

  test('is on the automation allowlist with integrations:OPERATOR; READER is refused', async () => {
    const { session } = await makeSignedInTenant(h);
    const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const operator = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const body = { events: [{ type: 'a.b', data: {} }] };
    const denied = await h.request('POST', BATCH, { token: reader.secret, body });
    assert.equal(denied.status, 403, 'a READER key can publish a batch');
    assert.equal(
      denied.body.code,
      'insufficient_scope',
      'a READER key is refused with another code than insufficient_scope',
    );
    const ok = await h.request('POST', BATCH, { token: operator.secret, body });
    assert.equal(ok.status, 202, ok.text);
    assert.equal(ok.body.data[0].deliveries, 0, 'a batch event fans out though the tenant has no connection');
  });
});
