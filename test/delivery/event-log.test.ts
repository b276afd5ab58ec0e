import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Static } from 'typebox';
import type { DeliveryDetailSchema } from '../../src/delivery/routes.js';
import {
  publishEvent,
  waitForDeliveries,
  type Delivery,
  type Page,
  type Problem,
} from '../helpers/events.js';
import {
  makeKey,
  makeSignedInTenant,
  makeUser,
  makeWebhookConnection,
  signIn,
} from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { bindCredentials, CONNECTIONS, createConnection, operate, pause } from '../helpers/operate.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// docs/api/events.md, the read side: what each attempt sent and was answered, one delivery's payload, and
// the log's filters and their cursors. Receivers listen on 127.0.0.1 only, opened by
// DELIVERY_ALLOWED_CIDRS; nothing else is contacted.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  // Three attempts, at once: a delivery to a failing receiver is `failed` within milliseconds.
  DELIVERY_RETRY_SCHEDULE: '0,0',
  DELIVERY_TIMEOUT_MS: '5000',
  // One session reads the log a few hundred times here.
  RATE_LIMIT_PER_MINUTE: '1000000',
};

type Detail = Static<typeof DeliveryDetailSchema>;

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

const eventsOf = (connectionId: string) => `${CONNECTIONS}/${connectionId}/events`;

/** A log page; fails the test unless it is 200. */
async function page(session: TestSession, connectionId: string, query: string): Promise<Page<Delivery>> {
  const r = await h.request<Page<Delivery>>('GET', `${eventsOf(connectionId)}?${query}`, { session });
  assert.equal(r.status, 200, `GET …/events?${query} answered ${r.status}: ${r.text}`);
  return r.body;
}

/** A detail read; fails the test unless it is 200. */
async function detail(session: TestSession, connectionId: string, deliveryId: string): Promise<Detail> {
  const r = await h.request<Detail>('GET', `${eventsOf(connectionId)}/${deliveryId}`, { session });
  assert.equal(r.status, 200, `GET …/events/${deliveryId} answered ${r.status}: ${r.text}`);
  return r.body;
}

function assertProblem(r: TestResponse<Problem>, status: number, code: string, what: string): void {
  assert.equal(r.status, status, `${what}: expected ${status}, got ${r.status}: ${r.text}`);
  assert.equal(r.body.code, code, `${what}: expected ${code}, got ${r.body.code}`);
}

/**
 * The log every filter test reads: one tenant's webhook connection and six deliveries that really
 * happened, each answered with the status its event asked for, published a few milliseconds apart.
 */
interface Fixture {
  session: TestSession;
  connectionId: string;
  secret: string;
  receiver: Receiver;
  /** By name: the delivery, its event and when it was created. */
  d: Record<Name, { id: string; eventId: string; createdAt: string }>;
  /** A tenant of its own with a delivered event. */
  other: { session: TestSession; connectionId: string; eventId: string; deliveryId: string };
}

const PLAN = [
  { name: 'created', type: 'employee.created', answer: 200 },
  { name: 'updated', type: 'employee.updated', answer: 204 },
  { name: 'paid', type: 'invoice.paid', answer: 404 },
  { name: 'underscore', type: 'invoice_paid', answer: 503 },
  { name: 'order', type: 'order.created', answer: 500 },
] as const;
type Name = (typeof PLAN)[number]['name'] | 'test';
const ALL: Name[] = ['created', 'updated', 'paid', 'underscore', 'order', 'test'];

let f: Fixture;

