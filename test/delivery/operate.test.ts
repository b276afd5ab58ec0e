import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { publishEvent, waitForDeliveries, type Delivery } from '../helpers/events.js';
import {
  assertNoLeak,
  makeKey,
  makeSignedInTenant,
  makeUser,
  makeWebhookConnection,
  signIn,
} from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import {
  as,
  auditOf,
  bindCredentials,
  CONNECTIONS,
  createConnection,
  firingAlerts,
  logOf,
  operate,
  patchConnection,
  pause,
  readConnection,
  resume,
  webhookHeaders,
  type OperatedDelivery,
} from '../helpers/operate.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// docs/api/events.md, the deliveries' side: recover, test events, the automatic pause and the throttle.
// Receivers listen on 127.0.0.1 only, opened by DELIVERY_ALLOWED_CIDRS; nothing else is contacted.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  // Three attempts, at once: a delivery to a failing receiver is `failed` within milliseconds.
  DELIVERY_RETRY_SCHEDULE: '0,0',
  DELIVERY_TIMEOUT_MS: '5000',
  // The log is polled often, and a frozen clock keeps every request in one rate-limit window.
  RATE_LIMIT_PER_MINUTE: '1000000',
};
const DAY_MS = 86_400_000;

let h: Harness;
const neverShown: string[] = [];
const shownOnce: string[] = [];
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

async function hook(on: Harness, session: TestSession, url: string, extra: Record<string, unknown> = {}) {
  const made = await makeWebhookConnection(on, session, url, extra);
  if (on === h) shownOnce.push(made.secret);
  return made;
}

/** Waits until the delivery of `eventId` to `connectionId` is as `wanted` says, and answers it. */
async function deliveryOf(
  on: Harness,
  session: TestSession,
  connectionId: string,
  eventId: string,
  wanted: (d: Delivery) => boolean,
  message: string,
): Promise<OperatedDelivery> {
  const log = await waitForDeliveries(
    on,
    session,
    connectionId,
    (ds) => ds.some((d) => d.eventId === eventId && wanted(d)),
    { message },
  );
  return log.find((d) => d.eventId === eventId)!;
}

const failed = (d: Delivery) => d.status === 'failed';
const delivered = (d: Delivery) => d.status === 'delivered';

/**
 * The worst window of N whole seconds, or null when every window holds at most perSecond × (N + 1 +
 * slack). `slack` seconds allow for the time from an attempt's start to its arrival at the receiver.
 */
function overThrottle(times: number[], perSecond: number, slack = 0): string | null {
  const seconds = times.map((t) => Math.floor(t / 1000));
  const first = Math.min(...seconds);
  const last = Math.max(...seconds);
  for (let n = 1; n <= last - first + 1; n++) {
    for (let k = first; k <= last; k++) {
      const count = seconds.filter((s) => s >= k && s < k + n).length;
      if (count > perSecond * (n + 1 + slack))
        return `${count} in the ${n} whole second(s) from ${new Date(k * 1000).toISOString()}`;
    }
  }
  return null;
}

