import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { startWorker, type RunningServer } from '../helpers/cli.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

interface LogEntry {
  id: string;
  eventId: string;
  status: string;
  attemptCount: number;
  attempts: Array<{
    number: number;
    error: string | null;
    errorDetail: string | null;
    responseStatus: number | null;
  }>;
}

/** Every delivery of a connection, through the event log API, page by page. */
async function eventLog(h: Harness, session: TestSession, connectionId: string): Promise<LogEntry[]> {
  const entries: LogEntry[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = await h.request(
      'GET',
      `/api/v1/integrations/connections/${connectionId}/events?limit=100${query}`,
      {
        session,
      },
    );
    assert.equal(page.status, 200, page.text);
    entries.push(...(page.body.data as LogEntry[]));
    cursor = page.body.nextCursor;
  } while (cursor);
  return entries;
}

// Two `hubgate worker` processes share one PostgreSQL; one is killed with SIGKILL while it holds
// deliveries in flight. Every event must still reach the receiver (at least once). PostgreSQL only.
if (ENGINE === 'postgres') {
  const EVENTS = 200;
  let db: TestDatabase;
  let h: Harness;
  const secretKey = randomBytes(32);
  const workers: RunningServer[] = [];

  before(async () => {
    db = await createTestDatabase();
    h = await startHarness({
      testDatabase: db,
      keyring: createKeyring(secretKey),
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
    });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await h.close();
    await db.drop();
  });

  test('workers killed mid-delivery lose nothing: their claims expire and another worker sends them', async (t) => {
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    // Slow enough that the killed worker surely holds deliveries it has not finished: 200 events at
    // 2 × 32 in flight take ~1.3 s, so most are still to come when the 30th arrives (at 150 ms, a
    // fast run had finished them all before the kill).
    const receiver = await startReceiver(t, (_r, _i, res) => {
      setTimeout(() => res.end('ok'), 400);
    });
    const { session } = await makeSignedInTenant(h);
    const created = await h.request('POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: 'webhook', displayName: 'crash', url: receiver.url() },
    });
    assert.equal(created.status, 201, created.text);
    const bound = await h.request('PUT', `/api/v1/integrations/connections/${created.body.id}/credentials`, {
      session,
      body: {},
    });
    assert.equal(bound.status, 200, bound.text);
    const published = new Set<string>();
    for (let i = 0; i < EVENTS; i++) {
      const r = await h.request('POST', '/api/v1/integrations/events', {
        session,
        body: { type: 'crash.test', data: { i } },
      });
      assert.equal(r.status, 202, `publishing event ${i} fails`);
      assert.equal(r.body.deliveries, 1, `event ${i} does not fan out to the one webhook`);
      published.add(r.body.id);
    }

    const env = {
      DATABASE_URL: db.target.url,
      HUBGATE_SECRET_KEY: secretKey.toString('base64'),
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      // Well above the receiver's 400 ms, so a loaded machine does not turn answers into timeouts.
      DELIVERY_TIMEOUT_MS: '3000',
    };
    workers.push(...(await Promise.all([startWorker(env), startWorker(env)])));
    await receiver.waitFor(30, 30_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${workers.map((w) => w.output()).join('\n---\n')}`);
    });
    // Both are killed, so every claim in flight is surely a dead worker's (on a loaded machine one
    // worker alone may hold them all, and killing the other then lost nothing); a third worker,
    // started afterwards, must find and send what they held.
    for (const victim of workers.splice(0)) victim.child.kill('SIGKILL');
    const claimed = await db.database.kysely
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('status', '=', 'delivering')
      .executeTakeFirstOrThrow();
    t.diagnostic(`${claimed.n} deliveries were claimed when the workers were killed`);
    assert.ok(Number(claimed.n) > 0, 'the kill happened with deliveries in flight');
    workers.push(await startWorker(env));

    const ids = () => new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
    await waitUntil(() => ids().size >= EVENTS, {
      message: () => `every event reaching the receiver (${ids().size} of ${EVENTS})`,
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    const seen = ids();
    const missing = [...published].filter((id) => !seen.has(id));
    assert.deepEqual(missing, [], 'every event reached the receiver');
    const duplicates = receiver.received.length - seen.size;
    t.diagnostic(
      `received ${receiver.received.length} requests for ${EVENTS} events: ${duplicates} duplicates`,
    );

    // And the log agrees: everything is delivered once the new worker has finished.
    let open = '?';
    await waitUntil(
      async () => {
        ({ n: open } = await db.database.kysely
          .selectFrom('deliveries')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('status', '!=', 'delivered')
          .executeTakeFirstOrThrow());
        return Number(open) === 0;
      },
      { message: () => `every delivery finished (${open} open)`, timeoutMs: 30_000, intervalMs: 200 },
    );

    // Every request the receiver got is an attempt in the log: the ones the killed worker never
    // recorded show as `interrupted`, numbered in order before the attempt that delivered.
    const log = await eventLog(h, session, created.body.id);
    assert.equal(log.length, EVENTS, 'the event log lists other than one delivery per event');
    const requestsFor = new Map<string, number>();
    for (const r of receiver.received) {
      const id = String(r.headers['webhook-id']);
      requestsFor.set(id, (requestsFor.get(id) ?? 0) + 1);
    }
    let interrupted = 0;
    for (const delivery of log) {
      const where = `delivery ${delivery.id}: ${JSON.stringify(delivery.attempts)}`;
      assert.equal(delivery.status, 'delivered', where);
      assert.equal(delivery.attemptCount, delivery.attempts.length, where);
      assert.deepEqual(
        delivery.attempts.map((a) => a.number),
        delivery.attempts.map((_, i) => i + 1),
        where,
      );
      const last = delivery.attempts.at(-1);
      assert.equal(last?.error, null, where);
      assert.equal(last?.responseStatus, 200, where);
      const lost = delivery.attempts.filter((a) => a.error === 'interrupted');
      for (const a of lost) {
        assert.match(a.errorDetail ?? '', /worker stopped before recording an outcome/, where);
        assert.equal(a.responseStatus, null, where);
      }
      interrupted += lost.length;
      // A killed worker may die before its request leaves; it never sends one the log does not show.
      const seen = requestsFor.get(delivery.eventId) ?? 0;
      assert.ok(seen <= delivery.attemptCount, `the receiver got ${seen} requests; ${where}`);
      assert.ok(seen >= delivery.attemptCount - lost.length, `the receiver got ${seen} requests; ${where}`);
    }
    t.diagnostic(`${interrupted} attempts were recorded as interrupted`);
    assert.ok(interrupted > 0, 'the attempts the killed workers had in flight are in the log');
  });
}
