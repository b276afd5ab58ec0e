import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { TenantScope } from '../../src/access/scope.js';
import { loadConnectorCatalog } from '../../src/connections/catalog.js';
import type { AppContext } from '../../src/context.js';
import { createEventWriter } from '../../src/delivery/group-commit.js';
import type { Problem, PublishedEvent } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import {
  CONNECTIONS,
  logOf,
  operate,
  patchConnection,
  pause,
  readConnection,
  resume,
} from '../helpers/operate.js';
import { startReceiver, type Received } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// docs/api/events.md, Ordering: on a `per-key` connection, deliveries of one `orderingKey` are attempted
// one at a time in publish order, through retries, manual retry, recover, pause and resume; keys are
// independent, and unordered connections are not affected. Receivers listen on 127.0.0.1 only.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  // Three attempts, about a second apart: a failing head holds its key for about two seconds.
  DELIVERY_RETRY_SCHEDULE: '1,1',
  DELIVERY_TIMEOUT_MS: '5000',
  RATE_LIMIT_PER_MINUTE: '1000000',
};

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

interface Arrival {
  key: string;
  n: number;
  eventId: string;
}

/**
 * A receiver that records, per key, the order events arrive in and how many of a key were being
 * answered at once (at most one when ordered). `respond` decides each answer's status; each answer
 * takes `slowMs`, so a second attempt of the same key started meanwhile would overlap.
 */
async function orderReceiver(
  t: TestContext,
  options: { slowMs?: number; status?: (arrival: Arrival, received: Received) => number } = {},
) {
  const arrivals: Arrival[] = [];
  const inFlight = new Map<string, number>();
  let overlaps = 0;
  const receiver = await startReceiver(t, (r, _i, res) => {
    const body = JSON.parse(r.body) as { id: string; data: { key: string; n: number } };
    const arrival = { key: body.data.key, n: body.data.n, eventId: body.id };
    arrivals.push(arrival);
    const now = (inFlight.get(arrival.key) ?? 0) + 1;
    inFlight.set(arrival.key, now);
    if (now > 1) overlaps++;
    setTimeout(() => {
      inFlight.set(arrival.key, (inFlight.get(arrival.key) ?? 1) - 1);
      res.statusCode = options.status?.(arrival, r) ?? 200;
      res.end();
    }, options.slowMs ?? 20);
  });
  const ofKey = (key: string) => arrivals.filter((a) => a.key === key).map((a) => a.n);
  return { receiver, arrivals, ofKey, overlaps: () => overlaps };
}

/** Publishes `{key, n}` with the key as its `orderingKey`, one after another as listed. */
async function publishInOrder(
  session: TestSession,
  events: ReadonlyArray<{ key: string; n: number }>,
): Promise<Map<string, PublishedEvent>> {
  const published = new Map<string, PublishedEvent>();
  for (const e of events) {
    const r = await h.request<PublishedEvent>('POST', '/api/v1/integrations/events', {
      session,
      body: { type: 'order.updated', data: e, orderingKey: e.key },
    });
    assert.equal(
      r.status,
      202,
      `publishing ${e.key}#${e.n} with an orderingKey answered ${r.status}: ${r.text}`,
    );
    published.set(`${e.key}#${e.n}`, r.body);
  }
  return published;
}

async function orderedHook(session: TestSession, url: string, extra: Record<string, unknown> = {}) {
  return makeWebhookConnection(h, session, url, { ordering: 'per-key', ...extra });
}

const interleaved = (keys: readonly string[], count: number) =>
  Array.from({ length: count }, (_, i) => keys.map((key) => ({ key, n: i + 1 }))).flat();
const upTo = (count: number) => Array.from({ length: count }, (_, i) => i + 1);