describe('recover', () => {
  test('failed deliveries created in [since, until) go back to pending: same IDs, attempts kept and numbered on; audited', async (t) => {
    let healthy = false;
    const receiver = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = healthy ? 200 : 500;
      res.end();
    });
    const { session } = await makeSignedInTenant(h);
    const w = await hook(h, session, receiver.url());
    // A second connection of the same tenant, failing the same events: recover must not touch it.
    const sibling = await hook(h, session, receiver.url('/sibling'));
    const made: OperatedDelivery[] = [];
    for (let i = 1; i <= 3; i++) {
      const e = await publishEvent(h, session, { type: `order.e${i}` });
      made.push(await deliveryOf(h, session, w.id, e.body.id, failed, `delivery ${i} failing for good`));
      await deliveryOf(h, session, sibling.id, e.body.id, failed, `the sibling's delivery ${i} failing`);
    }
    const [d1, d2, d3] = made as [OperatedDelivery, OperatedDelivery, OperatedDelivery];
    assert.ok(
      d1.createdAt < d2.createdAt && d2.createdAt < d3.createdAt,
      `the three deliveries were not created one after another: ${made.map((d) => d.createdAt).join(', ')}`,
    );
    healthy = true;

    const middle = await operate(h, session, w.id, 'recover', { since: d2.createdAt, until: d3.createdAt });
    assert.equal(middle.status, 202, `recover answered ${middle.status}: ${middle.text}`);
    assert.deepEqual(middle.body, { queued: 1 }, 'recover of [d2, d3) does not queue exactly d2');
    const d2After = await deliveryOf(h, session, w.id, d2.eventId, delivered, 'd2 delivered again');
    assert.equal(d2After.id, d2.id, 'the recovered delivery has a new ID');
    assert.deepEqual(
      d2After.attempts.map((a) => [a.number, a.responseStatus]),
      [
        [1, 500],
        [2, 500],
        [3, 500],
        [4, 200],
      ],
      'the recovered delivery lost its attempts, or the new one is not number 4',
    );
    assert.equal(d2After.attemptCount, 4, 'the recovered delivery does not count its four attempts');
    const others = await logOf(h, session, w.id);
    for (const d of [d1, d3]) {
      const now = others.find((x) => x.id === d.id)!;
      assert.equal(
        now.status,
        'failed',
        'a delivery outside [since, until) was recovered (until is exclusive)',
      );
      assert.equal(now.attemptCount, 3, 'a delivery outside [since, until) was attempted again');
    }

    const rest = await operate(h, session, w.id, 'recover', { since: d1.createdAt });
    assert.equal(rest.status, 202, `recover without until answered ${rest.status}: ${rest.text}`);
    assert.deepEqual(rest.body, { queued: 2 }, 'recover from d1 until now does not queue d1 and d3');
    const log = await waitForDeliveries(h, session, w.id, (ds) => ds.every(delivered), {
      message: 'every delivery delivered after recovering',
    });
    assert.deepEqual(
      log.map((d) => [d.id, d.attemptCount]).sort(),
      [
        [d1.id, 4],
        [d2.id, 4],
        [d3.id, 4],
      ].sort(),
      'the recovered deliveries are not the same ones with four attempts each',
    );
    const again = await operate(h, session, w.id, 'recover', { since: d1.createdAt });
    assert.deepEqual(again.body, { queued: 0 }, 'recover queued deliveries that are not failed');
    const calls = (path: string) => receiver.received.filter((r) => r.url === path).length;
    assert.equal(calls('/hook'), 12, 'nine failed attempts and three successes, nothing more');
    assert.equal(calls('/sibling'), 9, "recover sent the other connection's failed deliveries again");
    assert.deepEqual(
      (await logOf(h, session, sibling.id)).map((d) => [d.status, d.attemptCount]),
      [
        ['failed', 3],
        ['failed', 3],
        ['failed', 3],
      ],
      "recover changed the other connection's failed deliveries",
    );
    const entries = (await auditOf(h, session, w.id)).filter((e) => /recover/.test(e.action));
    assert.ok(
      entries.length >= 2,
      `two recovers that queued deliveries left ${entries.length} audit entries`,
    );
  });

  test('statuses: skipped deliveries are recovered only when asked for; failed is the default', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const w = await hook(h, session, receiver.url());
    const since = new Date(Date.now() - 60_000).toISOString();
    await pause(h, session, w.id);
    const e = await publishEvent(h, session, { type: 'order.created' });
    await resume(h, session, w.id);
    const byDefault = await operate(h, session, w.id, 'recover', { since });
    assert.equal(byDefault.status, 202, `recover answered ${byDefault.status}: ${byDefault.text}`);
    assert.deepEqual(byDefault.body, { queued: 0 }, 'recover without statuses queued a skipped delivery');
    assert.deepEqual(
      (await logOf(h, session, w.id)).map((d) => d.status),
      ['skipped'],
      'recover without statuses changed a skipped delivery',
    );
    const skipped = await operate(h, session, w.id, 'recover', { since, statuses: ['failed', 'skipped'] });
    assert.equal(skipped.status, 202, `recover of skipped answered ${skipped.status}: ${skipped.text}`);
    assert.deepEqual(skipped.body, { queued: 1 }, 'recover of skipped does not queue the skipped delivery');
    const d = await deliveryOf(h, session, w.id, e.body.id, delivered, 'the recovered skipped one delivered');
    assert.equal(d.attemptCount, 1, 'a recovered skipped delivery counts other than one attempt');
    await receiver.waitFor(1);
    assert.equal(receiver.received[0]!.headers['webhook-id'], e.body.id, 'another event was sent');
  });

  test('bad bodies, ranges and statuses are 400; nothing is queued', async (t) => {
    const receiver = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = 500;
      res.end();
    });
    const { session } = await makeSignedInTenant(h);
    const w = await hook(h, session, receiver.url());
    const e = await publishEvent(h, session, { type: 'order.created' });
    const before = await deliveryOf(h, session, w.id, e.body.id, failed, 'the delivery failing');
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    const cases: Array<[string, unknown, string]> = [
      ['since more than 14 days ago', { since: ago(14 * DAY_MS + 60_000) }, 'since'],
      ['since 30 days ago', { since: ago(30 * DAY_MS), until: ago(29 * DAY_MS) }, 'since'],
      ['since after until', { since: ago(60_000), until: ago(120_000) }, 'since'],
      ['no since', { until: ago(0) }, 'since'],
      ['since not a time', { since: 'yesterday' }, 'since'],
      ['since a number', { since: Date.now() - 60_000 }, 'since'],
      ['until not a time', { since: ago(60_000), until: 'now' }, 'until'],
      ['statuses delivered', { since: ago(60_000), statuses: ['delivered'] }, 'statuses'],
      ['statuses pending', { since: ago(60_000), statuses: ['pending'] }, 'statuses'],
      ['statuses unknown', { since: ago(60_000), statuses: ['failed', 'lost'] }, 'statuses'],
      ['statuses a string', { since: ago(60_000), statuses: 'failed' }, 'statuses'],
      ['unknown field', { since: ago(60_000), limit: 5 }, 'limit'],
    ];
    for (const [name, body, path] of cases) {
      const r = await operate(h, session, w.id, 'recover', body);
      assert.equal(r.status, 400, `${name}: ${r.status} ${r.text}`);
      assert.equal(r.body.code, 'validation_failed', `${name}: code ${r.body.code}`);
      assert.ok(
        (r.body.errors ?? []).some((x: { path: string }) => x.path.startsWith(path)) ||
          String(r.body.detail ?? '').includes(path),
        `${name}: neither an error at ${path} nor a detail naming it: ${r.text}`,
      );
    }
    const raw = await h.request('POST', `${CONNECTIONS}/${w.id}/recover`, {
      session,
      rawBody: '{"since":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(raw.status, 400, `recover with broken JSON answered ${raw.status}`);
    assert.equal(raw.body.code, 'invalid_json', 'recover with broken JSON: another code');
    const text = await h.request('POST', `${CONNECTIONS}/${w.id}/recover`, {
      session,
      rawBody: 'since=yesterday',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(text.status, 415, `recover with a text body answered ${text.status}`);
    const [now] = await logOf(h, session, w.id);
    assert.deepEqual(
      [now?.status, now?.attemptCount],
      ['failed', before.attemptCount],
      'a refused recover queued the failed delivery',
    );
    const instant = ago(60_000);
    const empty = await operate(h, session, w.id, 'recover', { since: instant, until: instant });
    assert.equal(empty.status, 202, `recover of an empty range answered ${empty.status}: ${empty.text}`);
    assert.deepEqual(empty.body, { queued: 0 }, 'recover of an empty range [t, t) queued something');
    // The edge of the window is allowed.
    const edge = await operate(h, session, w.id, 'recover', { since: ago(13 * DAY_MS) });
    assert.equal(edge.status, 202, `recover from 13 days ago answered ${edge.status}: ${edge.text}`);
    assert.deepEqual(edge.body, { queued: 1 }, 'recover from 13 days ago does not queue the failed delivery');
  });

  test('a paused or disabled connection: recover and manual retry are 409, nothing is queued', async (t) => {
    const receiver = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = 500;
      res.end();
    });
    const { session } = await makeSignedInTenant(h);
    const w = await hook(h, session, receiver.url());
    const e = await publishEvent(h, session, { type: 'order.created' });
    const d = await deliveryOf(h, session, w.id, e.body.id, failed, 'the delivery failing');
    const since = new Date(Date.now() - 60_000).toISOString();
    await pause(h, session, w.id);
    for (const state of ['paused', 'disabled']) {
      const r = await operate(h, session, w.id, 'recover', { since, statuses: ['failed', 'skipped'] });
      assert.equal(r.status, 409, `recover on a ${state} connection answered ${r.status}: ${r.text}`);
      assert.equal(r.body.code, 'conflict', `recover on a ${state} connection: code ${r.body.code}`);
      const retry = await h.request('POST', `${CONNECTIONS}/${w.id}/events/${d.id}/retry`, { session });
      assert.equal(
        retry.status,
        409,
        `retry on a ${state} connection answered ${retry.status}: ${retry.text}`,
      );
      assert.equal(retry.body.code, 'conflict', `retry on a ${state} connection: code ${retry.body.code}`);
      const [now] = await logOf(h, session, w.id);
      assert.deepEqual(
        [now?.id, now?.status, now?.attemptCount],
        [d.id, 'failed', 3],
        `a refused recover or retry on a ${state} connection changed the failed delivery`,
      );
      if (state === 'paused') await h.request('POST', `${CONNECTIONS}/${w.id}/revoke`, { session });
    }
    assert.equal(receiver.received.length, 3, 'something was sent after the three failed attempts');
  });

  test('at most 10,000 per call, oldest first; a second call from the last one’s time takes the rest', async (t) => {
    // No workers: what recover queues stays pending, to be counted.
    const idle = await startHarness({ env: ENV });
    t.after(() => idle.close());
    const { tenant, session } = await makeSignedInTenant(idle);
    const w = await hook(idle, session, 'https://hooks.example.com/many', { eventTypes: ['never.*'] });
    const total = 10_001;
    const base = new Date(Date.now() - 4 * 3600_000);
    const at = (i: number) => new Date(base.getTime() + i * 1000).toISOString();
    const db = idle.database.kysely;
    // 10,001 events and their failed deliveries, one a second, as failing receivers would have left them.
    await sql`insert into events (id, tenant_id, type, payload_sealed, delivery_count, created_at)
      select 'evt_bound' || lpad(i::text, 17, '0'), ${tenant.id}, 'bound.test', 'x', 1,
        ${base.toISOString()}::timestamptz + i * interval '1 second'
      from generate_series(1, ${total}) as i`.execute(db);
    await sql`insert into deliveries (id, tenant_id, event_id, connection_id, status, attempt_count,
        next_attempt_at, lease_until, leased_by, created_at, updated_at, delivered_at)
      select 'dlv_bound' || lpad(i::text, 17, '0'), ${tenant.id}, 'evt_bound' || lpad(i::text, 17, '0'),
        ${w.id}, 'failed', 3, null, null, null,
        ${base.toISOString()}::timestamptz + i * interval '1 second',
        ${base.toISOString()}::timestamptz + i * interval '1 second', null
      from generate_series(1, ${total}) as i`.execute(db);

    const first = await operate(idle, session, w.id, 'recover', { since: base.toISOString() });
    assert.equal(first.status, 202, `recover answered ${first.status}: ${first.text}`);
    assert.deepEqual(first.body, { queued: 10_000 }, 'one recover did not queue exactly 10,000');
    const left = await logOf(idle, session, w.id, 'status=failed');
    assert.deepEqual(
      left.map((d) => d.id),
      [`dlv_bound${String(total).padStart(17, '0')}`],
      'the delivery left failed is not the newest one: recover did not go oldest first',
    );
    const count = async (status: string) =>
      Number(
        (
          await db
            .selectFrom('deliveries')
            .select(({ fn }) => fn.countAll().as('n'))
            .where('connection_id', '=', w.id)
            .where('status', '=', status as never)
            .executeTakeFirstOrThrow()
        ).n,
      );
    assert.equal(await count('pending'), 10_000, 'the 10,000 recovered deliveries are not pending');

    const second = await operate(idle, session, w.id, 'recover', { since: at(total - 1) });
    assert.equal(second.status, 202, `the second recover answered ${second.status}: ${second.text}`);
    assert.deepEqual(second.body, { queued: 1 }, 'the second recover does not queue the one left');
    assert.equal(await count('failed'), 0, 'a failed delivery is left after the second recover');
  });
});

