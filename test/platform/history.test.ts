import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { minuteOf, sampleHistory } from '../../src/platform/history.js';
import { publishEvent } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Received } from '../helpers/receiver.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// Receivers listen on 127.0.0.1 only; a 410 fails a delivery at once (docs/api/events.md).
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '3600',
};
const HISTORY = '/api/v1/platform/monitoring/history';
const MINUTE = 60_000;

interface Point {
  at: string;
  delivered: number;
  failed: number;
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  queueDepth: number | null;
}

interface History {
  bucketSeconds: number;
  points: Point[];
}

// The figures are installation-wide: this file has a database of its own. `h` answers the API and
// runs no worker; `w` runs the workers (and so the 15-second sampler, which the tests also call).
let testDatabase: TestDatabase;
let h: Harness;
let w: Harness;
before(async () => {
  testDatabase = await createTestDatabase();
  h = await startHarness({ env: ENV, testDatabase });
  w = await startHarness({ env: ENV, testDatabase, keyring: h.keyring, workers: { pollMs: 50 } });
});
after(async () => {
  await w.close();
  await h.close();
  await testDatabase.drop();
});

async function history(query = ''): Promise<Point[]> {
  const r = await h.request<History>('GET', `${HISTORY}${query}`, { token: h.platformToken });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.bucketSeconds, 60, 'the history is not in one-minute buckets');
  return r.body.points;
}

const totals = (points: Point[]) =>
  points.reduce((sum, p) => ({ delivered: sum.delivered + p.delivered, failed: sum.failed + p.failed }), {
    delivered: 0,
    failed: 0,
  });