async function seedLog(): Promise<Fixture> {
  const receiver = await startReceiver((got, _i, res) => {
    const answer = Number((JSON.parse(got.body) as { data?: { answer?: number } }).data?.answer ?? 200);
    res.statusCode = answer;
    res.setHeader('x-answer', String(answer));
    res.end(answer === 204 ? undefined : `answered ${answer}`);
  });
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, receiver.url('/log'));
  const d = {} as Fixture['d'];
  const eventIds = new Map<string, Name>();
  for (const step of PLAN) {
    const r = await publishEvent(h, session, { type: step.type, data: { answer: step.answer } });
    eventIds.set(r.body.id, step.name);
    // Distinct milliseconds, so that the expected order and the time filters are exact: the next one is
    // published once the clock has moved past the moment this one was answered (so past its creation).
    const answered = Date.now();
    await waitUntil(() => Date.now() > answered, { message: 'the next millisecond', intervalMs: 1 });
  }
  const sent = await operate(h, session, hook.id, 'test', { data: { answer: 200 } });
  assert.equal(sent.status, 202, `the test event answered ${sent.status}: ${sent.text}`);
  eventIds.set(sent.body.eventId, 'test');
  const log = await waitForDeliveries(h, session, hook.id, { settled: ALL.length });
  for (const entry of log) {
    const name = eventIds.get(entry.eventId);
    assert.ok(name, `the log shows an event the test did not publish: ${entry.eventId}`);
    d[name] = { id: entry.id, eventId: entry.eventId, createdAt: entry.createdAt };
  }
  const times = ALL.map((name) => Date.parse(d[name].createdAt));
  assert.ok(
    times.every((t, i) => i === 0 || t > times[i - 1]!),
    `the fixture's deliveries share a millisecond: ${JSON.stringify(times)}`,
  );
  return { session, connectionId: hook.id, secret: hook.secret, receiver, d, other: await seedOther() };
}

async function seedOther(): Promise<Fixture['other']> {
  const receiver = await startReceiver();
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, receiver.url('/other'));
  const r = await publishEvent(h, session, { type: 'employee.created', data: { answer: 200 } });
  const [entry] = await waitForDeliveries(h, session, hook.id, { settled: 1 });
  await receiver.close();
  return { session, connectionId: hook.id, eventId: r.body.id, deliveryId: entry.id };
}

/** The fixture's deliveries of these names, as the log orders them: newest first. */
const expected = (names: readonly Name[]): string[] =>
  [...names]
    .sort((a, b) => Date.parse(f.d[b].createdAt) - Date.parse(f.d[a].createdAt))
    .map((name) => f.d[name].id);

const nameOf = (id: string): string => ALL.find((name) => f.d[name].id === id) ?? id;

async function idsFor(query: string): Promise<string[]> {
  const log = await page(f.session, f.connectionId, `limit=100&${query}`);
  assert.equal(log.nextCursor, null, `${query}: the whole filtered log fits one page of 100`);
  return log.data.map((entry) => entry.id);
}

async function assertMatches(query: string, names: readonly Name[]): Promise<void> {
  const ids = await idsFor(query);
  assert.deepEqual(
    ids.map(nameOf),
    expected(names).map(nameOf),
    `?${query} answers other deliveries than ${JSON.stringify(names)}`,
  );
}

