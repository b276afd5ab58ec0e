import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { purgeExpired } from '../../src/delivery/retention.js';
import { publishEvent, type Delivery, type Page } from '../helpers/events.js';
import {
  makeKey,
  makeSignedInTenant,
  makeUser,
  makeWebhookConnection,
  signIn,
} from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { CONNECTIONS } from '../helpers/operate.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

// docs/api/events.md, Filtered events: what a connection's payload filter dropped is counted and the
// most recent events are listed (a session route, off the automation allowlist); and the event log
// shows the ordering key a per-key connection orders a delivery by. Receivers on 127.0.0.1 only.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_TIMEOUT_MS: '5000',
  RATE_LIMIT_PER_MINUTE: '1000000',
};

interface FilteredPage {
  data: Array<{ eventId: string; eventType: string; createdAt: string }>;
  nextCursor: string | null;
  total: number;
  since: string | null;
  lastAt: string | null;
}

let h: Harness;
let receiver: Receiver;
before(async () => {
  receiver = await startReceiver();
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(async () => {
  await h.close();
  await receiver.close();
});

const filteredOf = (id: string, query = '') => `${CONNECTIONS}/${id}/filtered-events${query}`;

async function filtered(session: TestSession, id: string, query = ''): Promise<FilteredPage> {
  const r = await h.request<FilteredPage>('GET', filteredOf(id, query), { session });
  assert.equal(r.status, 200, `GET ${filteredOf(id, query)} answered ${r.status}: ${r.text}`);
  return r.body;
}

async function publishBatch(session: TestSession, events: unknown[]): Promise<Array<{ id: string }>> {
  const r = await h.request<{ data: Array<{ id: string }> }>('POST', '/api/v1/integrations/events/batch', {
    session,
    body: { events },
  });
  assert.equal(r.status, 202, `the batch answered ${r.status}: ${r.text}`);
  return r.body.data;
}

/** A tenant with a gold-only connection on `order.*` and one that takes every event. */
async function fixture() {
  const { session, tenant } = await makeSignedInTenant(h);
  const gold = await makeWebhookConnection(h, session, receiver.url('/gold'), {
    displayName: 'Gold orders',
    eventTypes: ['order.*'],
    filter: { 'data.tier': 'gold' },
  });
  const all = await makeWebhookConnection(h, session, receiver.url('/all'), { displayName: 'All' });
  return { session, tenant, gold, all };
}

describe('filtered events', () => {
  test('every publish path records what a filter dropped: listed newest first, with its count', async () => {
    const { session, gold, all } = await fixture();
    const kept = await publishEvent(h, session, { type: 'order.paid', data: { tier: 'gold' } });
    assert.equal(kept.body.deliveries, 2, 'the gold event did not go to both connections');
    const single = await publishEvent(h, session, { type: 'order.paid', data: { tier: 'silver' } });
    assert.equal(single.body.deliveries, 1, 'the silver event was not filtered out of the gold connection');
    // Not taken by the connection's eventTypes: that is not the filter's doing, and not listed.
    await publishEvent(h, session, { type: 'user.created', data: { tier: 'silver' } });
    const keyed = await publishEvent(
      h,
      session,
      { type: 'order.refunded', data: { tier: 'bronze' } },
      { headers: { 'idempotency-key': 'refund-1' } },
    );
    const [grouped, batchKeyed] = await publishBatch(session, [
      { type: 'order.shipped', data: { tier: 'silver' } },
      { type: 'order.shipped', data: { tier: 'silver' }, idempotencyKey: 'ship-2' },
    ]);
    // The same key again answers the first event and records nothing more.
    await publishEvent(
      h,
      session,
      { type: 'order.refunded', data: { tier: 'bronze' } },
      { headers: { 'idempotency-key': 'refund-1' } },
    );

    const page = await filtered(session, gold.id);
    const ids = page.data.map((e) => e.eventId);
    const expected = [single.body.id, keyed.body.id, grouped!.id, batchKeyed!.id];
    assert.deepEqual(new Set(ids), new Set(expected), `the filtered list is ${JSON.stringify(page.data)}`);
    assert.equal(page.total, 4, 'the count is not the number of events dropped');
    assert.equal(page.nextCursor, null, 'four events took a second page');
    const times = page.data.map((e) => Date.parse(e.createdAt));
    assert.deepEqual(
      times,
      [...times].sort((a, b) => b - a),
      'the list is not newest first',
    );
    const first = page.data.find((e) => e.eventId === single.body.id)!;
    assert.equal(first.eventType, 'order.paid', 'the entry does not name its event type');
    assert.equal(first.createdAt, single.body.createdAt, "an entry's time is not its event's");
    assert.equal(page.since, single.body.createdAt, '`since` is not the first dropped event');
    assert.equal(page.lastAt, new Date(Math.max(...times)).toISOString(), '`lastAt` is not the last one');

    const none = await filtered(session, all.id);
    assert.deepEqual(
      none,
      { data: [], nextCursor: null, total: 0, since: null, lastAt: null },
      'a connection without a filter lists filtered events',
    );
  });

  test('the most recent 100 are kept and paged, every one is counted, retention forgets them', async () => {
    const { session, gold } = await fixture();
    const silver = (n: number) => ({ type: 'order.paid', data: { tier: 'silver', n } });
    const published = [
      ...(await publishBatch(
        session,
        Array.from({ length: 100 }, (_, n) => silver(n)),
      )),
      ...(await publishBatch(
        session,
        Array.from({ length: 5 }, (_, n) => silver(100 + n)),
      )),
    ].map((e) => e.id);

    const firstPage = await filtered(session, gold.id, '?limit=60');
    assert.equal(firstPage.total, 105, 'not every dropped event was counted');
    assert.equal(firstPage.data.length, 60, 'the first page does not hold its limit');
    assert.ok(firstPage.nextCursor, 'a second page was not offered');
    const secondPage = await filtered(
      session,
      gold.id,
      `?limit=60&cursor=${encodeURIComponent(firstPage.nextCursor)}`,
    );
    assert.equal(secondPage.nextCursor, null, 'a third page was offered');
    const listed = [...firstPage.data, ...secondPage.data].map((e) => e.eventId);
    assert.equal(listed.length, 100, 'more or fewer than the last 100 are kept');
    assert.deepEqual(new Set(listed), new Set(published.slice(5)), 'the kept ones are not the last 100');

    // A cursor of this list is refused on another connection's.
    const other = await makeWebhookConnection(h, session, receiver.url('/other'), {
      filter: { 'data.tier': 'gold' },
    });
    const crossed = await h.request(
      'GET',
      filteredOf(other.id, `?cursor=${encodeURIComponent(firstPage.nextCursor)}`),
      { session },
    );
    assert.equal(crossed.status, 400, `a cursor of another list answered ${crossed.status}: ${crossed.text}`);

    const now = new Date();
    await purgeExpired(h.database.kysely, now, new Date(now.getTime() + 60_000), h.database.engine);
    const after = await filtered(session, gold.id);
    assert.deepEqual(after.data, [], 'retention kept filtered events older than its cutoff');
    assert.equal(after.total, 105, 'retention changed the count');
  });

  test('publishes at the same time are each counted and kept once', async () => {
    const { session, gold } = await fixture();
    const published = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        publishEvent(h, session, { type: 'order.paid', data: { tier: 'silver', n } }),
      ),
    );
    const page = await filtered(session, gold.id, '?limit=100');
    assert.equal(page.total, 30, 'concurrent publishes lost or doubled a count');
    assert.deepEqual(
      new Set(page.data.map((e) => e.eventId)),
      new Set(published.map((p) => p.body.id)),
      'concurrent publishes lost or overwrote a kept event',
    );
  });

  test('sessions of every role read it; another tenant gets 404 and a tenant key 403', async () => {
    const { session, tenant, gold } = await fixture();
    const dropped = await publishEvent(h, session, { type: 'order.paid', data: { tier: 'tin' } });
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    const read = await filtered(member, gold.id);
    assert.deepEqual(
      read.data.map((e) => e.eventId),
      [dropped.body.id],
      'a member does not read the filtered events',
    );

    const stranger = await makeSignedInTenant(h);
    for (const id of [gold.id, 'con_0000000000000000000000', 'nonsense']) {
      const r = await h.request('GET', filteredOf(id), { session: stranger.session });
      assert.equal(r.status, 404, `another tenant's read of ${id} answered ${r.status}: ${r.text}`);
      assert.doesNotMatch(r.text, new RegExp(dropped.body.id), 'the 404 names the event');
    }
    const key = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const byKey = await h.request('GET', filteredOf(gold.id), { token: key.secret });
    assert.equal(byKey.status, 403, `a tenant key answered ${byKey.status}: ${byKey.text}`);
    assert.equal(byKey.body.code, 'route_not_allowed', 'a tenant key is not told the route is off its list');
    const bad = await h.request('GET', filteredOf(gold.id, '?limit=0'), { session });
    assert.equal(bad.status, 400, `limit=0 answered ${bad.status}`);
  });
});

