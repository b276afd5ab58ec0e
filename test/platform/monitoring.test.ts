import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createMetrics } from '../../src/http/metrics.js';
import { startEventLoopLag, takeSnapshot } from '../../src/platform/monitoring.js';
import { createLogger } from '../../src/logger.js';
import { makeKey, makeSignedInTenant, makeTenant, makeWebhookConnection } from '../helpers/factories.js';
import { type Harness, type TestSession, startHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Receivers listen on 127.0.0.1 only. One retry, an hour later: a 500 leaves a delivery `retrying`
// for the whole file, a 410 fails one at once (contract §7), and a held answer keeps one in flight.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '3600',
  DELIVERY_TIMEOUT_MS: '30000',
};
const MONITORING = '/api/v1/platform/monitoring';
const CONNECTIONS = '/api/v1/integrations/connections';

// The figures are installation-wide, so this file has a database of its own and exact expectations.
// Two apps share it, as two processes would: `h` answers the API and runs no worker (what it
// publishes stays pending once `w`, the one with workers, is closed).
let testDatabase: TestDatabase;
let h: Harness;
let w: Harness | undefined;
before(async () => {
  testDatabase = await createTestDatabase();
  h = await startHarness({ env: ENV, testDatabase });
  w = await startHarness({ env: ENV, testDatabase, keyring: h.keyring, workers: { pollMs: 50 } });
});
after(async () => {
  await w?.close();
  await h.close();
  await testDatabase.drop();
});

async function snapshot() {
  const response = await h.request('GET', MONITORING, { token: h.platformToken });
  assert.equal(response.status, 200, response.text);
  return response.body;
}

async function webhookTo(session: TestSession, url: string, eventTypes: string[]) {
  return (await makeWebhookConnection(h, session, url, { eventTypes })).id;
}

async function publish(session: TestSession, type: string) {
  const r = await h.request('POST', '/api/v1/integrations/events', { session, body: { type, data: {} } });
  assert.equal(r.status, 202, r.text);
  assert.equal(r.body.deliveries, 1);
}