describe('test events', () => {
  test('signed and sent like any other, to this connection only, whatever its eventTypes; the log says test: true', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const picky = await hook(h, session, receiver.url('/picky'), { eventTypes: ['employee.*'] });
    const bystander = await hook(h, session, receiver.url('/all'));

    const r = await operate(h, session, picky.id, 'test', {});
    assert.equal(r.status, 202, `a test event answered ${r.status}: ${r.text}`);
    assert.match(r.body.eventId ?? '', /^evt_/, 'the test answer has no evt_ eventId');
    assert.match(r.body.deliveryId ?? '', /^dlv_/, 'the test answer has no dlv_ deliveryId');
    const [got] = await receiver.waitFor(1);
    assert.equal(got!.url, '/picky', 'the test event went to another connection');
    const body = new Webhook(picky.secret).verify(got!.body, webhookHeaders(got!.headers)) as {
      id: string;
      type: string;
      data: unknown;
    };
    assert.equal(body.id, r.body.eventId, 'the test event sent is not the one answered');
    assert.equal(body.type, 'hubgate.test', 'a test event without a type is not hubgate.test');
    const [entry] = await waitForDeliveries(h, session, picky.id, { settled: 1 });
    const test1 = entry as OperatedDelivery;
    assert.equal(test1.id, r.body.deliveryId, 'the log shows another delivery than the one answered');
    assert.equal(test1.status, 'delivered', 'the test delivery is not delivered');
    assert.equal(test1.test, true, 'the test delivery is not marked test: true in the log');
    assert.equal(test1.eventType, 'hubgate.test', 'the log shows the test delivery with another type');

    const custom = await operate(h, session, picky.id, 'test', { type: 'order.created', data: { n: 1 } });
    assert.equal(custom.status, 202, `a test of a type the eventTypes exclude answered ${custom.status}`);
    await receiver.waitFor(2);
    const sent = JSON.parse(receiver.received[1]!.body);
    assert.deepEqual(
      [sent.id, sent.type, sent.data],
      [custom.body.eventId, 'order.created', { n: 1 }],
      'the test event does not carry the type and data given',
    );
    const real = await publishEvent(h, session, { type: 'employee.created' });
    const realEntry = await deliveryOf(h, session, picky.id, real.body.id, delivered, 'a real event');
    assert.equal(realEntry.test, false, 'a published event is marked test in the log');
    assert.deepEqual(
      (await logOf(h, session, bystander.id)).map((d) => d.eventId),
      [real.body.id],
      "a test event was recorded for the tenant's other connection",
    );
    assert.deepEqual(
      receiver.received.filter((x) => x.url === '/all').map((x) => x.headers['webhook-id']),
      [real.body.id],
      "a test event was sent to the tenant's other connection",
    );
  });

  test('a connection without delivery enabled is 409 (no credentials, paused, disabled); nothing is recorded or sent', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const unbound = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'unbound',
      url: receiver.url('/unbound'),
    });
    const paused = await hook(h, session, receiver.url('/paused'));
    await pause(h, session, paused.id);
    const revoked = await hook(h, session, receiver.url('/revoked'));
    await h.request('POST', `${CONNECTIONS}/${revoked.id}/revoke`, { session });
    for (const [name, id] of [
      ['without credentials', unbound.id],
      ['paused', paused.id],
      ['disabled', revoked.id],
    ] as const) {
      const r = await operate(h, session, id, 'test', {});
      assert.equal(r.status, 409, `a test event to a connection ${name} answered ${r.status}: ${r.text}`);
      assert.equal(r.body.code, 'conflict', `a test event to a connection ${name}: code ${r.body.code}`);
      assert.deepEqual(await logOf(h, session, id), [], `a refused test event was recorded (${name})`);
    }
    // A witness: a test event that is allowed, sent after the refused ones, arrives alone.
    const witness = await hook(h, session, receiver.url('/witness'));
    const ok = await operate(h, session, witness.id, 'test', {});
    assert.equal(ok.status, 202, `a test event to an active connection answered ${ok.status}`);
    await receiver.waitFor(1);
    await waitForDeliveries(h, session, witness.id, { settled: 1 });
    assert.deepEqual(
      receiver.received.map((x) => x.url),
      ['/witness'],
      'a refused test event was sent anyway',
    );
  });

  test('bad bodies are 400 naming the field; nothing is recorded', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const w = await hook(h, session, receiver.url());
    const cases: Array<[string, unknown, string]> = [
      ['type with spaces', { type: 'Order Created' }, 'type'],
      ['empty type', { type: '' }, 'type'],
      ['long type', { type: 'a'.repeat(101) }, 'type'],
      ['data a string', { data: 'x' }, 'data'],
      ['data an array', { data: [1] }, 'data'],
      ['unknown field', { type: 'a.b', connectionId: 'con_x' }, 'connectionId'],
    ];
    for (const [name, body, path] of cases) {
      const r = await operate(h, session, w.id, 'test', body);
      assert.equal(r.status, 400, `${name}: ${r.status} ${r.text}`);
      assert.equal(r.body.code, 'validation_failed', `${name}: code ${r.body.code}`);
      assert.ok(
        (r.body.errors ?? []).some((x: { path: string }) => x.path === path),
        `${name}: expected an error at ${path}, got ${JSON.stringify(r.body.errors)}`,
      );
    }
    // Event data nests at most 64 levels (docs/api/limits.md); a test event is a real event.
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 70; i++) deep = { a: deep };
    const nested = await operate(h, session, w.id, 'test', { data: deep });
    assert.equal(nested.status, 400, `test data nested 70 levels deep answered ${nested.status}`);
    assert.equal(nested.body.code, 'validation_failed', `test data nested 70 deep: ${nested.body.code}`);
    const raw = await h.request('POST', `${CONNECTIONS}/${w.id}/test`, {
      session,
      rawBody: '{"type":"a.b"',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(raw.status, 400, `a test event with broken JSON answered ${raw.status}`);
    assert.equal(raw.body.code, 'invalid_json', 'a test event with broken JSON: another code');
    assert.deepEqual(await logOf(h, session, w.id), [], 'a refused test event was recorded');
  });

  test('http: the test event carries the bound header, and its log never shows the value', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const headerValue = 'Bearer test-event-header-secret-88';
    neverShown.push(headerValue);
    const c = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'erp',
      url: receiver.url('/erp'),
    });
    await bindCredentials(h, session, c.id, { headerName: 'Authorization', headerValue });
    const r = await operate(h, session, c.id, 'test', { data: { ping: true } });
    assert.equal(r.status, 202, `a test event to an http connection answered ${r.status}: ${r.text}`);
    const [got] = await receiver.waitFor(1);
    assert.equal(got!.headers.authorization, headerValue, 'the http test event lacks the bound header');
    assert.deepEqual(JSON.parse(got!.body).data, { ping: true }, 'the http test event lacks its data');
    await waitForDeliveries(h, session, c.id, { settled: 1 });
    await h.request('GET', `${CONNECTIONS}/${c.id}/events/${r.body.deliveryId}`, { session });
  });
});