describe('the ordering key in the event log', () => {
  test('a per-key connection shows the key of each delivery, an unordered one null', async () => {
    const { session } = await makeSignedInTenant(h);
    const ordered = await makeWebhookConnection(h, session, receiver.url('/ordered'), {
      ordering: 'per-key',
    });
    const plain = await makeWebhookConnection(h, session, receiver.url('/plain'));
    const r = await h.request<{ id: string }>('POST', '/api/v1/integrations/events', {
      session,
      body: { type: 'order.paid', data: {}, orderingKey: 'order-7' },
    });
    assert.equal(r.status, 202, r.text);
    const logOf = async (id: string) => {
      const log = await h.request<Page<Delivery & { orderingKey?: string | null }>>(
        'GET',
        `${CONNECTIONS}/${id}/events`,
        { session },
      );
      assert.equal(log.status, 200, log.text);
      return log.body.data;
    };
    const [entry] = await logOf(ordered.id);
    assert.equal(entry?.orderingKey, 'order-7', 'the log entry does not show its ordering key');
    assert.equal(entry?.waitingFor, null, 'the first delivery of its key waits');
    const [unordered] = await logOf(plain.id);
    assert.equal(unordered?.orderingKey, null, 'an unordered delivery shows a key it is not ordered by');
    const detail = await h.request<{ orderingKey?: string | null }>(
      'GET',
      `${CONNECTIONS}/${ordered.id}/events/${entry!.id}`,
      { session },
    );
    assert.equal(detail.body.orderingKey, 'order-7', 'the delivery read does not show its ordering key');
  });
});