describe('the log filters', () => {
  before(async () => {
    f = await seedLog();
  });
  after(() => f.receiver.close());

  test('status: one status or several, comma-separated, in any order', async () => {
    await assertMatches('status=delivered', ['created', 'updated', 'test']);
    await assertMatches('status=failed', ['paid', 'underscore', 'order']);
    await assertMatches('status=failed,delivered', ALL);
    await assertMatches('status=delivered,failed,failed', ALL);
    await assertMatches('status=skipped', []);
    await assertMatches('status=pending,retrying,delivering,cancelled', []);
  });

  test('eventType: one pattern, `*` any run, and `_` and `.` only themselves', async () => {
    await assertMatches('eventType=employee.created', ['created']);
    await assertMatches('eventType=employee.*', ['created', 'updated']);
    await assertMatches('eventType=*.created', ['created', 'order']);
    await assertMatches('eventType=invoice.paid', ['paid']);
    // In SQL's LIKE, `_` is any one character: here it is an underscore and nothing else.
    await assertMatches('eventType=invoice_paid', ['underscore']);
    await assertMatches('eventType=invoice*', ['paid', 'underscore']);
    await assertMatches('eventType=*', ALL);
    await assertMatches('eventType=hubgate.test', ['test']);
    await assertMatches('eventType=employee', []);
    await assertMatches('eventType=*a*a*a*a*a*a*a*a*a*a*a*b', []);
  });

  test("eventId: the event's delivery; an unknown event or another tenant's has none here", async () => {
    await assertMatches(`eventId=${f.d.paid.eventId}`, ['paid']);
    await assertMatches(`eventId=${f.d.test.eventId}`, ['test']);
    await assertMatches('eventId=evt_0000000000000000000000', []);
    await assertMatches(`eventId=${f.other.eventId}`, []);
  });

  test('since and until: created at or after since, and before until', async () => {
    await assertMatches(`since=${f.d.paid.createdAt}`, ['paid', 'underscore', 'order', 'test']);
    await assertMatches(`until=${f.d.paid.createdAt}`, ['created', 'updated']);
    await assertMatches(`since=${f.d.updated.createdAt}&until=${f.d.order.createdAt}`, [
      'updated',
      'paid',
      'underscore',
    ]);
    await assertMatches(`since=${f.d.paid.createdAt}&until=${f.d.paid.createdAt}`, []);
    // The same instant in another offset, with a finer fraction, and in lower case.
    const at = new Date(f.d.paid.createdAt);
    const local = new Date(at.getTime() + 2 * 3_600_000).toISOString().replace('Z', '000+02:00');
    await assertMatches(`since=${encodeURIComponent(local)}`, ['paid', 'underscore', 'order', 'test']);
    const lower = f.d.paid.createdAt.replace('T', 't').replace('Z', 'z');
    await assertMatches(`until=${lower}`, ['created', 'updated']);
    // A fraction finer than a millisecond just after the delivery's time leaves it before `since`.
    const later = f.d.paid.createdAt.replace('Z', '0001Z');
    await assertMatches(`since=${later}&until=${f.d.order.createdAt}`, ['underscore']);
    await assertMatches('since=0001-01-01T00:00:00Z&until=9999-12-31T23:59:59.999999999-23:59', ALL);
  });

  test('test: test deliveries only, or none of them', async () => {
    await assertMatches('test=true', ['test']);
    await assertMatches('test=false', ['created', 'updated', 'paid', 'underscore', 'order']);
  });

  test("responseStatus: a class or a code, matched on the last attempt's answer", async () => {
    await assertMatches('responseStatus=2xx', ['created', 'updated', 'test']);
    await assertMatches('responseStatus=4xx', ['paid']);
    await assertMatches('responseStatus=5xx', ['underscore', 'order']);
    await assertMatches('responseStatus=200', ['created', 'test']);
    await assertMatches('responseStatus=204', ['updated']);
    await assertMatches('responseStatus=404', ['paid']);
    await assertMatches('responseStatus=503', ['underscore']);
    await assertMatches('responseStatus=500', ['order']);
    await assertMatches('responseStatus=201', []);
    await assertMatches('responseStatus=302', []);
  });

  test('filters combine: every one must hold', async () => {
    await assertMatches('status=failed&eventType=invoice*', ['paid', 'underscore']);
    await assertMatches('status=failed&responseStatus=5xx', ['underscore', 'order']);
    await assertMatches('eventType=*.created&responseStatus=5xx', ['order']);
    await assertMatches('test=false&responseStatus=2xx', ['created', 'updated']);
    await assertMatches('test=true&status=failed', []);
    await assertMatches(`eventId=${f.d.paid.eventId}&status=delivered`, []);
    await assertMatches(`eventId=${f.d.order.eventId}&responseStatus=500&test=false&eventType=order.*`, [
      'order',
    ]);
    await assertMatches(
      `since=${f.d.updated.createdAt}&until=${f.d.test.createdAt}&status=failed&eventType=invoice*&responseStatus=4xx`,
      ['paid'],
    );
  });

  test('paging through a filtered log answers every match once, in order, and its cursors carry the filters', async () => {
    for (const [query, names] of [
      ['status=failed', ['paid', 'underscore', 'order']],
      ['eventType=*', ALL],
      ['responseStatus=2xx&test=false', ['created', 'updated']],
      [`since=${f.d.updated.createdAt}&eventType=*.*`, ['updated', 'paid', 'order', 'test']],
      ['test=true', ['test']],
    ] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let pages = 0; pages <= ALL.length; pages++) {
        const next: Page<Delivery> = await page(
          f.session,
          f.connectionId,
          `limit=1&${query}${cursor ? `&cursor=${cursor}` : ''}`,
        );
        seen.push(...next.data.map((entry) => entry.id));
        cursor = next.nextCursor;
        if (!cursor) break;
      }
      assert.equal(cursor, null, `${query}: paging by one never ended`);
      assert.deepEqual(
        seen.map(nameOf),
        expected(names).map(nameOf),
        `${query}: pages of one answer other deliveries`,
      );
    }
  });

  test('a cursor is refused with a filter added, left off or changed; the same filters in another spelling keep it', async () => {
    const first = await page(
      f.session,
      f.connectionId,
      `limit=1&status=failed&since=${f.d.created.createdAt}`,
    );
    assert.ok(first.nextCursor, 'a first page of one of three failed deliveries offers no next page');
    const cursor = first.nextCursor;
    const since = `since=${f.d.created.createdAt}`;
    for (const query of [
      `status=failed`,
      since,
      '',
      `status=failed&${since}&eventType=*`,
      `status=failed&${since}&test=false`,
      `status=delivered&${since}`,
      `status=failed,delivered&${since}`,
      `status=failed&since=${f.d.updated.createdAt}`,
    ]) {
      const r = await h.request<Problem>(
        'GET',
        `${eventsOf(f.connectionId)}?limit=1&${query}&cursor=${cursor}`,
        {
          session: f.session,
        },
      );
      assertProblem(
        r,
        400,
        'validation_failed',
        `a cursor of status=failed&${since} used with ${query || 'no filter'}`,
      );
      assert.equal(
        r.body.errors?.[0]?.path,
        'querystring.cursor',
        `${query}: the error does not name the cursor`,
      );
    }
    const sameInstant = encodeURIComponent(f.d.created.createdAt.replace('Z', '+00:00'));
    for (const query of [`status=failed,failed&${since}`, `since=${sameInstant}&status=failed`]) {
      const r = await page(f.session, f.connectionId, `limit=2&${query}&cursor=${cursor}`);
      assert.deepEqual(
        r.data.map((entry) => nameOf(entry.id)),
        expected(['underscore', 'paid']).map(nameOf),
        `${query}: the same filters spelt otherwise do not go on from the cursor`,
      );
    }
    const unfiltered = await page(f.session, f.connectionId, 'limit=1');
    const r = await h.request<Problem>(
      'GET',
      `${eventsOf(f.connectionId)}?limit=1&status=failed&cursor=${unfiltered.nextCursor}`,
      { session: f.session },
    );
    assertProblem(r, 400, 'validation_failed', 'a cursor of the unfiltered log used with a filter');
    assert.equal(r.body.errors?.[0]?.path, 'querystring.cursor', 'the error does not name the cursor');
  });

  test('a cursor is valid only on the log of the connection that made it; a forged one is refused', async () => {
    const first = await page(f.session, f.connectionId, 'limit=1');
    assert.ok(first.nextCursor, 'a first page of one offers no next page');
    // A second connection of the same tenant, which no event reaches, and another tenant's.
    const second = await makeWebhookConnection(h, f.session, f.receiver.url('/second'), {
      eventTypes: ['nothing.reaches.this'],
    });
    for (const [who, session, connectionId] of [
      ['another connection of the same tenant', f.session, second.id],
      ["another tenant's connection", f.other.session, f.other.connectionId],
    ] as const) {
      const r: TestResponse<Problem> = await h.request<Problem>(
        'GET',
        `${eventsOf(connectionId)}?limit=1&cursor=${first.nextCursor}`,
        {
          session,
        },
      );
      assertProblem(r, 400, 'validation_failed', `a cursor of one connection's log used on ${who}`);
      assert.equal(
        r.body.errors?.[0]?.path,
        'querystring.cursor',
        `${who}: the error does not name the cursor`,
      );
    }
    // Cursors written by the client, in the service's format: positions of its own log.
    const [at, id] = JSON.parse(Buffer.from(first.nextCursor, 'base64url').toString()) as string[];
    const write = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    for (const [what, forged] of [
      ['without a signature', write([at, id])],
      ['with a made-up signature', write([at, id, 'x'.repeat(22)])],
      ['with a made-up filter digest, as cursors were', write([at, id, 'A'.repeat(22)])],
    ]) {
      const r = await h.request<Problem>('GET', `${eventsOf(f.connectionId)}?limit=1&cursor=${forged}`, {
        session: f.session,
      });
      assertProblem(r, 400, 'validation_failed', `a forged cursor ${what}`);
    }
    // The cursor still pages its own log.
    const next = await page(f.session, f.connectionId, `limit=1&cursor=${first.nextCursor}`);
    assert.deepEqual(
      next.data.map((entry) => nameOf(entry.id)),
      expected(ALL).slice(1, 2).map(nameOf),
      'the cursor no longer reads the next page of its own log',
    );
  });

  test('unknown values are 400 naming the field, before the connection is looked up, and change nothing', async () => {
    const hostile: Array<[string, string]> = [
      ['status=unknown', 'status'],
      ['status=FAILED', 'status'],
      ['status=failed,', 'status'],
      ['status=,failed', 'status'],
      ['status=failed,,delivered', 'status'],
      ['status=failed;delivered', 'status'],
      ['status=', 'status'],
      ['status=failed&status=delivered', 'status'],
      ['eventType=Employee.*', 'eventType'],
      ['eventType=a%25', 'eventType'],
      ['eventType=a%20b', 'eventType'],
      ["eventType=a'b", 'eventType'],
      ['eventType=a%5Cb', 'eventType'],
      ['eventType=', 'eventType'],
      [`eventType=${'a'.repeat(101)}`, 'eventType'],
      ['eventId=evt_short', 'eventId'],
      ['eventId=con_0000000000000000000000', 'eventId'],
      ['eventId=evt_000000000000000000000%25', 'eventId'],
      ['since=yesterday', 'since'],
      ['since=2026-02-30T00:00:00Z', 'since'],
      ['since=2026-01-01', 'since'],
      ['since=2026-01-01T00:00:00', 'since'],
      ['since=2026-01-01%2000:00:00Z', 'since'],
      ['since=2026-01-01T24:00:00Z', 'since'],
      ['since=2026-01-01T00:00:00.0000000001Z', 'since'],
      ['since=2026-01-01T00:00:00%2B25:00', 'since'],
      ['since=%2B2026-01-01T00:00:00Z', 'since'],
      ['until=1', 'until'],
      ['since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z', 'since'],
      ['test=maybe', 'test'],
      ['test=1', 'test'],
      ['test=', 'test'],
      ['test=TRUE', 'test'],
      ['responseStatus=6xx', 'responseStatus'],
      ['responseStatus=2xxx', 'responseStatus'],
      ['responseStatus=099', 'responseStatus'],
      ['responseStatus=600', 'responseStatus'],
      ['responseStatus=2XX', 'responseStatus'],
      ['responseStatus=3xx', 'responseStatus'],
      ['responseStatus=20', 'responseStatus'],
      ['responseStatus=', 'responseStatus'],
      ['responseStatus=%202xx', 'responseStatus'],
      ['sort=createdAt', 'sort'],
    ];
    const before = await idsFor('');
    const errors = () =>
      h
        .logs()
        .split('\n')
        .filter((line) => line.includes('"level":50')).length;
    const errorsBefore = errors();
    const unknown = `${CONNECTIONS}/con_0000000000000000000000/events`;
    for (const [query, field] of hostile) {
      for (const path of [eventsOf(f.connectionId), unknown]) {
        const r = await h.request<Problem>('GET', `${path}?${query}`, { session: f.session });
        assertProblem(r, 400, 'validation_failed', `?${query} on ${path}`);
        assert.ok(
          r.body.errors?.some((e) => e.path === `querystring.${field}`),
          `?${query}: the error does not name querystring.${field}: ${JSON.stringify(r.body.errors)}`,
        );
      }
    }
    assert.deepEqual(await idsFor(''), before, 'refused filters changed the log');
    assert.equal(errors(), errorsBefore, 'a refused filter was logged as an error');
  });
});