describe('automatic pause', () => {
  let auto: Harness;
  before(async () => {
    auto = await startHarness({
      env: {
        ...ENV,
        DELIVERY_RETRY_SCHEDULE: '0',
        // The alert is looked for as the operator console shows it: evaluated often enough to see.
        ALERT_EVALUATION_INTERVAL_MS: '250',
        CONNECTION_PAUSE_AFTER_FAILURES: '3',
        CONNECTION_PAUSE_AFTER_SECONDS: '60',
      },
      workers: { pollMs: 50 },
    });
  });
  after(() => auto.close());

  /** Publishes `type` at the app time `at` and waits until its delivery to `connectionId` is `wanted`. */
  async function publishAt(
    session: TestSession,
    at: Date,
    type: string,
    connectionId: string,
    wanted: (d: Delivery) => boolean = failed,
  ) {
    auto.setNow(at);
    const e = await publishEvent(auto, session, { type });
    return deliveryOf(auto, session, connectionId, e.body.id, wanted, `${type} settling`);
  }

  const status = async (session: TestSession, id: string) => (await readConnection(auto, session, id)).status;

  async function waitPaused(session: TestSession, id: string, reason: string) {
    const c = await waitUntil(
      async () => {
        const read = await readConnection(auto, session, id);
        return read.status === 'paused' && read;
      },
      { message: `connection ${id} pausing itself (${reason})`, timeoutMs: 20_000 },
    );
    assert.equal(c.pausedReason, reason, `the connection paused itself with reason ${c.pausedReason}`);
    assert.equal(c.deliveryEnabled, false, 'a connection that paused itself still delivers');
    return c;
  }

  /** The audit entry of the automatic pause: the system's, no user, no key. */
  async function assertSystemAudit(session: TestSession, id: string) {
    const entries = (await auditOf(auto, session, id)).filter((e) => /pause/.test(e.action));
    assert.equal(entries.length, 1, `the automatic pause left ${entries.length} audit entries`);
    assert.equal(
      entries[0]!.actorType,
      'system',
      `the automatic pause is audited as ${entries[0]!.actorType}`,
    );
    assert.equal(entries[0]!.actorId, null, 'the automatic pause is audited with a user or key');
  }

  async function assertAlert(tenantId: string, connectionId: string, reason: string) {
    const alert = await waitUntil(
      async () =>
        (await firingAlerts(auto)).find(
          (a) => a.labels.alertname === 'ConnectionPaused' && a.labels.connectionId === connectionId,
        ),
      { message: `the ConnectionPaused alert for ${connectionId}` },
    );
    assert.equal(alert.labels.tenantId, tenantId, 'the ConnectionPaused alert names another tenant');
    assert.equal(
      alert.labels.reason,
      reason,
      `the ConnectionPaused alert gives reason ${alert.labels.reason}`,
    );
  }

  test('N failed in a row, the first at least S seconds before the last, pause with reason failing; fewer or faster do not', async (t) => {
    t.after(() => auto.setNow(null));
    const failing = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = 500;
      res.end();
    });
    const { tenant, session } = await makeSignedInTenant(auto);
    const x = await hook(auto, session, failing.url('/x'), { eventTypes: ['x.*'] });
    const y = await hook(auto, session, failing.url('/y'), { eventTypes: ['y.*'] });
    const z = await hook(auto, session, failing.url('/z'), { eventTypes: ['z.*'] });
    const t0 = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    const at = (seconds: number) => new Date(t0 + seconds * 1000);

    await publishAt(session, at(0), 'x.1', x.id);
    await publishAt(session, at(0), 'y.1', y.id);
    await publishAt(session, at(0), 'z.1', z.id);
    await publishAt(session, at(0), 'z.2', z.id);
    await publishAt(session, at(1), 'x.2', x.id);
    await publishAt(session, at(59), 'x.3', x.id);
    assert.equal(await status(session, x.id), 'active', 'three failures within 59 s paused the connection');
    assert.equal(await status(session, z.id), 'active', 'two failures paused the connection');

    await publishAt(session, at(60), 'z.3', z.id);
    await waitPaused(session, z.id, 'failing');

    await publishAt(session, at(120), 'y.2', y.id);
    assert.equal(await status(session, y.id), 'active', 'two failures 120 s apart paused the connection');
    await publishAt(session, at(120), 'x.4', x.id);
    const pausedX = await waitPaused(session, x.id, 'failing');
    assert.equal(pausedX.pausedAt, at(120).toISOString(), 'pausedAt is not when the last failure ended');
    await publishAt(session, at(120), 'y.3', y.id);
    await waitPaused(session, y.id, 'failing');

    for (const c of [x, y, z]) await assertSystemAudit(session, c.id);
    await assertAlert(tenant.id, x.id, 'failing');
    await assertAlert(tenant.id, z.id, 'failing');

    // From now on its events are recorded as skipped, and nothing is sent.
    const sentBefore = failing.received.length;
    const later = await publishEvent(auto, session, { type: 'x.5' });
    assert.equal(later.body.deliveries, 1, 'an event for a connection that paused itself is not counted');
    // Looked up by event: the frozen clock gives it the same created time as the last failure.
    const entry = (await logOf(auto, session, x.id)).find((d) => d.eventId === later.body.id);
    assert.equal(entry?.status, 'skipped', 'an event for a connection that paused itself is not skipped');
    assert.equal(
      failing.received.length,
      sentBefore,
      'something was sent to a connection that paused itself',
    );
  });

  test('a delivered one in between resets the run', async (t) => {
    t.after(() => auto.setNow(null));
    let healthy = false;
    const receiver = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = healthy ? 200 : 500;
      res.end();
    });
    const { session } = await makeSignedInTenant(auto);
    const w = await hook(auto, session, receiver.url());
    const t0 = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    const at = (seconds: number) => new Date(t0 + seconds * 1000);
    await publishAt(session, at(0), 'a.1', w.id);
    healthy = true;
    await publishAt(session, at(1), 'a.2', w.id, delivered);
    healthy = false;
    await publishAt(session, at(100), 'a.3', w.id);
    await publishAt(session, at(100), 'a.4', w.id);
    assert.equal(
      await status(session, w.id),
      'active',
      'three failures spanning 100 s, with a delivery between the first and the others, paused the connection',
    );
    await publishAt(session, at(100), 'a.5', w.id);
    assert.equal(
      await status(session, w.id),
      'active',
      'three failures after a delivery, within 0 s, paused it',
    );
    await publishAt(session, at(200), 'a.6', w.id);
    await waitPaused(session, w.id, 'failing');
  });

  test('a 410 Gone answer pauses at once with reason gone; the alert fires; retry, recover and test are 409', async (t) => {
    const receiver = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = 410;
      res.end();
    });
    const { tenant, session } = await makeSignedInTenant(auto);
    const w = await hook(auto, session, receiver.url());
    const e = await publishEvent(auto, session, { type: 'order.created' });
    const d = await deliveryOf(auto, session, w.id, e.body.id, failed, 'the 410 failing the delivery');
    assert.equal(d.attemptCount, 1, 'a 410 answer was retried');
    const paused = await waitPaused(session, w.id, 'gone');
    assert.ok(paused.pausedAt, 'the connection paused by a 410 has no pausedAt');
    await assertSystemAudit(session, w.id);
    await assertAlert(tenant.id, w.id, 'gone');

    const retry = await auto.request('POST', `${CONNECTIONS}/${w.id}/events/${d.id}/retry`, { session });
    assert.equal(retry.status, 409, `a manual retry on a paused connection answered ${retry.status}`);
    assert.equal(
      retry.body.code,
      'conflict',
      `a manual retry on a paused connection: code ${retry.body.code}`,
    );
    const since = new Date(Date.now() - 60_000).toISOString();
    const recover = await operate(auto, session, w.id, 'recover', { since });
    assert.equal(recover.status, 409, `recover on a paused connection answered ${recover.status}`);
    const testEvent = await operate(auto, session, w.id, 'test', {});
    assert.equal(testEvent.status, 409, `a test event on a paused connection answered ${testEvent.status}`);
    const next = await publishEvent(auto, session, { type: 'order.created' });
    assert.equal(next.body.deliveries, 1, 'an event for the paused connection is not counted');
    assert.deepEqual(
      (await logOf(auto, session, w.id)).map((x) => [x.eventId, x.status]).sort(),
      [
        [e.body.id, 'failed'],
        [next.body.id, 'skipped'],
      ].sort(),
      'the log of the paused connection is not the failed delivery and a skipped one',
    );
    assert.equal(receiver.received.length, 1, 'something was sent after the 410');
  });

  test('CONNECTION_PAUSE_AFTER_FAILURES=0 never pauses for failures', async (t) => {
    const never = await startHarness({
      env: {
        ...ENV,
        DELIVERY_RETRY_SCHEDULE: '0',
        CONNECTION_PAUSE_AFTER_FAILURES: '0',
        CONNECTION_PAUSE_AFTER_SECONDS: '60',
      },
      workers: { pollMs: 50 },
    });
    t.after(() => never.close());
    const receiver = await startReceiver(t, (_r, _i, res) => {
      res.statusCode = 500;
      res.end();
    });
    const { session } = await makeSignedInTenant(never);
    const w = await hook(never, session, receiver.url());
    const t0 = Math.ceil(Date.now() / 1000) * 1000 + 1000;
    for (let i = 0; i < 5; i++) {
      never.setNow(new Date(t0 + i * 100_000));
      const e = await publishEvent(never, session, { type: `n.e${i}` });
      await deliveryOf(never, session, w.id, e.body.id, failed, `failure ${i}`);
    }
    const last = await publishEvent(never, session, { type: 'n.last' });
    await deliveryOf(never, session, w.id, last.body.id, failed, 'the last failure');
    const read = await readConnection(never, session, w.id);
    assert.equal(
      read.status,
      'active',
      'a connection paused itself though CONNECTION_PAUSE_AFTER_FAILURES=0',
    );
    assert.equal(read.pausedReason, null, 'a connection shows a pausedReason though it never paused');
  });
});

