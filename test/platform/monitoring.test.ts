import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createMetrics } from '../../src/http/metrics.js';
import { createLogger } from '../../src/logger.js';
import { startEventLoopLag, takeSnapshot } from '../../src/platform/monitoring.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeKey, makeSignedInTenant, makeTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Receivers listen on 127.0.0.1 only. One retry, an hour later: a 500 leaves a delivery `retrying`
// for the whole file, a 410 fails one at once (docs/api/events.md), and a held answer keeps one in flight.
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

describe('GET /api/v1/platform/monitoring', () => {
  test('needs a plt_ key: none is 401, a tenant key or a session is 403 platform_key_required', async () => {
    const none = await h.request('GET', MONITORING);
    assert.equal(none.status, 401, 'monitoring answers without a credential');
    assert.equal(
      none.body.code,
      'unauthenticated',
      'monitoring without a credential is refused for another reason than unauthenticated',
    );
    assert.equal(none.headers.get('www-authenticate'), 'Bearer', 'the 401 does not ask for a Bearer token');

    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    for (const credential of [{ token: key.secret }, { session }]) {
      const refused = await h.request('GET', MONITORING, credential);
      assert.equal(
        refused.status,
        403,
        `${Object.keys(credential)[0]}: a tenant credential is not refused on monitoring`,
      );
      assert.equal(
        refused.body.code,
        'platform_key_required',
        `${Object.keys(credential)[0]}: refused for another reason than needing a platform key`,
      );
    }
  });

  test('reports the live queue, the delivery window, HTTP, the process and the installation', async () => {
    // The tenant above, plus one with a user and connections, plus one bare.
    const { session } = await makeSignedInTenant(h);
    await makeTenant(h);

    const before = await snapshot();
    assert.deepEqual(
      Object.keys(before),
      [
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
      ],
      "the snapshot's sections are missing, extra or out of order",
    );
    assert.ok(
      Math.abs(Date.parse(before.generatedAt) - Date.now()) < 5_000,
      "the snapshot's generatedAt is not now",
    );
    assert.ok(
      Number.isInteger(before.uptimeSeconds) && before.uptimeSeconds >= 0,
      'the uptime is not a whole number of seconds',
    );
    assert.match(before.version, /^\d+\.\d+\.\d+/, 'the version is not a semantic version');
    assert.equal(before.database.ok, true, 'the database is reported down');
    assert.ok(before.database.latencyMs >= 0, 'the database latency is negative');
    assert.deepEqual(
      before.queue,
      { pending: 0, retrying: 0, inFlight: 0, oldestPendingAgeSeconds: 0 },
      'the idle queue does not read all zeros',
    );
    assert.deepEqual(
      before.deliveries,
      {
        windowSeconds: 3600,
        delivered: 0,
        failed: 0,
        successRatio: null,
        latencyMs: { p50: null, p95: null, p99: null },
      },
      'the delivery window before any delivery is not empty',
    );
    assert.ok(
      before.process.rssBytes > 0 && Number.isInteger(before.process.rssBytes),
      'the resident memory is not a positive whole number',
    );
    assert.ok(
      before.process.heapUsedBytes > 0 && before.process.heapUsedBytes <= before.process.rssBytes,
      'the heap used is zero or larger than the resident memory',
    );
    assert.ok(before.process.eventLoopLagMs >= 0, 'the event loop lag is negative');
    // The app runs in this test's process: it reports the Node that runs it (24 under npm test).
    assert.deepEqual(
      before.runtime,
      { node: process.versions.node },
      'the runtime reports another Node than the one running',
    );
    assert.match(before.runtime.node, /^\d+\.\d+\.\d+$/, 'the Node version is not a semantic version');
    assert.equal(before.tenants, 3, 'the installation does not count exactly its 3 tenants');
    assert.deepEqual(
      before.connections,
      { active: 0, disabled: 0 },
      'connections are counted though none exists yet',
    );
    // Every request `h` answered so far (the first test's included), none of them a 5xx.
    assert.ok(before.http.requests >= 10, JSON.stringify(before.http));
    assert.equal(before.http.errors5xx, 0, '5xx answers are counted though none was given');
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
      assert.equal(
        (await h.request('POST', `${CONNECTIONS}/${revoked}/revoke`, { session })).status,
        200,
        'the connection cannot be revoked',
      );

      for (const type of ['ok.one', 'ok.two', 'gone.one', 'flaky.one', 'slow.one']) {
        const answer = await publishEvent(h, session, { type });
        assert.equal(answer.body.deliveries, 1, `${type} did not make exactly one delivery`);
      }
      await waitForDeliveries(h, session, toOk, { statuses: ['delivered', 'delivered'] });
      await waitForDeliveries(h, session, toGone, { statuses: ['failed'] });
      await waitForDeliveries(h, session, toFlaky, { statuses: ['retrying'] });
      await slow.waitFor(1);
      await waitForDeliveries(h, session, toSlow, { statuses: ['delivering'] });

      const busy = await snapshot();
      assert.equal(busy.database.ok, true, 'the database is reported down while busy');
      // The retry is an hour away: not due, so no backlog age.
      assert.deepEqual(
        busy.queue,
        { pending: 0, retrying: 1, inFlight: 1, oldestPendingAgeSeconds: 0 },
        'the queue does not show the one retrying and the one in flight',
      );
      assert.equal(busy.deliveries.windowSeconds, 3600, 'the delivery window is not one hour');
      assert.equal(busy.deliveries.delivered, 2, 'the window does not count the 2 delivered');
      assert.equal(busy.deliveries.failed, 1, 'the window does not count the 1 failed');
      assert.equal(busy.deliveries.successRatio, 2 / 3, 'the success ratio is not 2 of 3');
      const { p50, p95, p99 } = busy.deliveries.latencyMs;
      assert.ok(typeof p50 === 'number' && p50 > 0 && p50 < 10_000, JSON.stringify(busy.deliveries));
      assert.ok(p50 <= p95 && p95 <= p99, 'the latency percentiles are not in order');
      assert.equal(busy.tenants, 3, 'the installation does not count its 3 tenants');
      assert.deepEqual(
        busy.connections,
        { active: 4, disabled: 1 },
        'the connections are not counted as 4 active and 1 revoked',
      );

      release?.();
      await waitForDeliveries(h, session, toSlow, { statuses: ['delivered'] });
      // No worker from now on: what is published next stays pending, and becomes overdue.
      await w?.close();
      w = undefined;
      const three = await publishEvent(h, session, { type: 'ok.three' });
      assert.equal(three.body.deliveries, 1, 'ok.three did not make exactly one delivery');

      const published = Date.now();
      h.setNow(new Date(published + 90_000));
      const waiting = await snapshot();
      assert.equal(
        waiting.generatedAt,
        new Date(published + 90_000).toISOString(),
        "the snapshot is not taken at the clock's time",
      );
      assert.equal(waiting.queue.pending, 1, 'the event left without a worker is not counted as pending');
      assert.equal(waiting.queue.retrying, 1, 'the retrying delivery is not counted');
      assert.equal(waiting.queue.inFlight, 0, 'a delivery is counted in flight after it was delivered');
      assert.ok(
        waiting.queue.oldestPendingAgeSeconds >= 89 && waiting.queue.oldestPendingAgeSeconds <= 100,
        JSON.stringify(waiting.queue),
      );
      assert.equal(waiting.deliveries.delivered, 3, 'the window does not count the 3 delivered');
      assert.equal(waiting.deliveries.failed, 1, 'the window does not count the 1 failed');
      assert.equal(waiting.deliveries.successRatio, 3 / 4, 'the success ratio is not 3 of 4');

      // Two hours on, everything that ended has left the one-hour window.
      h.setNow(new Date(published + 2 * 3600_000));
      const later = await snapshot();
      assert.deepEqual(
        later.deliveries,
        {
          windowSeconds: 3600,
          delivered: 0,
          failed: 0,
          successRatio: null,
          latencyMs: { p50: null, p95: null, p99: null },
        },
        'the window still counts deliveries that ended over an hour ago',
      );
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
    assert.deepEqual(
      operation.security,
      [{ platformKey: [] }],
      'monitoring is not documented as for platform keys only',
    );
    const schema = operation.responses['200'].content['application/json'].schema;
    assert.deepEqual(
      Object.keys(schema.properties),
      [
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
      ],
      'the documented sections differ from those served',
    );
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
      assert.deepEqual(
        snap.database,
        { ok: false, latencyMs: null },
        'a gone database is reported up, or with a latency',
      );
      assert.deepEqual(
        snap.queue,
        {
          pending: null,
          retrying: null,
          inFlight: null,
          oldestPendingAgeSeconds: null,
        },
        'the queue shows figures though the database is gone',
      );
      assert.deepEqual(
        snap.deliveries,
        {
          windowSeconds: 3600,
          delivered: null,
          failed: null,
          successRatio: null,
          latencyMs: { p50: null, p95: null, p99: null },
        },
        'the delivery window shows figures though the database is gone',
      );
      assert.equal(snap.tenants, null, 'tenants are counted though the database is gone');
      assert.deepEqual(
        snap.connections,
        { active: null, disabled: null },
        'connections are counted though the database is gone',
      );
      assert.deepEqual(
        snap.http,
        { requests: 6, errors5xx: 2 },
        'the HTTP counters are lost when the database is gone',
      );
      assert.ok(snap.process.rssBytes > 0, 'the process memory is not reported when the database is gone');
    } finally {
      eventLoop.stop();
    }
  });
});
