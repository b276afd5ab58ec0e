import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createLogger } from '../../src/logger.js';
import { createUsageMeter } from '../../src/usage/meter.js';
import { startUsageRetention } from '../../src/usage/retention.js';
import { addUsage, zeroCounts } from '../../src/usage/store.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

// The meter (src/usage/meter.ts, decision 0089): counts in memory, one additive upsert per flush, a
// failed flush keeps its counts, close writes what is left; and the 400-day retention.

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const HOUR = new Date('2026-11-02T10:00:00Z');

async function stored(tenantId: string) {
  const rows = await sql<{ hour: Date; events_published: string; delivered: string; attempts: string }>`
    select hour, events_published, delivered, attempts from usage_hourly
    where tenant_id = ${tenantId} order by hour`.execute(h.database.kysely);
  return rows.rows.map((r) => ({
    hour: new Date(r.hour).toISOString(),
    eventsPublished: Number(r.events_published),
    delivered: Number(r.delivered),
    attempts: Number(r.attempts),
  }));
}

test('counts gather per tenant and hour and are added to the rows there, flush after flush', async () => {
  const errors: unknown[] = [];
  const meter = createUsageMeter(h.database.kysely, { flushMs: 60_000, onError: (e) => errors.push(e) });
  try {
    meter.count('ten_meter_a', 'eventsPublished', 2, new Date('2026-11-02T10:05:00Z'));
    meter.count('ten_meter_a', 'eventsPublished', 1, new Date('2026-11-02T10:59:59Z'));
    meter.count('ten_meter_a', 'delivered', 4, new Date('2026-11-02T11:00:00Z'));
    meter.count('ten_meter_a', 'attempts', 0, HOUR);
    await meter.flush();
    meter.count('ten_meter_a', 'eventsPublished', 5, HOUR);
    await meter.flush();
    assert.deepEqual(
      await stored('ten_meter_a'),
      [
        { hour: '2026-11-02T10:00:00.000Z', eventsPublished: 8, delivered: 0, attempts: 0 },
        { hour: '2026-11-02T11:00:00.000Z', eventsPublished: 0, delivered: 4, attempts: 0 },
      ],
      'the counts are not added to their UTC hour',
    );
    assert.deepEqual(errors, [], 'a flush failed');
  } finally {
    await meter.close();
  }
});

test('a flush that fails keeps its counts for the next; close writes what is left', async () => {
  const errors: unknown[] = [];
  let failing = true;
  // A database that refuses, then answers again: the same Kysely, behind a plugin with a switch.
  const flaky = h.database.kysely.withPlugin({
    transformQuery(args) {
      if (failing) throw new Error('database away');
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  const meter = createUsageMeter(flaky, { flushMs: 60_000, onError: (e) => errors.push(e) });
  meter.count('ten_meter_b', 'attempts', 3, HOUR);
  await meter.flush();
  assert.equal(errors.length, 1, 'the failed flush was not told');
  assert.deepEqual(await stored('ten_meter_b'), [], 'a failed flush wrote something');
  meter.count('ten_meter_b', 'attempts', 2, HOUR);
  failing = false;
  await meter.close();
  assert.deepEqual(
    await stored('ten_meter_b'),
    [{ hour: HOUR.toISOString(), eventsPublished: 0, delivered: 0, attempts: 5 }],
    `close did not write the kept counts with the new ones: ${errors.map(String).join('; ')}`,
  );
});

test('the meter flushes on its own, each interval', async () => {
  const meter = createUsageMeter(h.database.kysely, { flushMs: 20, onError: () => {} });
  try {
    meter.count('ten_meter_c', 'delivered', 1, HOUR);
    await waitUntil(async () => (await stored('ten_meter_c')).length === 1, {
      message: 'the timed flush to write the count',
    });
  } finally {
    await meter.close();
  }
});

test('usage older than 400 days is deleted, newer kept, whatever the delivery retention', async () => {
  const now = new Date('2026-12-01T00:00:00Z');
  const old = new Date(now.getTime() - 401 * 86_400_000);
  const recent = new Date(now.getTime() - 399 * 86_400_000);
  const counts = { ...zeroCounts(), eventsPublished: 1 };
  await addUsage(h.database.kysely, [
    { tenantId: 'ten_meter_d', hour: old, counts },
    { tenantId: 'ten_meter_d', hour: recent, counts },
  ]);
  const retention = startUsageRetention(
    { db: h.database.kysely, log: createLogger('silent'), now: () => now },
    20,
  );
  try {
    await waitUntil(async () => (await stored('ten_meter_d')).length === 1, {
      message: 'the hour past 400 days to be deleted',
    });
    assert.deepEqual(
      (await stored('ten_meter_d')).map((r) => r.hour),
      [recent.toISOString()],
      'the hour within 400 days was not kept',
    );
  } finally {
    await retention.stop();
  }
});