/** A stored request or response's header, whatever the case of its name. */
const header = (headers: Record<string, string> | undefined, name: string): string | undefined =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];

describe('attempts show what was sent and what was answered', () => {
  test('a webhook: the signed request and each answer, and the payload the signature covers', async (t) => {
    const receiver = await startReceiver(t, (_got, i, res) => {
      res.statusCode = i < 2 ? 503 : 200;
      res.setHeader('x-attempt', String(i + 1));
      res.setHeader('content-type', 'application/json');
      res.end(i < 2 ? '{"error":"down for maintenance"}' : '{"ok":true}');
    });
    const { session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, receiver.url('/inspect'));
    const published = await publishEvent(h, session, {
      type: 'employee.created',
      data: { name: 'Ada', n: 1.5 },
    });
    const [entry] = await waitForDeliveries(h, session, hook.id, { settled: 1 });
    assert.equal(entry.status, 'delivered', 'the delivery to a receiver that heals is not delivered');
    assert.equal(entry.test, false, 'a published event is shown as a test delivery');
    assert.equal(entry.waitingFor, null, 'an unordered delivery waits for another');
    assert.equal(entry.attempts.length, 3, 'two failures and a success are not three attempts');
    const got = await receiver.waitFor(3);
    entry.attempts.forEach((attempt, i) => {
      const { request, response } = attempt;
      assert.ok(request, `attempt ${i + 1} does not show its request`);
      assert.equal(request.method, 'POST', `attempt ${i + 1}: the request's method`);
      assert.equal(request.url, receiver.url('/inspect'), `attempt ${i + 1}: the request's URL`);
      for (const name of [
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
        'content-type',
        'user-agent',
      ])
        assert.equal(
          header(request.headers, name),
          got[i]!.headers[name],
          `attempt ${i + 1}: the stored ${name} is not what the receiver got`,
        );
      assert.equal(
        header(request.headers, 'webhook-id'),
        published.body.id,
        'webhook-id is not the event ID',
      );
      assert.match(header(request.headers, 'webhook-signature') ?? '', /^v1,/, 'the signature is not shown');
      assert.ok(response, `attempt ${i + 1} does not show the answer`);
      assert.equal(
        header(response.headers, 'x-attempt'),
        String(i + 1),
        `attempt ${i + 1}: the answer's headers`,
      );
      assert.equal(
        response.body,
        i < 2 ? '{"error":"down for maintenance"}' : '{"ok":true}',
        `attempt ${i + 1}: the answer's body`,
      );
      assert.equal(response.bodyTruncated, false, `attempt ${i + 1}: a short body is shown as truncated`);
    });
    const one = await detail(session, hook.id, entry.id);
    const { payload, ...rest } = one;
    assert.deepEqual(rest, entry, "one delivery's read is not its log entry");
    assert.deepEqual(payload, JSON.parse(got[0]!.body), 'the payload is not the body the receiver got');
    const last = entry.attempts[2]!.request!.headers;
    new Webhook(hook.secret).verify(JSON.stringify(payload), {
      'webhook-id': header(last, 'webhook-id')!,
      'webhook-timestamp': header(last, 'webhook-timestamp')!,
      'webhook-signature': header(last, 'webhook-signature')!,
    });
  });

  test('the http connector: the credential header is [redacted] wherever the log shows it, never its value', async (t) => {
    const receiver = await startReceiver(t, (_got, _i, res) => {
      res.statusCode = 422;
      res.end('{"error":"unknown employee"}');
    });
    const { session } = await makeSignedInTenant(h);
    const secret = 'Bearer inspect-header-secret-0042';
    const c = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'erp',
      url: receiver.url('/erp'),
      method: 'PUT',
    });
    await bindCredentials(h, session, c.id, { headerName: 'X-Api-Key', headerValue: secret });
    await publishEvent(h, session, { type: 'employee.updated', data: { id: 7 } });
    const [entry] = await waitForDeliveries(h, session, c.id, { settled: 1 });
    const [got] = await receiver.waitFor(1);
    assert.equal(got!.headers['x-api-key'], secret, 'the receiver did not get the bound header');
    assert.equal(entry.status, 'failed', 'a delivery answered 422 three times is not failed');
    for (const attempt of entry.attempts) {
      assert.equal(attempt.request?.method, 'PUT', "the request's method is not the connection's");
      assert.equal(
        header(attempt.request?.headers, 'x-api-key'),
        '[redacted]',
        'the credential header is not redacted',
      );
      assert.equal(
        attempt.response?.body,
        '{"error":"unknown employee"}',
        "the failing receiver's answer is not readable",
      );
    }
    const one = await detail(session, c.id, entry.id);
    assert.deepEqual(one.payload, JSON.parse(got!.body), 'the payload is not the body the receiver got');
    await assertLog(session, c.id, 'responseStatus=422', [entry.id]);
    await assertLog(session, c.id, 'responseStatus=4xx&status=failed', [entry.id]);
    const responses = h.responses().filter((text) => text.includes(entry.id));
    assert.ok(responses.length > 0, 'the test read nothing of the delivery');
    assert.ok(
      !responses.some((text) => text.includes('inspect-header-secret')),
      'the header value was shown',
    );
  });

  test('a long answer keeps its first 4096 bytes and at most 20 headers; no answer at all is null', async (t) => {
    const receiver = await startReceiver(t, (_got, _i, res) => {
      res.statusCode = 500;
      for (let i = 0; i < 30; i++) res.setHeader(`x-extra-${i}`, String(i));
      res.end('é'.repeat(3000));
    });
    const { session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, receiver.url('/long'), { eventTypes: ['long.*'] });
    await publishEvent(h, session, { type: 'long.answer' });
    const [entry] = await waitForDeliveries(h, session, hook.id, { settled: 1 });
    const response = entry.attempts[0]!.response;
    assert.ok(response, 'a 500 answer is not shown');
    assert.equal(response.bodyTruncated, true, 'a 6000-byte answer is not shown as truncated');
    assert.ok(
      Buffer.byteLength(response.body ?? '') <= 4096 + 3,
      'more than 4096 bytes of the answer are kept',
    );
    assert.ok(
      (response.body ?? '').startsWith('é'.repeat(100)),
      'the start of the answer is not kept as UTF-8',
    );
    assert.ok(Object.keys(response.headers).length <= 20, 'more than 20 answer headers are kept');

    const closed = await startReceiver();
    const url = closed.url('/gone');
    await closed.close();
    const refused = await makeWebhookConnection(h, session, url);
    await publishEvent(h, session, { type: 'nobody.listens' });
    const [lost] = await waitForDeliveries(h, session, refused.id, { settled: 1 });
    assert.equal(lost.attempts[0]!.error, 'connection_error', 'a closed port is not a connection error');
    assert.equal(lost.attempts[0]!.response, null, 'an attempt nobody answered shows an answer');
    assert.equal(
      lost.attempts[0]!.request?.url,
      url,
      'an attempt nobody answered does not show what it sent',
    );
    await assertLog(session, refused.id, 'responseStatus=5xx', []);
    await assertLog(session, hook.id, 'responseStatus=500', [entry.id]);
  });

  test('attempts recorded before requests and answers were kept show null for both', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, receiver.url('/old'));
    await publishEvent(h, session, { type: 'old.attempt' });
    const [entry] = await waitForDeliveries(h, session, hook.id, { settled: 1 });
    await sql`update delivery_attempts set request = null, response = null
      where delivery_id = ${entry.id}`.execute(h.database.kysely);
    const [old] = (await page(session, hook.id, '')).data;
    assert.equal(old?.attempts[0]?.request, null, 'an old attempt shows a request');
    assert.equal(old?.attempts[0]?.response, null, 'an old attempt shows an answer');
    assert.equal(old?.attempts[0]?.responseStatus, 200, 'an old attempt lost its status');
  });
});