describe('throttle', () => {
  test('maxPerSecond is 1–1000 or null on every connector; 0, 1001, 2.5 and "5" are 400', async () => {
    const { session } = await makeSignedInTenant(h);
    const bodies: Record<string, Record<string, unknown>> = {
      webhook: { connectorKey: 'webhook', displayName: 'w', url: 'https://hooks.example.com/t' },
      http: { connectorKey: 'http', displayName: 'h', url: 'https://erp.example.com/t' },
      slack: { connectorKey: 'slack', displayName: 's' },
    };
    for (const [connector, body] of Object.entries(bodies)) {
      for (const value of [1, 1000, null]) {
        const r = await h.request('POST', CONNECTIONS, { session, body: { ...body, maxPerSecond: value } });
        assert.equal(r.status, 201, `${connector} with maxPerSecond ${value}: ${r.status} ${r.text}`);
        assert.equal(
          r.body.config.maxPerSecond ?? null,
          value,
          `${connector} with maxPerSecond ${value} shows ${r.body.config.maxPerSecond}`,
        );
      }
      for (const value of [0, 1001, 2.5, '5', -1]) {
        const r = await h.request('POST', CONNECTIONS, { session, body: { ...body, maxPerSecond: value } });
        assert.equal(r.status, 400, `${connector} with maxPerSecond ${JSON.stringify(value)}: ${r.status}`);
        assert.ok(
          (r.body.errors ?? []).some((e: { path: string }) => e.path === 'maxPerSecond'),
          `${connector} with maxPerSecond ${JSON.stringify(value)}: no error at maxPerSecond: ${r.text}`,
        );
      }
      const made = await createConnection(h, session, body);
      const set = await patchConnection(h, session, made.id, { maxPerSecond: 7 });
      assert.equal(set.status, 200, `${connector}: PATCH maxPerSecond 7 answered ${set.status}: ${set.text}`);
      assert.equal(set.body.config.maxPerSecond, 7, `${connector}: PATCH maxPerSecond 7 not shown`);
      const unset = await patchConnection(h, session, made.id, { maxPerSecond: null });
      assert.equal(unset.status, 200, `${connector}: PATCH maxPerSecond null answered ${unset.status}`);
      assert.equal(unset.body.config.maxPerSecond ?? null, null, `${connector}: maxPerSecond null not taken`);
    }
  });

  /** Publishes `count` events in one batch to a webhook limited to `perSecond`, and checks the bound. */
  async function throttled(t: TestContext, perSecond: number, count: number) {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const w = await hook(h, session, receiver.url(), { maxPerSecond: perSecond });
    const events = Array.from({ length: count }, (_, i) => ({ type: 'order.created', data: { i } }));
    const batch = await h.request('POST', '/api/v1/integrations/events/batch', { session, body: { events } });
    assert.equal(batch.status, 202, `the batch answered ${batch.status}: ${batch.text}`);

    // While some wait, the log says when each will go.
    const seen = new Map<string, string>();
    await waitUntil(
      async () => {
        const now = Date.now();
        const log = await logOf(h, session, w.id);
        const waiting = log.filter((d) => d.status === 'pending' || d.status === 'retrying');
        for (const d of waiting) {
          assert.ok(d.nextAttemptAt, `a waiting delivery (${d.status}) does not say when it will go`);
          if (Date.parse(d.nextAttemptAt) > now) seen.set(d.id, d.nextAttemptAt);
        }
        const settled = log.filter((d) => d.status === 'delivered' || d.status === 'failed').length;
        return seen.size > 0 || settled === count;
      },
      { message: 'the log of the throttled connection', intervalMs: 200 },
    );
    assert.ok(seen.size > 0, 'no waiting delivery ever showed a nextAttemptAt in the future');

    // Read 100 to a page: waitForDeliveries reads the first page of 20 only.
    let last: OperatedDelivery[] = [];
    const log = await waitUntil(
      async () => {
        last = await logOf(h, session, w.id);
        return last.filter((d) => d.status === 'delivered' || d.status === 'failed').length === count && last;
      },
      {
        message: () =>
          `${count} settled deliveries; the log shows ${JSON.stringify(last.map((d) => d.status))}`,
        timeoutMs: 30_000,
        intervalMs: 250,
      },
    );
    for (const d of log) {
      assert.equal(d.status, 'delivered', `a throttled delivery ended ${d.status}`);
      assert.equal(
        d.attemptCount,
        1,
        `a throttled delivery counts ${d.attemptCount} attempts: waiting is no attempt`,
      );
      const promised = seen.get(d.id);
      if (promised)
        assert.ok(
          Date.parse(d.attempts[0]!.startedAt) >= Date.parse(promised) - 1,
          `a delivery promised for ${promised} went at ${d.attempts[0]!.startedAt}`,
        );
    }
    assert.equal(receiver.received.length, count, 'the receiver did not get each event once');
    const starts = log.map((d) => Date.parse(d.attempts[0]!.startedAt));
    assert.equal(
      overThrottle(starts, perSecond),
      null,
      `attempts started: ${overThrottle(starts, perSecond)}`,
    );
    // What the receiver saw. The receiver shares the app's event loop, which PGlite blocks while it
    // answers a query: an arrival can be stamped up to a second after its attempt started, hence one
    // second of slack. A throttle that does not hold (30 at once) still fails this by far.
    const arrivals = receiver.received.map((r) => r.at);
    assert.equal(
      overThrottle(arrivals, perSecond, 1),
      null,
      `requests arrived: ${overThrottle(arrivals, perSecond, 1)}`,
    );
  }

  test('maxPerSecond 5 and 30 events: at most 5 × (N + 1) in any N whole seconds, all delivered, none failed', async (t) => {
    await throttled(t, 5, 30);
  });

  test('the bound holds across processes: a second app with workers on the same database shares it', async (t) => {
    const second = await startHarness({
      env: ENV,
      testDatabase: h.testDatabase,
      keyring: h.keyring,
      workers: { pollMs: 50 },
    });
    t.after(() => second.close());
    await throttled(t, 3, 15);
  });
});