describe('GET /api/v1/platform/monitoring/history', () => {
  test('needs a plt_ key', async () => {
    assert.equal((await h.request('GET', HISTORY)).status, 401, 'the history can be read with no credential');
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('GET', HISTORY, { session });
    assert.equal(r.status, 403, r.text);
    assert.equal(
      r.body.code,
      'platform_key_required',
      'a tenant session is refused for another reason than needing a platform key',
    );
  });

  test('minutes is 1–1440, 60 by default; anything else is 400 naming it', async () => {
    assert.equal((await history()).length, 60, 'the history does not default to 60 minutes');
    assert.equal((await history('?minutes=1')).length, 1, 'minutes=1 does not give one point');
    assert.equal((await history('?minutes=1440')).length, 1440, 'minutes=1440 does not give 1440 points');
    for (const bad of ['0', '1441', '-5', '1.5', 'abc', '']) {
      const r = await h.request('GET', `${HISTORY}?minutes=${bad}`, { token: h.platformToken });
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
      assert.equal(
        r.body.code,
        'validation_failed',
        `minutes=${bad}: refused for another reason than validation`,
      );
      assert.match(
        JSON.stringify(r.body.errors),
        /minutes/,
        `minutes=${bad}: the refusal does not name minutes`,
      );
    }
    const unknown = await h.request('GET', `${HISTORY}?hours=1`, { token: h.platformToken });
    assert.equal(unknown.status, 400, 'an unknown query parameter is accepted');
  });

  test('one point per UTC minute, oldest first, the last the current minute; empty minutes are zero and null', async () => {
    const before = minuteOf(new Date()).getTime();
    const points = await history('?minutes=30');
    const after = minuteOf(new Date()).getTime();
    const last = Date.parse(points[points.length - 1]?.at ?? '');
    assert.ok(last === before || last === after, 'the last point is the current minute');
    for (const [i, point] of points.entries()) {
      assert.equal(
        Date.parse(point.at),
        last - (points.length - 1 - i) * MINUTE,
        `point ${i}: the points are not one per minute, oldest first, ending at the last`,
      );
      assert.equal(
        new Date(point.at).getUTCSeconds(),
        0,
        `point ${i}: a point does not start on a whole minute`,
      );
      assert.equal(
        new Date(point.at).getUTCMilliseconds(),
        0,
        `point ${i}: a point does not start on a whole second`,
      );
    }
    // Nothing was delivered in this database yet.
    for (const point of points) {
      assert.deepEqual(
        { delivered: point.delivered, failed: point.failed, latencyMs: point.latencyMs },
        { delivered: 0, failed: 0, latencyMs: { p50: null, p95: null, p99: null } },
        'a minute with no delivery shows deliveries or latencies',
      );
    }
  });

  test('a delivery shows in the current minute at once; a failed one counts as failed', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const ok = await startReceiver(t);
    const gone = await startReceiver(t, (_request: Received, _index, response) => {
      response.statusCode = 410;
      response.end();
    });
    await makeWebhookConnection(h, session, ok.url(), { eventTypes: ['history.ok'] });
    await makeWebhookConnection(h, session, gone.url(), { eventTypes: ['history.gone'] });
    const start = totals(await history('?minutes=5'));
    for (const type of ['history.ok', 'history.ok', 'history.gone']) await publishEvent(h, session, { type });
    // Within 15 s (docs/operators/monitoring.md); here, as soon as the workers have sent them.
    let now = start;
    const points = await waitUntil(
      async () => {
        const points = await history('?minutes=5');
        now = totals(points);
        return now.delivered - start.delivered === 2 && now.failed - start.failed === 1 && points;
      },
      {
        message: () => `the deliveries in the history (${JSON.stringify(now)})`,
        timeoutMs: 15_000,
        intervalMs: 100,
      },
    );
    const busy = points.filter((p) => p.delivered > 0);
    assert.ok(busy.length >= 1, 'the history shows no minute with the deliveries made');
    for (const p of busy) {
      assert.ok(p.latencyMs.p50 !== null && p.latencyMs.p50 >= 0, JSON.stringify(p));
      assert.ok((p.latencyMs.p95 ?? -1) >= (p.latencyMs.p50 ?? 0), "a minute's p95 latency is below its p50");
      assert.ok((p.latencyMs.p99 ?? -1) >= (p.latencyMs.p95 ?? 0), "a minute's p99 latency is below its p95");
    }
  });

  test('rolled-up minutes say what the live figures said; the queue depth sampled in a minute shows in it', async () => {
    const live = await history('?minutes=10');
    const now = new Date();
    // A sample two minutes on rolls up every finished minute: the same figures come from the rows.
    await sampleHistory({ db: h.database.kysely, config: h.config }, new Date(now.getTime() + 2 * MINUTE));
    const watermark = await h.database.kysely
      .selectFrom('monitoring_rollup')
      .select('rolled_up_to')
      .execute();
    assert.equal(watermark.length, 1, 'the rollup does not keep one watermark row');
    assert.ok(
      new Date(watermark[0]?.rolled_up_to ?? 0).getTime() > now.getTime(),
      'the current minute is rolled up',
    );
    const rolled = await history('?minutes=10');
    const strip = (points: Point[]) => points.map(({ queueDepth: _queueDepth, ...rest }) => rest);
    assert.deepEqual(
      strip(rolled),
      strip(live),
      'the rolled-up minutes differ from what the live figures said',
    );

    // A minute nobody sampled has no queue depth; the sampled one has the due deliveries then.
    const sampledMinute = minuteOf(new Date(now.getTime() + 2 * MINUTE)).toISOString();
    const rows = await h.database.kysely
      .selectFrom('monitoring_minutes')
      .select(['minute', 'queue_depth'])
      .execute();
    const sampled = rows.find((row) => new Date(row.minute).toISOString() === sampledMinute);
    assert.equal(sampled?.queue_depth, 0, 'nothing was due');
    assert.ok(
      rolled.some((p) => p.queueDepth === null),
      'every minute shows a queue depth, though most were never sampled',
    );
  });
});

describe('queue depth in the history', () => {
  test('is the due deliveries sampled in the minute, null where none was sampled', async (t) => {
    // A database of its own and no worker: what is published stays due.
    const db = await createTestDatabase();
    const q = await startHarness({ env: ENV, testDatabase: db });
    t.after(async () => {
      await q.close();
      await db.drop();
    });
    const { session } = await makeSignedInTenant(q);
    const receiver = await startReceiver(t);
    await makeWebhookConnection(q, session, receiver.url(), { eventTypes: ['queue.depth'] });
    const sample = (at: Date) => sampleHistory({ db: q.database.kysely, config: q.config }, at);
    await sample(new Date());
    for (let i = 0; i < 3; i++) await publishEvent(q, session, { type: 'queue.depth' });
    await sample(new Date());
    const { points } = (await q.request<History>('GET', `${HISTORY}?minutes=3`, { token: q.platformToken }))
      .body;
    const current = points[points.length - 1];
    assert.ok(current, 'the history has no current minute');
    assert.equal(current.queueDepth, 3, JSON.stringify(points));
    assert.equal(points[0]?.queueDepth, null, 'two minutes ago nobody sampled');
  });
});