describe('ordering per key', () => {
  test('the field is accepted on create and edit, returned on the connection, and checked', async () => {
    const { session } = await makeSignedInTenant(h);
    const made = await orderedHook(session, 'http://127.0.0.1:9/hook');
    const read = await readConnection(h, session, made.id);
    assert.equal(
      read.config.ordering,
      'per-key',
      'the connection does not show the ordering it was created with',
    );
    const edited = await patchConnection(h, session, made.id, { ordering: 'none' });
    assert.equal(edited.status, 200, `editing the ordering answered ${edited.status}: ${edited.text}`);
    assert.equal(edited.body.config.ordering, 'none', 'the edit of the ordering is not shown');
    const bad = await patchConnection(h, session, made.id, { ordering: 'fifo' });
    assert.equal(bad.status, 400, 'an unknown ordering is accepted');
    assert.match(bad.text, /ordering/, 'the 400 for an unknown ordering does not name the field');
    const after = await readConnection(h, session, made.id);
    assert.equal(after.config.ordering, 'none', 'a refused edit changed the ordering');
  });

  test('one key: arrival in publish order, one at a time; a later one shows waitingFor its predecessor', async (t) => {
    const r = await orderReceiver(t, { slowMs: 150 });
    const { session } = await makeSignedInTenant(h);
    const hook = await orderedHook(session, r.receiver.url());
    await publishInOrder(session, interleaved(['k1'], 4));
    // While the first is being answered (150 ms each), the next waits for it, and says so.
    const log = await waitUntil(
      async () => {
        const entries = await logOf(h, session, hook.id);
        return entries.length === 4 && entries.some((d) => d.waitingFor !== null) && entries;
      },
      { message: 'a delivery of the key shown waiting for the one before it' },
    );
    const byCreated = [...log].reverse();
    for (const d of log.filter((x) => x.waitingFor !== null)) {
      const index = byCreated.findIndex((x) => x.id === d.id);
      assert.equal(
        d.waitingFor,
        byCreated[index - 1]?.id,
        'a delivery waits for other than the one before it',
      );
      assert.equal(d.status, 'pending', 'a waiting delivery is not pending');
      assert.equal(d.nextAttemptAt, null, 'a waiting delivery shows a time for its next attempt');
    }
    await r.receiver.waitFor(4);
    assert.deepEqual(r.ofKey('k1'), upTo(4), 'the receiver got the key out of publish order');
    assert.equal(r.overlaps(), 0, 'two deliveries of one key were in flight at once');
    const done = await waitUntil(
      async () => {
        const entries = await logOf(h, session, hook.id);
        return entries.every((d) => d.status === 'delivered') && entries;
      },
      { message: 'every delivery of the key delivered' },
    );
    assert.ok(
      done.every((d) => d.waitingFor === null),
      'a delivered delivery still shows waitingFor',
    );
  });

  test('a failing head holds its key through its retries while other keys flow; once failed, the next goes', async (t) => {
    let headAttempts = 0;
    const r = await orderReceiver(t, {
      status: (a) => (a.key === 'stuck' && a.n === 1 ? (headAttempts++, 500) : 200),
    });
    const { session } = await makeSignedInTenant(h);
    const hook = await orderedHook(session, r.receiver.url());
    const published = await publishInOrder(session, interleaved(['stuck', 'free'], 3));
    // The free key is delivered while the stuck key's head is still being retried.
    await waitUntil(() => r.ofKey('free').length === 3, { message: 'the free key delivered meanwhile' });
    assert.deepEqual(r.ofKey('free'), upTo(3), 'the free key arrived out of order');
    const during = await logOf(h, session, hook.id);
    const head = during.find((d) => d.eventId === published.get('stuck#1')!.id)!;
    const second = during.find((d) => d.eventId === published.get('stuck#2')!.id)!;
    assert.notEqual(
      head.status,
      'failed',
      'the head failed before the free key was delivered: the test proves nothing',
    );
    assert.equal(
      second.waitingFor,
      head.id,
      'the second of the stuck key does not show it waits for the head',
    );
    assert.ok(
      !r.ofKey('stuck').includes(2),
      'the second of the stuck key was sent while the head was retried',
    );
    // After the head's third attempt it is failed, and the rest of the key follows in order.
    await waitUntil(() => r.ofKey('stuck').length >= 5, {
      message: 'the rest of the stuck key after its head failed',
    });
    assert.equal(headAttempts, 3, 'the head was not attempted three times before the next went');
    assert.deepEqual(r.ofKey('stuck'), [1, 1, 1, 2, 3], 'the stuck key arrived out of order');
    assert.equal(r.overlaps(), 0, 'two deliveries of one key were in flight at once');
    const log = await logOf(h, session, hook.id);
    assert.equal(log.find((d) => d.id === head.id)?.status, 'failed', 'the head is not shown failed');
  });

  test('manual retry of a failed head and recover put it back behind its key, one at a time', async (t) => {
    let healthy = false;
    const r = await orderReceiver(t, { slowMs: 50, status: (a) => (healthy || a.n > 1 ? 200 : 500) });
    const { session } = await makeSignedInTenant(h);
    const hook = await orderedHook(session, r.receiver.url());
    const published = await publishInOrder(session, interleaved(['a', 'b'], 2));
    const failedOf = async (key: string) =>
      waitUntil(
        async () =>
          (await logOf(h, session, hook.id)).find(
            (d) => d.eventId === published.get(`${key}#1`)!.id && d.status === 'failed',
          ),
        { message: `the head of ${key} failed` },
      );
    const headA = await failedOf('a');
    const headB = await failedOf('b');
    await r.receiver.waitFor(8);
    healthy = true;
    // A new event of key a, still in flight while the head is retried by hand: the head goes after it.
    r.arrivals.length = 0;
    await publishInOrder(session, [{ key: 'a', n: 3 }]);
    const retried = await h.request('POST', `${CONNECTIONS}/${hook.id}/events/${headA.id}/retry`, {
      session,
    });
    assert.equal(retried.status, 202, `retrying the failed head answered ${retried.status}: ${retried.text}`);
    const recovered = await operate(h, session, hook.id, 'recover', {
      since: new Date(Date.now() - 3_600_000).toISOString(),
    });
    assert.equal(recovered.status, 202, `recover answered ${recovered.status}: ${recovered.text}`);
    await waitUntil(() => r.arrivals.length >= 3, {
      message: 'the new event and both heads delivered again',
    });
    assert.deepEqual(
      r.ofKey('a'),
      [3, 1],
      'the retried head did not wait for the delivery of its key in flight',
    );
    assert.deepEqual(r.ofKey('b'), [1], 'the recovered head of b was not sent once');
    assert.equal(r.overlaps(), 0, 'two deliveries of one key were in flight at once');
    await waitUntil(
      async () => {
        const log = await logOf(h, session, hook.id);
        return [headA.id, headB.id].every((id) => log.find((d) => d.id === id)?.status === 'delivered');
      },
      { message: 'both heads delivered after the retry and the recover' },
    );
  });

  test('pause and resume with replay keep each key in publish order', async (t) => {
    const r = await orderReceiver(t, { slowMs: 30 });
    const { session } = await makeSignedInTenant(h);
    const hook = await orderedHook(session, r.receiver.url());
    await pause(h, session, hook.id);
    await publishInOrder(session, interleaved(['x', 'y'], 4));
    const skipped = await logOf(h, session, hook.id);
    assert.ok(
      skipped.every((d) => d.status === 'skipped' && d.waitingFor === null),
      'deliveries while paused are not skipped and free',
    );
    const resumed = await resume(h, session, hook.id, { replaySkipped: true });
    assert.equal(resumed.replayed, 8, 'resume did not replay the eight skipped deliveries');
    await r.receiver.waitFor(8);
    assert.deepEqual(r.ofKey('x'), upTo(4), 'the replayed key x arrived out of publish order');
    assert.deepEqual(r.ofKey('y'), upTo(4), 'the replayed key y arrived out of publish order');
    assert.equal(r.overlaps(), 0, 'two deliveries of one key were in flight at once');
  });

  test('a batch orders its items per key in the batch order; events without a key are not held', async (t) => {
    const r = await orderReceiver(t, { slowMs: 40 });
    const { session } = await makeSignedInTenant(h);
    const hook = await orderedHook(session, r.receiver.url());
    const events = upTo(6).map((n) => ({
      type: 'order.updated',
      data: { key: 'batch', n },
      orderingKey: 'batch',
    }));
    const unkeyed = upTo(3).map((n) => ({ type: 'order.updated', data: { key: 'none', n } }));
    const answer = await h.request('POST', '/api/v1/integrations/events/batch', {
      session,
      body: { events: [...events, ...unkeyed] },
    });
    assert.equal(answer.status, 202, `the batch answered ${answer.status}: ${answer.text}`);
    await r.receiver.waitFor(9);
    assert.deepEqual(r.ofKey('batch'), upTo(6), 'the batch key arrived out of the batch order');
    assert.deepEqual(r.ofKey('none').sort(), upTo(3), 'the events without a key were not each delivered');
    const log = await logOf(h, session, hook.id);
    assert.equal(log.length, 9, 'the batch did not make one delivery per event');
  });

  test('a group whose statement fails writes its events again one by one, each key chained in publish order', async (t) => {
    // The receiver holds every answer, so nothing of a key ends while the chain is read.
    const held: Array<() => void> = [];
    const receiver = await startReceiver(t, (_r, _i, res) => void held.push(() => res.end()));
    t.after(() => {
      for (const release of held.splice(0)) release();
    });
    const { session, tenant } = await makeSignedInTenant(h);
    const hook = await orderedHook(session, receiver.url());
    // The writer the publish route uses, on this app's database; a draft of a tenant that does not
    // exist fails the group's statement, so the group falls back to writing each event alone.
    const ctx = {
      db: h.database.kysely,
      keyring: h.keyring,
      usage: { count: () => {}, flush: () => Promise.resolve() },
    } as unknown as AppContext;
    const writer = createEventWriter({ ctx, catalog: await loadConnectorCatalog([]) });
    const scopeOf = (tenantId: string) =>
      ({ tenantId, entitlements: ['integrations'] }) as unknown as TenantScope;
    const PER_KEY = 8;
    for (const key of ['fallback-1', 'fallback-2', 'fallback-3']) {
      const at = new Date();
      const drafts = upTo(PER_KEY).map((n) =>
        writer.write({
          scope: scopeOf(tenant.id),
          at,
          type: 'order.updated',
          payload: JSON.stringify({ key, n }),
          orderingKey: key,
        }),
      );
      // Queued in the same turn of the event loop as the others: one group, which this one fails.
      const missing = writer.write({
        scope: scopeOf('tnt_missing'),
        at,
        type: 'order.updated',
        payload: JSON.stringify({ key, n: 0 }),
        orderingKey: key,
      });
      await assert.rejects(missing, 'the event of a missing tenant was written');
      const events = await Promise.all(drafts);
      const rows = await h.database.kysely
        .selectFrom('deliveries')
        .select(['id', 'event_id', 'waiting_for'])
        .where('connection_id', '=', hook.id)
        .where('ordering_key', '=', key)
        .execute();
      const byEvent = new Map(rows.map((r) => [r.event_id, r]));
      assert.equal(byEvent.size, PER_KEY, `the fallback did not write one delivery per event of ${key}`);
      const chain = events.map((e) => byEvent.get(e.id)!);
      assert.equal(chain[0]!.waiting_for, null, `the first event of ${key} waits for something`);
      for (const [i, d] of chain.entries()) {
        if (i === 0) continue;
        assert.equal(
          d.waiting_for,
          chain[i - 1]!.id,
          `event ${i + 1} of ${key} does not wait for event ${i}: the fallback chained the key out of publish order`,
        );
      }
    }
    assert.ok(!h.logs().includes(hook.secret), 'the connection secret is in the logs');
  });

  test('an unordered connection takes keyed events as always: nothing waits', async (t) => {
    const r = await orderReceiver(t, { slowMs: 300 });
    const { session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, r.receiver.url());
    await publishInOrder(session, interleaved(['same'], 4));
    await r.receiver.waitFor(4);
    assert.ok(r.overlaps() > 0, 'an unordered connection sent one key one at a time');
    const log = await logOf(h, session, hook.id);
    assert.ok(
      log.every((d) => d.waitingFor === null),
      'a delivery of an unordered connection waits',
    );
  });

  test('a bad orderingKey is refused naming the field, and nothing is saved; in a batch, that item only', async (t) => {
    const r = await orderReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const hook = await orderedHook(session, r.receiver.url());
    for (const orderingKey of ['k'.repeat(201), '', 7]) {
      const refused = await h.request<Problem>('POST', '/api/v1/integrations/events', {
        session,
        body: { type: 'order.updated', data: { key: 'x', n: 1 }, orderingKey },
      });
      assert.equal(
        refused.status,
        400,
        `orderingKey ${JSON.stringify(orderingKey).slice(0, 20)} was accepted`,
      );
      assert.equal(refused.body.code, 'validation_failed', 'the refusal is not validation_failed');
      assert.match(refused.text, /orderingKey/, 'the refusal does not name orderingKey');
    }
    const longest = await h.request<PublishedEvent>('POST', '/api/v1/integrations/events', {
      session,
      body: { type: 'order.updated', data: { key: 'k'.repeat(200), n: 1 }, orderingKey: 'k'.repeat(200) },
    });
    assert.equal(longest.status, 202, `a key of 200 characters was refused: ${longest.text}`);
    const batch = await h.request<{ data: Array<PublishedEvent | { error: Problem }> }>(
      'POST',
      '/api/v1/integrations/events/batch',
      {
        session,
        body: {
          events: [
            { type: 'order.updated', data: { key: 'b', n: 1 }, orderingKey: 'b' },
            { type: 'order.updated', data: { key: 'b', n: 2 }, orderingKey: 'b'.repeat(201) },
          ],
        },
      },
    );
    assert.equal(batch.status, 202, `the batch answered ${batch.status}`);
    const [first, second] = batch.body.data;
    assert.ok(first && 'id' in first, 'the good item of the batch was not published');
    assert.ok(second && 'error' in second, 'the item with a key of 201 characters was published');
    assert.match(
      String(second.error.detail),
      /events\.1\.orderingKey/,
      'the item error does not name its field',
    );
    await r.receiver.waitFor(2);
    const log = await logOf(h, session, hook.id);
    assert.equal(log.length, 2, 'a refused event made a delivery');
  });
});