describe('access', () => {
  const since = () => new Date(Date.now() - 60_000).toISOString();
  const calls = (id: string): Array<[string, string, unknown]> => [
    ['POST', `${CONNECTIONS}/${id}/recover`, { since: since() }],
    ['POST', `${CONNECTIONS}/${id}/test`, {}],
  ];

  test("another tenant's connection, an unknown and a malformed ID are 404 with a session or a key; nothing is recorded", async (t) => {
    const receiver = await startReceiver(t);
    const mine = await makeSignedInTenant(h);
    const theirs = await makeSignedInTenant(h);
    const target = await hook(h, theirs.session, receiver.url());
    const key = await makeKey(h, mine.session, { scopes: ['integrations:ADMIN'] });
    for (const id of [target.id, 'con_0000000000000000000000', 'not-an-id', 'evt_0000000000000000000000']) {
      for (const [method, path, body] of calls(id)) {
        for (const credential of [{ session: mine.session }, { token: key.secret }]) {
          const who = 'token' in credential ? 'a key' : 'a session';
          const r = await h.request(method, path, { ...credential, body });
          assert.equal(r.status, 404, `${method} ${path} with ${who}: ${r.status} ${r.text}`);
          assert.equal(r.body.code, 'not_found', `${method} ${path} with ${who}: code ${r.body.code}`);
        }
      }
    }
    assert.deepEqual(
      await logOf(h, theirs.session, target.id),
      [],
      "another tenant's test event was recorded",
    );
    assert.equal(receiver.received.length, 0, "another tenant's test event was sent");
  });

  test('keys: READER is 403 insufficient_scope; OPERATOR may recover and test, and capabilities list both', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const w = await hook(h, session, receiver.url());
    const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
    for (const [method, path, body] of calls(w.id)) {
      const r = await h.request(method, path, { token: reader.secret, body });
      assert.equal(r.status, 403, `${method} ${path} with a READER key: ${r.status}`);
      assert.equal(r.body.code, 'insufficient_scope', `${method} ${path} with a READER key: ${r.body.code}`);
      assert.match(
        r.body.detail ?? '',
        /integrations:OPERATOR/,
        'the refusal does not name the scope needed',
      );
    }
    assert.deepEqual(await logOf(h, session, w.id), [], 'a refused key recorded a test event');

    const operator = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const token = { token: operator.secret };
    const sent = await operate(h, token, w.id, 'test', { type: 'key.test' });
    assert.equal(sent.status, 202, `an OPERATOR key cannot send a test event: ${sent.text}`);
    const [got] = await receiver.waitFor(1);
    new Webhook(w.secret).verify(got!.body, webhookHeaders(got!.headers));
    const recovered = await operate(h, token, w.id, 'recover', { since: since() });
    assert.equal(recovered.status, 202, `an OPERATOR key cannot recover: ${recovered.text}`);
    assert.deepEqual(recovered.body, { queued: 0 }, 'recover queued deliveries that never failed');

    const capabilities = await h.request('GET', '/api/v1/automation/capabilities', as(token));
    const listed = new Set(
      capabilities.body.routes.map((x: { method: string; path: string }) => `${x.method} ${x.path}`),
    );
    for (const route of [
      'POST /api/v1/integrations/connections/:id/recover',
      'POST /api/v1/integrations/connections/:id/test',
    ]) {
      assert.ok(listed.has(route), `capabilities of an OPERATOR key do not list ${route}`);
    }
  });

  test('sessions: a MEMBER is 403 role_forbidden; without the CSRF token 403 csrf_failed; nothing is recorded', async (t) => {
    const receiver = await startReceiver(t);
    const admin = await makeSignedInTenant(h);
    const w = await hook(h, admin.session, receiver.url());
    const member = await signIn(h, await makeUser(h, admin.tenant.id, { role: 'MEMBER' }));
    for (const [method, path, body] of calls(w.id)) {
      const r = await h.request(method, path, { session: member, body });
      assert.equal(r.status, 403, `${method} ${path} as a MEMBER: ${r.status}`);
      assert.equal(r.body.code, 'role_forbidden', `${method} ${path} as a MEMBER: ${r.body.code}`);
      const noCsrf = await h.request(method, path, { headers: { cookie: admin.session.cookie }, body });
      assert.equal(noCsrf.status, 403, `${method} ${path} without CSRF: ${noCsrf.status}`);
      assert.equal(noCsrf.body.code, 'csrf_failed', `${method} ${path} without CSRF: ${noCsrf.body.code}`);
    }
    assert.deepEqual(await logOf(h, admin.session, w.id), [], 'a refused call recorded a test event');
  });
});

test('no secret ever appears in a log line, nor in an answer other than the one that generated it', () => {
  assert.ok(shownOnce.length > 0 && neverShown.length > 0, 'the file collected no secret to look for');
  assertNoLeak(h, neverShown, shownOnce);
});
