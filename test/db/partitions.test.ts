import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import { dayOf, ensurePartitions, partitionDays } from '../../src/db/partitions.js';
import { purgeExpired } from '../../src/delivery/retention.js';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { migrateBefore } from '../helpers/migrations.js';

const DAY = 86_400_000;
const CONNECTIONS = '/api/v1/integrations/connections';

const tablesOf = async (h: Harness, day: string) => {
  const result = await sql<{ name: string }>`
    select relname as name from pg_class where relname in
      (${`events_p${day}`}, ${`deliveries_p${day}`}, ${`delivery_attempts_p${day}`}) order by relname`.execute(
    h.database.kysely,
  );
  return result.rows.map((r) => r.name);
};

describe('deliveries partitioned by day', () => {
  let h: Harness;
  before(async () => {
    // No workers: the test runs retention itself, at the moments it chooses.
    h = await startHarness({ env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' } });
  });
  after(() => h.close());

  test('a day with no partition yet goes to the default one, and moves when its partition is made', async () => {
    const { session } = await makeSignedInTenant(h);
    // Port 9 on 127.0.0.1: nothing is sent (no worker runs here), the deliveries stay pending.
    const hook = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/hook');
    const reader = await makeKey(h, session, { scopes: ['integrations:READER', 'integrations:OPERATOR'] });
    const past = new Date('2021-03-04T05:06:07Z');
    h.setNow(past);
    try {
      const published = await h.request('POST', '/api/v1/integrations/events', {
        token: reader.secret,
        body: { type: 'old.event', data: { n: 1 } },
      });
      assert.equal(published.status, 202, published.text);
      const inDefault = await sql<{ n: number }>`select count(*)::int as n from deliveries_default
        where created_at = ${past}`.execute(h.database.kysely);
      assert.equal(inDefault.rows[0]?.n, 1, 'the row waits in the default partition');

      assert.deepEqual(
        await ensurePartitions(h.database.kysely, past, 0),
        ['20210303', '20210304'],
        'making the partitions of a past day does not make that day and the one before',
      );
      assert.deepEqual(
        await tablesOf(h, '20210304'),
        ['deliveries_p20210304', 'delivery_attempts_p20210304', 'events_p20210304'],
        'a new day partition lacks one of the tables for deliveries, attempts and events',
      );
      const moved = await sql<{ n: number }>`select count(*)::int as n from deliveries_p20210304`.execute(
        h.database.kysely,
      );
      assert.equal(moved.rows[0]?.n, 1, 'the row moved into its day');
      const log = await h.request('GET', `${CONNECTIONS}/${hook.id}/events`, { token: reader.secret });
      assert.equal(log.status, 200, log.text);
      assert.deepEqual(
        log.body.data.map((d: { eventId: string; eventType: string }) => [d.eventId, d.eventType]),
        [[published.body.id, 'old.event']],
        'the delivery and its event are read as before',
      );
    } finally {
      h.setNow(null);
    }
  });

  test('retention drops a whole day once nothing in it is open, and keeps a day that still has work', async () => {
    const { session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/hook');
    const key = await makeKey(h, session, { scopes: ['integrations:READER', 'integrations:OPERATOR'] });
    const days = [new Date('2021-05-01T10:00:00Z'), new Date('2021-05-02T10:00:00Z')];
    for (const at of days) {
      await ensurePartitions(h.database.kysely, at, 0);
      h.setNow(at);
      const r = await h.request('POST', '/api/v1/integrations/events', {
        token: key.secret,
        body: { type: 'kept.or.not', data: {} },
      });
      h.setNow(null);
      assert.equal(r.status, 202, r.text);
    }
    // The first day's delivery is finished (as a worker would leave it); the second's is still pending.
    await sql`update deliveries set status = 'delivered', delivered_at = created_at, next_attempt_at = null
      where connection_id = ${hook.id} and created_at = ${days[0]}`.execute(h.database.kysely);

    const now = new Date('2021-06-10T00:00:00Z');
    const purged = await purgeExpired(h.database.kysely, now, new Date(now.getTime() - 30 * DAY));
    assert.ok(purged.days.includes('20210501'), `the finished day is dropped: ${purged.days.join()}`);
    assert.ok(!purged.days.includes('20210502'), 'the day with a pending delivery is kept');
    assert.deepEqual(await tablesOf(h, '20210501'), [], 'all three of its tables are gone');
    assert.equal(
      (await tablesOf(h, '20210502')).length,
      3,
      'the day with a pending delivery lost some of its tables',
    );
    const log = await h.request('GET', `${CONNECTIONS}/${hook.id}/events`, { token: key.secret });
    assert.deepEqual(
      log.body.data.map((d: { status: string }) => d.status),
      ['pending'],
      'only the open delivery is left',
    );
    assert.ok(
      (await partitionDays(h.database.kysely)).includes(dayOf(new Date(now.getTime() + 7 * DAY))),
      'the coming week was made',
    );
  });

  test("retention forgets an ordering key's head once its last delivery ended, and keeps a key still held back", async () => {
    const { session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/hook', { ordering: 'per-key' });
    const key = await makeKey(h, session, { scopes: ['integrations:READER', 'integrations:OPERATOR'] });
    const publish = async (orderingKey: string) => {
      const r = await h.request<{ id: string }>('POST', '/api/v1/integrations/events', {
        token: key.secret,
        body: { type: 'order.updated', data: { orderingKey }, orderingKey },
      });
      assert.equal(r.status, 202, r.text);
      return r.body.id;
    };
    const past = new Date('2021-04-01T10:00:00Z');
    await ensurePartitions(h.database.kysely, past, 0);
    h.setNow(past);
    let heldBackEvent: string;
    try {
      await publish('idle');
      heldBackEvent = await publish('held');
    } finally {
      h.setNow(null);
    }
    // The idle key's only delivery is finished (as a worker would leave it); the held one's is still pending.
    await sql`update deliveries set status = 'delivered', delivered_at = created_at, next_attempt_at = null
      where connection_id = ${hook.id} and ordering_key = 'idle'`.execute(h.database.kysely);
    const headsOf = async () =>
      (
        await sql<{ key: string }>`select ordering_key as key from ordering_heads
          where connection_id = ${hook.id} order by ordering_key`.execute(h.database.kysely)
      ).rows.map((r) => r.key);
    assert.deepEqual(await headsOf(), ['held', 'idle'], 'each key published has its head');

    const now = new Date('2021-06-10T00:00:00Z');
    await purgeExpired(h.database.kysely, now, new Date(now.getTime() - 30 * DAY));
    assert.deepEqual(await headsOf(), ['held'], 'the idle key is forgotten, the held one kept');

    // What a user sees: the held key's next event still waits for the old one; the idle key's does not.
    const nextHeld = await publish('held');
    const nextIdle = await publish('idle');
    const log = await h.request<{ data: Array<{ id: string; eventId: string; waitingFor: string | null }> }>(
      'GET',
      `${CONNECTIONS}/${hook.id}/events?limit=100`,
      { token: key.secret },
    );
    assert.equal(log.status, 200, log.text);
    const deliveryOf = (eventId: string) => log.body.data.find((d) => d.eventId === eventId);
    assert.equal(
      deliveryOf(nextHeld)?.waitingFor,
      deliveryOf(heldBackEvent)?.id,
      'after retention, the held key stopped waiting for its pending delivery',
    );
    assert.equal(deliveryOf(nextIdle)?.waitingFor, null, 'the idle key waits for a delivery that ended');
  });

  test('many processes making partitions at once: each day made once, no error', async () => {
    const at = new Date('2022-01-10T00:00:00Z');
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => ensurePartitions(h.database.kysely, at, 3)),
    );
    const made = runs.flat().sort();
    assert.deepEqual(made, ['20220109', '20220110', '20220111', '20220112', '20220113'], made.join());
  });

  test('an idempotency key answers its first event for 24 hours, then is forgotten by retention', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const publish = (data: object) =>
      h.request('POST', '/api/v1/integrations/events', {
        token: key.secret,
        headers: { 'idempotency-key': 'order-42' },
        body: { type: 'order.paid', data },
      });
    const first = await publish({ n: 1 });
    assert.equal(first.status, 202, first.text);
    const again = await publish({ n: 1 });
    assert.deepEqual(again.body, first.body, 'the same key and body answer the first result');
    assert.equal((await publish({ n: 2 })).status, 409, 'another body with the key is a conflict');

    const later = new Date(Date.now() + DAY + 60_000);
    await purgeExpired(h.database.kysely, later, new Date(later.getTime() - 30 * DAY));
    const keys = await h.database.kysely.selectFrom('event_idempotency_keys').select('key').execute();
    assert.deepEqual(keys, [], 'the key is deleted after 24 hours');
    const reused = await publish({ n: 2 });
    assert.equal(reused.status, 202, reused.text);
    assert.notEqual(reused.body.id, first.body.id, 'a forgotten key publishes anew');
  });
});

test('upgrading copies events, deliveries, attempts and idempotency keys into day partitions, which an embedded database then folds into the default ones', async () => {
  const database = await openDatabase({ kind: 'memory' });
  try {
    const db = database.kysely;
    await migrateBefore(db, '0012');
    const at = new Date('2025-01-02T03:04:05.000Z');
    await sql`insert into tenants (id, name, created_at) values ('ten_1', 't', ${at})`.execute(db);
    await sql`insert into connections (id, tenant_id, connector_key, display_name, status, config, created_at)
      values ('con_1', 'ten_1', 'webhook', 'c', 'active', '{}'::jsonb, ${at})`.execute(db);
    await sql`insert into events (id, tenant_id, type, payload_sealed, idempotency_key, request_hash,
        delivery_count, created_at)
      values ('evt_1', 'ten_1', 'a.b', 'sealed', 'key-1', 'hash-1', 1, ${at})`.execute(db);
    await sql`insert into deliveries (id, tenant_id, event_id, connection_id, status, attempt_count,
        created_at, updated_at, delivered_at)
      values ('dlv_1', 'ten_1', 'evt_1', 'con_1', 'delivered', 1, ${at}, ${at}, ${at})`.execute(db);
    await sql`insert into delivery_attempts (delivery_id, number, started_at, duration_ms, response_status)
      values ('dlv_1', 1, ${at}, 12, 200)`.execute(db);

    const upgrade = new Migrator({
      db,
      provider: {
        getMigrations: async () =>
          Object.fromEntries(
            Object.entries(MIGRATIONS).filter(([name]) => name <= '0012_partitioned_deliveries'),
          ),
      },
      migrationTableName: 'hubgate_migrations',
      migrationLockTableName: 'hubgate_migrations_lock',
    });
    const partitioned = await upgrade.migrateToLatest();
    assert.equal(partitioned.error, undefined, `0012 applies: ${String(partitioned.error)}`);
    const rowsIn = async (suffix: string) => ({
      attempts: (
        await sql<{ delivery_id: string; delivery_created_at: Date }>`
          select delivery_id, delivery_created_at from ${sql.table(`delivery_attempts_${suffix}`)}`.execute(
          db,
        )
      ).rows.map((r) => [r.delivery_id, new Date(r.delivery_created_at).toISOString()]),
      deliveries: (await sql<{ id: string }>`select id from ${sql.table(`deliveries_${suffix}`)}`.execute(db))
        .rows,
      events: (await sql<{ id: string }>`select id from ${sql.table(`events_${suffix}`)}`.execute(db)).rows,
    });
    const expected = {
      attempts: [['dlv_1', at.toISOString()]],
      deliveries: [{ id: 'dlv_1' }],
      events: [{ id: 'evt_1' }],
    };
    assert.deepEqual(
      await rowsIn('p20250102'),
      expected,
      "0012 left an event, delivery or attempt out of its day partition, or an attempt lost its delivery's time",
    );

    // The rest, as an embedded database starts: its day partitions are folded into the defaults
    // (partitions.ts, layOutPartitions), every row kept.
    const applied = await migrateToLatest(database);
    assert.ok(!applied.includes('0012_partitioned_deliveries'), `0012 ran once: ${applied.join()}`);
    assert.deepEqual(await partitionDays(db), [], 'an embedded database keeps no day partition');
    assert.deepEqual(
      await rowsIn('default'),
      expected,
      'a row was lost or changed folding the day into the default',
    );
    const keys = await db.selectFrom('event_idempotency_keys').selectAll().execute();
    assert.deepEqual(
      keys.map((k) => [k.tenant_id, k.key, k.request_hash, k.event_id, k.delivery_count]),
      [['ten_1', 'key-1', 'hash-1', 'evt_1', 1]],
      'an idempotency key is lost or changed by the upgrade',
    );
  } finally {
    await database.close();
  }
});