async function assertLog(session: TestSession, connectionId: string, query: string, ids: string[]) {
  const log = await page(session, connectionId, `limit=100&${query}`);
  assert.deepEqual(
    log.data.map((entry) => entry.id),
    ids,
    `?${query} on ${connectionId} answers other deliveries`,
  );
}

describe("one delivery's read", () => {
  test('a Slack message as Slack gets it, without the webhook URL that is its secret', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const c = await createConnection(h, session, { connectorKey: 'slack', displayName: 'alerts' });
    const webhookUrl = receiver.url('/services/T000/B000/slack-secret-path');
    await bindCredentials(h, session, c.id, { webhookUrl });
    const published = await publishEvent(h, session, { type: 'invoice.paid', data: { amount: 12 } });
    const [entry] = await waitForDeliveries(h, session, c.id, { settled: 1 });
    const [got] = await receiver.waitFor(1);
    const one = await detail(session, c.id, entry.id);
    assert.deepEqual(
      one.payload,
      JSON.parse(got!.body),
      'the payload is not the Slack message that was sent',
    );
    assert.match(String(one.payload.text), /invoice\.paid/, 'the Slack message does not name the event type');
    assert.ok(
      String(one.payload.text).includes(published.body.id),
      'the Slack message does not name the event',
    );
    const r = await h.request('GET', `${eventsOf(c.id)}/${entry.id}`, { session });
    assert.ok(!r.text.includes('slack-secret-path'), "one delivery's read shows the Slack webhook URL");
  });

  test('a delivery not sent yet shows the body it will be sent with; so does one whose credentials are gone', async (t) => {
    const receiver = await startReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const c = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'later',
      url: receiver.url('/later'),
    });
    await bindCredentials(h, session, c.id, {
      headerName: 'Authorization',
      headerValue: 'Bearer later-secret-77',
    });
    await pause(h, session, c.id);
    const published = await publishEvent(h, session, { type: 'employee.created', data: { who: 'Grace' } });
    const [skipped] = await waitForDeliveries(h, session, c.id, { statuses: ['skipped'] });
    assert.ok(skipped, 'an event published to a paused connection is not recorded as skipped');
    const expectedBody = {
      id: published.body.id,
      type: 'employee.created',
      timestamp: published.body.createdAt,
      data: { who: 'Grace' },
    };
    const one = await detail(session, c.id, skipped.id);
    assert.deepEqual(
      one.payload,
      expectedBody,
      'a skipped delivery does not show the body it will be sent with',
    );
    assert.deepEqual(one.attempts, [], 'a delivery never sent shows attempts');
    await sql`update connections set credentials_sealed = null where id = ${c.id}`.execute(h.database.kysely);
    const unbound = await detail(session, c.id, skipped.id);
    assert.deepEqual(unbound.payload, expectedBody, 'a connection without credentials renders another body');
    assert.equal(receiver.received.length, 0, 'reading a delivery sent it');
  });

  test('readers may read it: a MEMBER and a READER key; the key as the automation allowlist says', async (t) => {
    const receiver = await startReceiver(t);
    const { tenant, session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, receiver.url('/readers'));
    await publishEvent(h, session, { type: 'a.b' });
    const [entry] = await waitForDeliveries(h, session, hook.id, { settled: 1 });
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    assert.equal((await detail(member, hook.id, entry.id)).id, entry.id, 'a MEMBER cannot read a delivery');
    const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const path = `${eventsOf(hook.id)}/${entry.id}`;
    const byKey = await h.request<Detail>('GET', path, { token: reader.secret });
    assert.equal(byKey.status, 200, `a READER key cannot read a delivery: ${byKey.text}`);
    const filtered = await h.request('GET', `${eventsOf(hook.id)}?status=delivered&eventType=a.*`, {
      token: reader.secret,
    });
    assert.equal(filtered.status, 200, `a READER key cannot filter the log: ${filtered.text}`);
    const capabilities = await h.request('GET', '/api/v1/automation/capabilities', { token: reader.secret });
    const listed = capabilities.body.routes.map(
      (r: { method: string; path: string }) => `${r.method} ${r.path}`,
    );
    assert.ok(
      listed.includes('GET /api/v1/integrations/connections/:id/events/:deliveryId'),
      `a READER key's capabilities do not list the delivery's read: ${JSON.stringify(listed)}`,
    );
  });

  test("another tenant's delivery, another connection's, an unknown and a malformed ID are 404", async (t) => {
    const receiver = await startReceiver(t);
    const mine = await makeSignedInTenant(h);
    const theirs = await makeSignedInTenant(h);
    const ours = await makeWebhookConnection(h, mine.session, receiver.url('/mine'));
    const sibling = await makeWebhookConnection(h, mine.session, receiver.url('/sibling'), {
      eventTypes: ['never.*'],
    });
    const foreign = await makeWebhookConnection(h, theirs.session, receiver.url('/theirs'));
    await publishEvent(h, mine.session, { type: 'a.b' });
    await publishEvent(h, theirs.session, { type: 'a.b' });
    const [own] = await waitForDeliveries(h, mine.session, ours.id, { settled: 1 });
    const [other] = await waitForDeliveries(h, theirs.session, foreign.id, { settled: 1 });
    const key = await makeKey(h, mine.session, { scopes: ['integrations:ADMIN'] });
    const pairs: Array<[string, string]> = [
      [foreign.id, other.id],
      [ours.id, other.id],
      [foreign.id, own.id],
      [sibling.id, own.id],
      [ours.id, 'dlv_0000000000000000000000'],
      [ours.id, 'dlv_short'],
      [ours.id, 'not-an-id'],
      [ours.id, own.id.toLowerCase()],
      ['con_0000000000000000000000', own.id],
    ];
    for (const [connectionId, deliveryId] of pairs) {
      for (const credential of [{ session: mine.session }, { token: key.secret }]) {
        const r = await h.request<Problem>('GET', `${eventsOf(connectionId)}/${deliveryId}`, credential);
        assertProblem(r, 404, 'not_found', `GET …/${connectionId}/events/${deliveryId}`);
        assert.ok(!r.text.includes(other.eventId), "a 404 shows another tenant's event");
      }
    }
    const log = await h.request<Problem>('GET', `${eventsOf(foreign.id)}?status=delivered`, {
      session: mine.session,
    });
    assertProblem(log, 404, 'not_found', "another tenant's filtered log");
    assert.equal(
      (await detail(mine.session, ours.id, own.id)).id,
      own.id,
      'the owner cannot read its delivery',
    );
  });
});
