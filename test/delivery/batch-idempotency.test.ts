import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KyselyPlugin } from 'kysely';
import type { Cleanup } from '../helpers/cleanup.js';
import type { PublishedEvent, Publisher } from '../helpers/events.js';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// Events published in batches with idempotency keys (docs/api/events.md, "Batch" and "Idempotency"):
// each item answers what it would answer published alone, in the batch's order, whatever the other
// items are; the keyed items of one batch are written together. Receivers listen on 127.0.0.1 only.
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
const BATCH = '/api/v1/integrations/events/batch';
const EVENTS = '/api/v1/integrations/events';
const CONNECTIONS = '/api/v1/integrations/connections';
const CONFLICT = 'This Idempotency-Key was used with a different body.';
const DAY_MS = 24 * 60 * 60 * 1000;

type Answer = PublishedEvent | { error: { status: number; code: string; detail: string | null } };
const isEvent = (a: Answer): a is PublishedEvent => 'id' in a;

// The app's statements as compiled, while a test records them: a Kysely plugin on the app's database
// sees every statement the app runs (transactions' begin and commit excepted).
const seen: Array<{ sql: string; parameters: readonly unknown[] }> = [];
let recording = false;
let testDatabase: TestDatabase;
let h: Harness;
before(async () => {
  testDatabase = await createTestDatabase();
  const base = testDatabase.database.kysely;
  const recorder: KyselyPlugin = {
    transformQuery(args) {
      if (recording) {
        const { sql, parameters } = base.getExecutor().compileQuery(args.node, args.queryId);
        seen.push({ sql, parameters });
      }
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  const recorded = {
    ...testDatabase,
    database: { ...testDatabase.database, kysely: base.withPlugin(recorder) },
  };
  h = await startHarness({ env: ENV, workers: { pollMs: 50 }, testDatabase: recorded });
});
after(async () => {
  await h.close();
  await testDatabase.drop();
});

const batch = (as: Publisher, events: unknown) =>
  h.request<{ data: Answer[] }>('POST', BATCH, {
    ...('token' in as ? as : { session: as }),
    body: { events },
  });

async function publishBatch(as: Publisher, events: unknown): Promise<Answer[]> {
  const r = await batch(as, events);
  assert.equal(r.status, 202, `the batch answered ${r.status}: ${r.text}`);
  assert.equal(
    r.body.data.length,
    (events as unknown[]).length,
    'the batch answers other than one item per event',
  );
  return r.body.data;
}

function eventOf(answer: Answer | undefined, what: string): PublishedEvent {
  assert.ok(answer && isEvent(answer), `${what} is not a published event: ${JSON.stringify(answer)}`);
  return answer;
}

function conflictOf(answer: Answer | undefined, what: string): void {
  assert.deepEqual(
    answer,
    { error: { status: 409, code: 'conflict', detail: CONFLICT } },
    `${what} is not refused with 409 conflict as a single publish is`,
  );
}

/** The event IDs of a connection's delivery log, one per delivery (a connection gets one per event). */
async function deliveredEvents(session: TestSession, connectionId: string): Promise<string[]> {
  const r = await h.request('GET', `${CONNECTIONS}/${connectionId}/events?limit=100`, { session });
  assert.equal(r.status, 200, r.text);
  return (r.body.data as Array<{ eventId: string }>).map((d) => d.eventId).sort();
}

/** A tenant with a webhook connection that takes every event, and a receiver behind it. */
async function tenantWithHook(t: Cleanup) {
  const { tenant, session } = await makeSignedInTenant(h);
  const receiver = await startReceiver(t);
  const hook = await makeWebhookConnection(h, session, receiver.url());
  return { tenantId: tenant.id, session, receiver, hook };
}

/** The statements that publishing ran for one tenant (those with its ID among their parameters). */
async function statementsOf<T>(
  tenantId: string,
  run: () => Promise<T>,
): Promise<{ result: T; sql: string[] }> {
  seen.length = 0;
  recording = true;
  try {
    const result = await run();
    const sql = seen
      .filter((s) => s.parameters.flat().includes(tenantId))
      .map((s) => s.sql)
      .filter((text) => /event_idempotency_keys|insert into events|from "connections"/.test(text));
    return { result, sql };
  } finally {
    recording = false;
  }
}

const briefly = (statements: string[]) =>
  JSON.stringify(statements.map((s) => s.replace(/\s+/g, ' ').trim().slice(0, 60)));

describe('batches with idempotency keys', () => {
  test('the same key twice in one batch: the same body answers the first event, another body is 409', async (t) => {
    const { session, receiver, hook } = await tenantWithHook(t);
    const [first, again, other, next] = await publishBatch(session, [
      { type: 'order.paid', data: { n: 1 }, idempotencyKey: 'twice' },
      { type: 'order.paid', data: { n: 1 }, idempotencyKey: 'twice' },
      { type: 'order.paid', data: { n: 2 }, idempotencyKey: 'twice' },
      { type: 'order.shipped', data: { n: 1 }, idempotencyKey: 'once' },
    ]);
    const published = eventOf(first, 'the first item with a key');
    assert.equal(published.deliveries, 1, 'the first item with a key did not fan out to the one connection');
    assert.deepEqual(
      again,
      published,
      'the same key and body again in the batch does not answer the first event',
    );
    conflictOf(other, 'the same key with another body in the batch');
    const last = eventOf(next, 'the item after a conflict');
    assert.notEqual(last.id, published.id, 'another key answered the first key’s event');
    await receiver.waitFor(2);
    assert.deepEqual(
      await deliveredEvents(session, hook.id),
      [published.id, last.id].sort(),
      'a key repeated in one batch fanned out again, or a conflict was delivered',
    );
  });

  test('a key used earlier with another body is 409 in the middle of a batch; the items around it are published', async (t) => {
    const { session, receiver, hook } = await tenantWithHook(t);
    const earlier = await h.request<PublishedEvent>('POST', EVENTS, {
      session,
      body: { type: 'order.paid', data: { n: 1 } },
      headers: { 'idempotency-key': 'used' },
    });
    assert.equal(earlier.status, 202, earlier.text);
    const answers = await publishBatch(session, [
      { type: 'order.created', data: { n: 1 }, idempotencyKey: 'before' },
      { type: 'order.paid', data: { n: 2 }, idempotencyKey: 'used' },
      { type: 'order.shipped', data: { n: 1 }, idempotencyKey: 'after' },
    ]);
    const preceding = eventOf(answers[0], 'the item before the conflict');
    conflictOf(answers[1], 'a key used earlier with another body');
    const following = eventOf(answers[2], 'the item after the conflict');
    assert.deepEqual(
      [preceding.type, following.type],
      ['order.created', 'order.shipped'],
      'the answers around a conflict are not in the batch’s order',
    );
    await receiver.waitFor(3);
    assert.deepEqual(
      await deliveredEvents(session, hook.id),
      [earlier.body.id, preceding.id, following.id].sort(),
      'the items around a conflict were not delivered once each, or the conflict was',
    );
  });

  test('a key used earlier with the same body answers the earlier event and makes no delivery', async (t) => {
    const { session, receiver, hook } = await tenantWithHook(t);
    const earlier = await publishBatch(session, [
      { type: 'order.paid', data: { n: 7 }, idempotencyKey: 'retry' },
    ]);
    const first = eventOf(earlier[0], 'the first publish of the key');
    await receiver.waitFor(1);
    const [again] = await publishBatch(session, [
      { type: 'order.paid', data: { n: 7 }, idempotencyKey: 'retry' },
    ]);
    assert.deepEqual(
      again,
      first,
      'a batch retried with the same key and body does not answer the earlier event',
    );
    const single = await h.request('POST', EVENTS, {
      session,
      body: { type: 'order.paid', data: { n: 7 } },
      headers: { 'idempotency-key': 'retry' },
    });
    assert.deepEqual(
      single.body,
      first,
      'a single publish with a batch item’s key does not answer its event',
    );
    assert.deepEqual(await deliveredEvents(session, hook.id), [first.id], 'a retried key fanned out again');
  });

  test('keyed and unkeyed items in one batch: each answered in order, each event delivered once', async (t) => {
    const { session, receiver, hook } = await tenantWithHook(t);
    const answers = await publishBatch(session, [
      { type: 'a.plain', data: { n: 1 } },
      { type: 'a.keyed', data: { n: 1 }, idempotencyKey: 'k1' },
      { type: 'a.plain', data: { n: 1 } },
      { type: 'a.keyed', data: { n: 1 }, idempotencyKey: 'k1' },
      { type: 'b.keyed', data: { n: 2 }, idempotencyKey: 'k2' },
      { type: 'Not A Type', data: {}, idempotencyKey: 'k3' },
      { type: 'b.plain', data: { n: 3 } },
    ]);
    const events = [0, 1, 2, 3, 4, 6].map((i) => eventOf(answers[i], `item ${i}`));
    assert.deepEqual(
      events.map((e) => e.type),
      ['a.plain', 'a.keyed', 'a.plain', 'a.keyed', 'b.keyed', 'b.plain'],
      'the answers of a mixed batch are not in the batch’s order',
    );
    assert.equal(
      events[3]!.id,
      events[1]!.id,
      'a repeated key in a mixed batch does not answer its first event',
    );
    const invalid = answers[5] as { error: { status: number; code: string; detail: string } };
    assert.equal(invalid.error?.code, 'validation_failed', 'an invalid keyed item is not refused on its own');
    assert.ok(
      invalid.error.detail.startsWith('events.5.type'),
      `the refusal names another field: ${invalid.error.detail}`,
    );
    const distinct = [...new Set(events.map((e) => e.id))].sort();
    assert.equal(distinct.length, 5, 'a mixed batch did not publish five events');
    await receiver.waitFor(5);
    assert.deepEqual(
      await deliveredEvents(session, hook.id),
      distinct,
      'the log shows other events than the five',
    );
  });

  test('a key older than 24 hours is released: the same key with another body publishes a new event', async (t) => {
    const { session, hook } = await tenantWithHook(t);
    // A key, not the session: a day later the session has expired, a key of 30 days has not.
    const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const [old] = await publishBatch(session, [
      { type: 'order.paid', data: { n: 1 }, idempotencyKey: 'daily' },
    ]);
    const first = eventOf(old, 'the first use of the key');
    h.setNow(new Date(Date.now() + DAY_MS + 60_000));
    t.after(() => h.setNow(null));
    const [reused, repeated, other] = await publishBatch({ token: key.secret }, [
      { type: 'order.paid', data: { n: 2 }, idempotencyKey: 'daily' },
      { type: 'order.paid', data: { n: 2 }, idempotencyKey: 'daily' },
      { type: 'order.paid', data: { n: 1 }, idempotencyKey: 'daily' },
    ]);
    const fresh = eventOf(reused, 'an expired key used again');
    assert.notEqual(fresh.id, first.id, 'an expired key still answers its old event');
    assert.deepEqual(
      repeated,
      fresh,
      'the released key, repeated in the batch, does not answer its new event',
    );
    conflictOf(other, 'the released key with its old body, after its new use in the batch');
    h.setNow(null);
    const logged = await waitUntil(
      async () => {
        const ids = await deliveredEvents(session, hook.id);
        return ids.length >= 2 && ids;
      },
      { message: 'two deliveries in the log' },
    );
    assert.deepEqual(
      logged,
      [first.id, fresh.id].sort(),
      'the expired key’s two uses did not make one event each',
    );
  });

  test('a batch of 10 new keys costs one read of the keys, one of the connections, one insert of the keys, one of the events', async (t) => {
    const { tenantId, session, receiver, hook } = await tenantWithHook(t);
    const events = Array.from({ length: 10 }, (_, i) => ({
      type: 'order.paid',
      data: { i },
      idempotencyKey: `ten-${i}`,
    }));
    const first = await statementsOf(tenantId, () => publishBatch(session, events));
    assert.equal(first.result.filter(isEvent).length, 10, 'a batch of 10 new keys did not publish 10 events');
    const keys = first.sql.filter((s) => s.includes('event_idempotency_keys'));
    assert.deepEqual(
      {
        keyReads: keys.filter((s) => /^select/.test(s)).length,
        keyWrites: keys.filter((s) => /^insert/.test(s)).length,
        connectionReads: first.sql.filter((s) => /^select/.test(s) && s.includes('from "connections"'))
          .length,
        eventInserts: first.sql.filter((s) => s.includes('insert into events')).length,
      },
      { keyReads: 1, keyWrites: 1, connectionReads: 1, eventInserts: 1 },
      `a batch of 10 keyed events ran other statements than 4: ${briefly(first.sql)}`,
    );
    // Sent again: every key answers its event; nothing but the keys is read.
    const again = await statementsOf(tenantId, () => publishBatch(session, events));
    assert.deepEqual(again.result, first.result, 'a batch sent again does not answer its first events');
    assert.equal(
      again.sql.length,
      1,
      `a batch of 10 known keys ran more than one read: ${briefly(again.sql)}`,
    );
    await receiver.waitFor(10);
    assert.equal(
      (await deliveredEvents(session, hook.id)).length,
      10,
      'the log shows other than one delivery per key',
    );
  });

  test('two batches racing on the same new keys: one event per key, both answers carry it, no 500', async (t) => {
    const { session, receiver, hook } = await tenantWithHook(t);
    const rounds = ENGINE === 'postgres' ? 5 : 2;
    const ids: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const events = Array.from({ length: 10 }, (_, i) => ({
        type: 'order.paid',
        data: { round, i },
        idempotencyKey: `race-${round}-${i}`,
      }));
      // The other batch lists the keys in the reverse order, as another client may. On PostgreSQL the
      // two requests run at once, and most rounds one of them loses keys to the other.
      const [a, b] = await Promise.all([batch(session, events), batch(session, [...events].reverse())]);
      assert.equal(a.status, 202, `round ${round}: a racing batch answered ${a.status}: ${a.text}`);
      assert.equal(b.status, 202, `round ${round}: a racing batch answered ${b.status}: ${b.text}`);
      const reversed = [...b.body.data].reverse();
      for (const [i, answer] of a.body.data.entries()) {
        const mine = eventOf(answer, `round ${round}, key ${i} in one batch`);
        assert.deepEqual(
          reversed[i],
          mine,
          `round ${round}: the two batches answer key ${i} with different events`,
        );
        ids.push(mine.id);
      }
    }
    assert.equal(new Set(ids).size, rounds * 10, 'two keys of the race answered the same event');
    await receiver.waitFor(rounds * 10);
    assert.deepEqual(
      await deliveredEvents(session, hook.id),
      ids.sort(),
      'a key raced for made more than one event',
    );
  });

  test('two batches racing on one new key with different bodies: one is published, the other is 409', async (t) => {
    const { session, hook } = await tenantWithHook(t);
    const rounds = ENGINE === 'postgres' ? 5 : 2;
    const published: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const one = (n: number) => [
        { type: 'order.paid', data: { n }, idempotencyKey: `split-${round}` },
        { type: 'order.other', data: { n }, idempotencyKey: `own-${round}-${n}` },
      ];
      const [a, b] = await Promise.all([batch(session, one(1)), batch(session, one(2))]);
      for (const r of [a, b])
        assert.equal(r.status, 202, `round ${round}: a racing batch answered ${r.status}: ${r.text}`);
      const shared = [a.body.data[0]!, b.body.data[0]!];
      const winners = shared.filter(isEvent);
      assert.equal(
        winners.length,
        1,
        `round ${round}: not exactly one batch published the shared key: ${JSON.stringify(shared)}`,
      );
      conflictOf(
        shared.find((x) => !isEvent(x)),
        `round ${round}: the batch that lost the shared key`,
      );
      published.push(winners[0]!.id);
      for (const r of [a, b]) published.push(eventOf(r.body.data[1], `round ${round}: a batch’s own key`).id);
    }
    const logged = await waitUntil(
      async () => {
        const ids = await deliveredEvents(session, hook.id);
        return ids.length >= published.length && ids;
      },
      { message: `${published.length} deliveries in the log` },
    );
    assert.deepEqual(logged, published.sort(), 'the race made other events than one per key');
  });
});