/** Waits until the connection's deliveries have exactly these statuses (in any order). */
async function statusesOf(session: TestSession, connectionId: string, expected: string[], ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const log = await h.request('GET', `${CONNECTIONS}/${connectionId}/events`, { session });
    assert.equal(log.status, 200, log.text);
    const statuses = log.body.data.map((d: { status: string }) => d.status).sort();
    if (JSON.stringify(statuses) === JSON.stringify([...expected].sort())) return;
    if (Date.now() > deadline) throw new Error(`${connectionId}: ${JSON.stringify(statuses)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('GET /api/v1/platform/monitoring', () => {
  test('needs a plt_ key: none is 401, a tenant key or a session is 403 platform_key_required', async () => {
    const none = await h.request('GET', MONITORING);
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'unauthenticated');
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');

    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    for (const credential of [{ token: key.secret }, { session }]) {
      const refused = await h.request('GET', MONITORING, credential);
      assert.equal(refused.status, 403);
      assert.equal(refused.body.code, 'platform_key_required');
    }
  });

  test('reports the live queue, the delivery window, HTTP, the process and the installation', async () => {
    // The tenant above, plus one with a user and connections, plus one bare.
    const { session } = await makeSignedInTenant(h);
    await makeTenant(h);

    const before = await snapshot();
    assert.deepEqual(Object.keys(before), [
      'generatedAt',
      'uptimeSeconds',
      'version',
      'database',
      'queue',
      'deliveries',
      'http',
      'process',
      'runtime',
      'tenants',
      'connections',
    ]);
    assert.ok(Math.abs(Date.parse(before.generatedAt) - Date.now()) < 5_000);
    assert.ok(Number.isInteger(before.uptimeSeconds) && before.uptimeSeconds >= 0);
    assert.match(before.version, /^\d+\.\d+\.\d+/);
    assert.equal(before.database.ok, true);
    assert.ok(before.database.latencyMs >= 0);
    assert.deepEqual(before.queue, { pending: 0, retrying: 0, inFlight: 0, oldestPendingAgeSeconds: 0 });
    assert.deepEqual(before.deliveries, {
      windowSeconds: 3600,
      delivered: 0,
      failed: 0,
      successRatio: null,
      latencyMs: { p50: null, p95: null, p99: null },
    });
    assert.ok(before.process.rssBytes > 0 && Number.isInteger(before.process.rssBytes));
    assert.ok(before.process.heapUsedBytes > 0 && before.process.heapUsedBytes <= before.process.rssBytes);
    assert.ok(before.process.eventLoopLagMs >= 0);
    // The app runs in this test's process: it reports the Node that runs it (24 under npm test).
    assert.deepEqual(before.runtime, { node: process.versions.node });
    assert.match(before.runtime.node, /^\d+\.\d+\.\d+$/);
    assert.equal(before.tenants, 3);
    assert.deepEqual(before.connections, { active: 0, disabled: 0 });
    // Every request `h` answered so far (the first test's included), none of them a 5xx.
    assert.ok(before.http.requests >= 10, JSON.stringify(before.http));
    assert.equal(before.http.errors5xx, 0);
    const again = await snapshot();
    assert.ok(again.http.requests >= before.http.requests + 1, 'the previous snapshot is counted');

    let release: (() => void) | undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ok = await startReceiver();
    const gone = await startReceiver((_r, _i, res) => void res.writeHead(410).end());
    const flaky = await startReceiver((_r, _i, res) => void res.writeHead(500).end());
    const slow = await startReceiver(async (_r, _i, res: ServerResponse) => {
      await held;
      res.end('ok');
    });
    try {
      const toOk = await webhookTo(session, ok.url(), ['ok.*']);
      const toGone = await webhookTo(session, gone.url(), ['gone.*']);
      const toFlaky = await webhookTo(session, flaky.url(), ['flaky.*']);
      const toSlow = await webhookTo(session, slow.url(), ['slow.*']);
      const revoked = await webhookTo(session, ok.url('/old'), ['never.*']);
      assert.equal((await h.request('POST', `${CONNECTIONS}/${revoked}/revoke`, { session })).status, 200);

      await publish(session, 'ok.one');
      await publish(session, 'ok.two');
      await publish(session, 'gone.one');
      await publish(session, 'flaky.one');
      await publish(session, 'slow.one');
      await statusesOf(session, toOk, ['delivered', 'delivered']);
      await statusesOf(session, toGone, ['failed']);
      await statusesOf(session, toFlaky, ['retrying']);
      await slow.waitFor(1);
      await statusesOf(session, toSlow, ['delivering']);

      const busy = await snapshot();
      assert.equal(busy.database.ok, true);
      // The retry is an hour away: not due, so no backlog age.
      assert.deepEqual(busy.queue, { pending: 0, retrying: 1, inFlight: 1, oldestPendingAgeSeconds: 0 });
      assert.equal(busy.deliveries.windowSeconds, 3600);
      assert.equal(busy.deliveries.delivered, 2);
      assert.equal(busy.deliveries.failed, 1);
      assert.equal(busy.deliveries.successRatio, 2 / 3);
      const { p50, p95, p99 } = busy.deliveries.latencyMs;
      assert.ok(typeof p50 === 'number' && p50 > 0 && p50 < 10_000, JSON.stringify(busy.deliveries));
      assert.ok(p50 <= p95 && p95 <= p99);
      assert.equal(busy.tenants, 3);
      assert.deepEqual(busy.connections, { active: 4, disabled: 1 });

      release?.();
      await statusesOf(session, toSlow, ['delivered']);
      // No worker from now on: what is published next stays pending, and becomes overdue.
      await w?.close();
      w = undefined;
      await publish(session, 'ok.three');

      const published = Date.now();
      h.setNow(new Date(published + 90_000));
      const waiting = await snapshot();
      assert.equal(waiting.generatedAt, new Date(published + 90_000).toISOString());
      assert.equal(waiting.queue.pending, 1);
      assert.equal(waiting.queue.retrying, 1);
      assert.equal(waiting.queue.inFlight, 0);
      assert.ok(
        waiting.queue.oldestPendingAgeSeconds >= 89 && waiting.queue.oldestPendingAgeSeconds <= 100,
        JSON.stringify(waiting.queue),
      );
      assert.equal(waiting.deliveries.delivered, 3);
      assert.equal(waiting.deliveries.failed, 1);
      assert.equal(waiting.deliveries.successRatio, 3 / 4);

      // Two hours on, everything that ended has left the one-hour window.
      h.setNow(new Date(published + 2 * 3600_000));
      const later = await snapshot();
      assert.deepEqual(later.deliveries, {
        windowSeconds: 3600,
        delivered: 0,
        failed: 0,
        successRatio: null,
        latencyMs: { p50: null, p95: null, p99: null },
      });
      assert.ok(later.queue.oldestPendingAgeSeconds >= 7190, JSON.stringify(later.queue));
    } finally {
      h.setNow(null);
      release?.();
      await Promise.all([ok.close(), gone.close(), flaky.close(), slow.close()]);
    }
  });

  test('is described in the OpenAPI document, for platform keys', async () => {
    const doc = (await h.request('GET', '/api/v1/openapi.json')).body;
    const operation = doc.paths[MONITORING].get;
    assert.deepEqual(operation.security, [{ platformKey: [] }]);
    const schema = operation.responses['200'].content['application/json'].schema;
    assert.deepEqual(Object.keys(schema.properties), [
      'generatedAt',
      'uptimeSeconds',
      'version',
      'database',
      'queue',
      'deliveries',
      'http',
      'process',
      'runtime',
      'tenants',
      'connections',
    ]);
  });
});

describe('a database that does not answer', () => {
  test('gives database.ok false and null figures instead of an error', async () => {
    // Over HTTP the plt_ key check itself needs the database; the snapshot's own fallback is
    // observed here, on a real database of this run's engine that has been dropped and closed.
    const gone = await createTestDatabase();
    await gone.drop();
    const closed = gone.database;
    const metrics = createMetrics();
    metrics.httpRequests.inc({ method: 'GET', route: '/x', status: '200' }, 4);
    metrics.httpRequests.inc({ method: 'GET', route: '/x', status: '503' }, 2);
    const eventLoop = startEventLoopLag();
    try {
      const snap = await takeSnapshot(
        {
          database: closed,
          db: closed.kysely,
          metrics,
          log: createLogger('silent'),
          now: () => new Date(),
        },
        eventLoop,
      );
      assert.deepEqual(snap.database, { ok: false, latencyMs: null });
      assert.deepEqual(snap.queue, {
        pending: null,
        retrying: null,
        inFlight: null,
        oldestPendingAgeSeconds: null,
      });
      assert.deepEqual(snap.deliveries, {
        windowSeconds: 3600,
        delivered: null,
        failed: null,
        successRatio: null,
        latencyMs: { p50: null, p95: null, p99: null },
      });
      assert.equal(snap.tenants, null);
      assert.deepEqual(snap.connections, { active: null, disabled: null });
      assert.deepEqual(snap.http, { requests: 6, errors5xx: 2 });
      assert.ok(snap.process.rssBytes > 0);
    } finally {
      eventLoop.stop();
    }
  });
});
