import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { minuteOf, sampleHistory } from '../../src/platform/history.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { type Harness, type TestSession, startHarness } from '../helpers/harness.js';
import { type Received, startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// Receivers listen on 127.0.0.1 only; a 410 fails a delivery at once (contract §7).
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
  const r = await h.request('GET', `${HISTORY}${query}`, { token: h.platformToken });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.bucketSeconds, 60);
  return r.body.points;
}

async function publish(session: TestSession, type: string): Promise<void> {
  const r = await h.request('POST', '/api/v1/integrations/events', { session, body: { type, data: {} } });
  assert.equal(r.status, 202, r.text);
}

const totals = (points: Point[]) =>
  points.reduce((sum, p) => ({ delivered: sum.delivered + p.delivered, failed: sum.failed + p.failed }), {
    delivered: 0,
    failed: 0,
  });

describe('GET /api/v1/platform/monitoring/history', () => {
  test('needs a plt_ key', async () => {
    assert.equal((await h.request('GET', HISTORY)).status, 401);
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('GET', HISTORY, { session });
    assert.equal(r.status, 403, r.text);
    assert.equal(r.body.code, 'platform_key_required');
  });

  test('minutes is 1–1440, 60 by default; anything else is 400 naming it', async () => {
    assert.equal((await history()).length, 60);
    assert.equal((await history('?minutes=1')).length, 1);
    assert.equal((await history('?minutes=1440')).length, 1440);
    for (const bad of ['0', '1441', '-5', '1.5', 'abc', '']) {
      const r = await h.request('GET', `${HISTORY}?minutes=${bad}`, { token: h.platformToken });
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
      assert.equal(r.body.code, 'validation_failed');
      assert.match(JSON.stringify(r.body.errors), /minutes/);
    }
    const unknown = await h.request('GET', `${HISTORY}?hours=1`, { token: h.platformToken });
    assert.equal(unknown.status, 400);
  });

  test('one point per UTC minute, oldest first, the last the current minute; empty minutes are zero and null', async () => {
    const before = minuteOf(new Date()).getTime();
    const points = await history('?minutes=30');
    const after = minuteOf(new Date()).getTime();
    const last = Date.parse(points[points.length - 1]?.at ?? '');
    assert.ok(last === before || last === after, 'the last point is the current minute');
    for (const [i, point] of points.entries()) {
      assert.equal(Date.parse(point.at), last - (points.length - 1 - i) * MINUTE);
      assert.equal(new Date(point.at).getUTCSeconds(), 0);
      assert.equal(new Date(point.at).getUTCMilliseconds(), 0);
    }
    // Nothing was delivered in this database yet.
    for (const point of points) {
      assert.deepEqual(
        { delivered: point.delivered, failed: point.failed, latencyMs: point.latencyMs },
        { delivered: 0, failed: 0, latencyMs: { p50: null, p95: null, p99: null } },
      );
    }
  });

  test('a delivery shows in the current minute at once; a failed one counts as failed', async () => {
    const { session } = await makeSignedInTenant(h);
    const ok = await startReceiver();
    const gone = await startReceiver((_request: Received, _index, response) => {
      response.statusCode = 410;
      response.end();
    });
    try {
      await makeWebhookConnection(h, session, ok.url(), { eventTypes: ['history.ok'] });
      await makeWebhookConnection(h, session, gone.url(), { eventTypes: ['history.gone'] });
      const start = totals(await history('?minutes=5'));
      await publish(session, 'history.ok');
      await publish(session, 'history.ok');
      await publish(session, 'history.gone');
      // Within 15 s (contract §12); here, as soon as the workers have sent them.
      let points: Point[] = [];
      const deadline = Date.now() + 15_000;
      for (;;) {
        points = await history('?minutes=5');
        const now = totals(points);
        if (now.delivered - start.delivered === 2 && now.failed - start.failed === 1) break;
        assert.ok(Date.now() < deadline, `not in the history within 15 s: ${JSON.stringify(now)}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const busy = points.filter((p) => p.delivered > 0);
      assert.ok(busy.length >= 1);
      for (const p of busy) {
        assert.ok(p.latencyMs.p50 !== null && p.latencyMs.p50 >= 0, JSON.stringify(p));
        assert.ok((p.latencyMs.p95 ?? -1) >= (p.latencyMs.p50 ?? 0));
        assert.ok((p.latencyMs.p99 ?? -1) >= (p.latencyMs.p95 ?? 0));
      }
    } finally {
      await ok.close();
      await gone.close();
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
    assert.equal(watermark.length, 1);
    assert.ok(
      new Date(watermark[0]?.rolled_up_to ?? 0).getTime() > now.getTime(),
      'the current minute is rolled up',
    );
    const rolled = await history('?minutes=10');
    const strip = (points: Point[]) => points.map(({ queueDepth: _queueDepth, ...rest }) => rest);
    assert.deepEqual(strip(rolled), strip(live));

    // A minute nobody sampled has no queue depth; the sampled one has the due deliveries then.
    const sampledMinute = minuteOf(new Date(now.getTime() + 2 * MINUTE)).toISOString();
    const rows = await h.database.kysely
      .selectFrom('monitoring_minutes')
      .select(['minute', 'queue_depth'])
      .execute();
    const sampled = rows.find((row) => new Date(row.minute).toISOString() === sampledMinute);
    assert.equal(sampled?.queue_depth, 0, 'nothing was due');
    assert.ok(rolled.some((p) => p.queueDepth === null));
  });
});

describe('queue depth in the history', () => {
  test('is the due deliveries sampled in the minute, null where none was sampled', async () => {
    // A database of its own and no worker: what is published stays due.
    const db = await createTestDatabase();
    const q = await startHarness({ env: ENV, testDatabase: db });
    try {
      const { session } = await makeSignedInTenant(q);
      const receiver = await startReceiver();
      try {
        await makeWebhookConnection(q, session, receiver.url(), { eventTypes: ['queue.depth'] });
        const sample = (at: Date) => sampleHistory({ db: q.database.kysely, config: q.config }, at);
        await sample(new Date());
        for (let i = 0; i < 3; i++) {
          const r = await q.request('POST', '/api/v1/integrations/events', {
            session,
            body: { type: 'queue.depth', data: {} },
          });
          assert.equal(r.status, 202, r.text);
        }
        await sample(new Date());
        const points = (await q.request('GET', `${HISTORY}?minutes=3`, { token: q.platformToken })).body
          .points as Point[];
        const current = points[points.length - 1];
        assert.ok(current);
        assert.equal(current.queueDepth, 3, JSON.stringify(points));
        assert.equal(points[0]?.queueDepth, null, 'two minutes ago nobody sampled');
      } finally {
        await receiver.close();
      }
    } finally {
      await q.close();
      await db.drop();
    }
  });
});
