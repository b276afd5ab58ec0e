import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { publishEvent } from '../helpers/events.js';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';
import { githubSignature } from '../sources/signers.js';

// Usage (docs/api/usage.md): the routes' shapes and ranges, and counts that equal the rows after a
// mixed run of deliveries, failures, retries, skips, a batch and a keyed replay.

const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '0,0',
  DELIVERY_TIMEOUT_MS: '5000',
};

const USAGE = '/api/v1/integrations/usage';
const PLATFORM_USAGE = '/api/v1/platform/usage';

interface Bucket {
  start: string;
  eventsPublished: number;
  deliveries: { delivered: number; failed: number; skipped: number };
  attempts: number;
  proxyCalls: number;
  ingested: number;
}

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 }, timings: { usageFlushMs: 50 } });
});
after(() => h.close());

async function usageOf(session: TestSession, query = '') {
  const r = await h.request<{ data: Bucket[] }>('GET', `${USAGE}${query}`, { session });
  assert.equal(r.status, 200, `the usage route answered ${r.status}: ${r.text}`);
  return r.body.data;
}

/** Every bucket's counts added up: a test that crosses an hour still sees all it did. */
function total(buckets: readonly Bucket[]) {
  const sum = {
    eventsPublished: 0,
    delivered: 0,
    failed: 0,
    skipped: 0,
    attempts: 0,
    proxyCalls: 0,
    ingested: 0,
  };
  for (const b of buckets) {
    sum.eventsPublished += b.eventsPublished;
    sum.delivered += b.deliveries.delivered;
    sum.failed += b.deliveries.failed;
    sum.skipped += b.deliveries.skipped;
    sum.attempts += b.attempts;
    sum.proxyCalls += b.proxyCalls;
    sum.ingested += b.ingested;
  }
  return sum;
}

const HOUR_MS = 3_600_000;
const floorTo = (at: number, step: number) => Math.floor(at / step) * step;

describe('usage routes', () => {
  test('every bucket of the range, zeros included, by hour and by day; defaults 30 days and 24 hours', async () => {
    const { session } = await makeSignedInTenant(h);
    await publishEvent(h, session);
    await publishEvent(h, session);
    const hourly = await waitUntil(
      async () => {
        const data = await usageOf(session, '?granularity=hour');
        return total(data).eventsPublished === 2 && data;
      },
      { message: 'the two events in the hourly usage' },
    );
    assert.equal(
      hourly.length,
      25,
      'the last 24 hours are not 25 hourly buckets (the one holding now included)',
    );
    assert.equal(
      hourly.at(-1)!.start,
      new Date(floorTo(Date.now(), HOUR_MS)).toISOString(),
      'the last bucket is not the hour holding now',
    );
    assert.ok(
      hourly.every((b, i) => i === 0 || Date.parse(b.start) - Date.parse(hourly[i - 1]!.start) === HOUR_MS),
      'the hourly buckets are not one hour apart',
    );
    assert.deepEqual(
      hourly[0],
      {
        start: hourly[0]!.start,
        eventsPublished: 0,
        deliveries: { delivered: 0, failed: 0, skipped: 0 },
        attempts: 0,
        proxyCalls: 0,
        ingested: 0,
      },
      'a bucket without usage is not all zeros',
    );
    const daily = await usageOf(session);
    assert.equal(daily.length, 31, 'the default range is not 30 days back, 31 daily buckets');
    assert.equal(total(daily).eventsPublished, 2, 'the daily buckets do not hold the two events');
    assert.match(daily[0]!.start, /T00:00:00\.000Z$/, 'a day bucket does not start at UTC midnight');
  });

  test('from and to: dates or date-times, the buckets holding them; over 400 days or reversed is 400', async () => {
    const { session } = await makeSignedInTenant(h);
    const fixed = await usageOf(session, '?from=2026-01-01&to=2026-01-03');
    assert.deepEqual(
      fixed.map((b) => b.start),
      ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z'],
      'the days from and to hold are not both in',
    );
    const hours = await usageOf(
      session,
      '?from=2026-01-01T10:30:00Z&to=2026-01-01T12:00:00Z&granularity=hour',
    );
    assert.deepEqual(
      hours.map((b) => b.start),
      ['2026-01-01T10:00:00.000Z', '2026-01-01T11:00:00.000Z', '2026-01-01T12:00:00.000Z'],
      'the hours from and to hold are not the buckets',
    );
    const long = await h.request('GET', `${USAGE}?from=2025-01-01&to=2026-03-01`, { session });
    assert.equal(long.status, 400, `a range over 400 days answered ${long.status}`);
    assert.equal(long.body.code, 'validation_failed', 'a range over 400 days is not validation_failed');
    assert.equal(long.body.errors?.[0]?.path, 'from', 'a range over 400 days does not name from');
    const reversed = await h.request('GET', `${USAGE}?from=2026-02-01&to=2026-01-01`, { session });
    assert.equal(reversed.status, 400, `from after to answered ${reversed.status}`);
    assert.equal(reversed.body.errors?.[0]?.path, 'from', 'from after to does not name from');
    const bad = await h.request('GET', `${USAGE}?to=yesterday`, { session });
    assert.equal(bad.status, 400, `a to that is no date answered ${bad.status}`);
    assert.equal(bad.body.errors?.[0]?.path, 'to', 'a to that is no date does not name to');
    const granularity = await h.request('GET', `${USAGE}?granularity=week`, { session });
    assert.equal(granularity.status, 400, `granularity=week answered ${granularity.status}`);
  });

  test('Accept: text/csv answers the same buckets as CSV; a tenant key reads usage too', async () => {
    const { session } = await makeSignedInTenant(h);
    await publishEvent(h, session);
    await waitUntil(async () => total(await usageOf(session)).eventsPublished === 1, {
      message: 'the event in the usage',
    });
    const key = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const csv = await h.request('GET', `${USAGE}?granularity=hour`, {
      token: key.secret,
      headers: { accept: 'text/csv' },
    });
    assert.equal(csv.status, 200, `CSV usage with a tenant key answered ${csv.status}: ${csv.text}`);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/, 'the CSV answer is not text/csv');
    const lines = csv.text.trimEnd().split('\n');
    assert.equal(
      lines[0],
      'start,eventsPublished,delivered,failed,skipped,attempts,proxyCalls,ingested',
      'the CSV header row is not the documented one',
    );
    assert.equal(lines.length, 26, 'the CSV does not have one line per hourly bucket after its header');
    const published = lines.slice(1).reduce((n, line) => n + Number(line.split(',')[1]), 0);
    assert.equal(published, 1, 'the CSV does not hold the event published');
  });

  test("another tenant's usage never shows; the platform reads one tenant's or every tenant's", async () => {
    const a = await makeSignedInTenant(h);
    const b = await makeSignedInTenant(h);
    await publishEvent(h, a.session);
    await publishEvent(h, a.session);
    await publishEvent(h, a.session);
    await waitUntil(async () => total(await usageOf(a.session)).eventsPublished === 3, {
      message: "tenant A's three events in its usage",
    });
    assert.equal(total(await usageOf(b.session)).eventsPublished, 0, "tenant B sees tenant A's events");
    const one = await h.request('GET', `${PLATFORM_USAGE}?tenantId=${b.tenant.id}`, {
      token: h.platformToken,
    });
    assert.equal(one.status, 200, `the platform usage of one tenant answered ${one.status}: ${one.text}`);
    assert.equal(
      one.body.data.length,
      31,
      'a tenant without usage does not get every bucket, zeros included',
    );
    assert.ok(
      one.body.data.every((r: { tenantId: string }) => r.tenantId === b.tenant.id),
      'the platform usage of one tenant shows another',
    );
    const all = await h.request('GET', `${PLATFORM_USAGE}?granularity=hour`, { token: h.platformToken });
    assert.equal(all.status, 200, `the platform usage answered ${all.status}: ${all.text}`);
    const rows = all.body.data as Array<{ tenantId: string; start: string; eventsPublished: number }>;
    const ofA = rows.filter((r) => r.tenantId === a.tenant.id);
    assert.equal(ofA.length, 25, "tenant A's hourly buckets are not all there");
    assert.equal(
      ofA.reduce((n, r) => n + r.eventsPublished, 0),
      3,
      "tenant A's events are not in the platform's usage",
    );
    assert.ok(!rows.some((r) => r.tenantId === b.tenant.id), 'a tenant without usage in the range is listed');
    const sorted = [...rows].sort((x, y) =>
      x.tenantId !== y.tenantId ? (x.tenantId < y.tenantId ? -1 : 1) : x.start < y.start ? -1 : 1,
    );
    assert.deepEqual(rows, sorted, 'the platform usage is not ordered by tenant, then start');
    const csv = await h.request('GET', `${PLATFORM_USAGE}?tenantId=${a.tenant.id}&granularity=hour`, {
      token: h.platformToken,
      headers: { accept: 'text/csv' },
    });
    assert.equal(csv.status, 200, `the platform CSV answered ${csv.status}`);
    const [header, first] = csv.text.split('\n');
    assert.equal(
      header,
      'tenantId,start,eventsPublished,delivered,failed,skipped,attempts,proxyCalls,ingested',
      'the platform CSV header does not start with tenantId',
    );
    assert.ok(first?.startsWith(`${a.tenant.id},`), 'a platform CSV line does not start with the tenant ID');
    const denied = await h.request('GET', PLATFORM_USAGE, { session: a.session });
    assert.equal(denied.status, 403, `a tenant session on the platform usage answered ${denied.status}`);
  });
});

describe('usage counts', () => {
  test('after a mixed run, usage equals the rows: events, deliveries by outcome, attempts', async (t) => {
    // Fails `fail` events every time (three attempts, then failed); `flaky` ones once, then delivers.
    const flakySeen = new Set<string>();
    const receiver = await startReceiver(t, (request, _i, res) => {
      const body = JSON.parse(request.body) as { id: string; data: { fail?: boolean; flaky?: boolean } };
      const failNow = body.data.fail === true || (body.data.flaky === true && !flakySeen.has(body.id));
      if (body.data.flaky) flakySeen.add(body.id);
      res.statusCode = failNow ? 500 : 200;
      res.end(failNow ? 'no' : 'ok');
    });
    const { tenant, session } = await makeSignedInTenant(h);
    await makeWebhookConnection(h, session, receiver.url('/live'));
    const paused = await makeWebhookConnection(h, session, receiver.url('/paused'));
    const pause = await h.request('POST', `/api/v1/integrations/connections/${paused.id}/pause`, {
      session,
      body: {},
    });
    assert.equal(pause.status, 200, `pausing answered ${pause.status}: ${pause.text}`);
    await publishEvent(h, session, { data: { n: 1 } });
    await publishEvent(h, session, { data: { fail: true } });
    await publishEvent(h, session, { data: { flaky: true } });
    const batch = await h.request('POST', '/api/v1/integrations/events/batch', {
      session,
      body: {
        events: [
          { type: 'order.created', data: { n: 2 } },
          { type: 'order.created', data: { fail: true } },
          { type: 'order.created', data: { n: 3 }, idempotencyKey: 'batch-key' },
        ],
      },
    });
    assert.equal(batch.status, 202, `the batch answered ${batch.status}: ${batch.text}`);
    const keyed = { headers: { 'idempotency-key': 'single-key' } };
    const first = await publishEvent(h, session, { data: { n: 4 } }, keyed);
    const replay = await publishEvent(h, session, { data: { n: 4 } }, keyed);
    assert.equal(replay.body.id, first.body.id, 'the keyed replay made a new event');

    const db = h.database.kysely;
    const counts = async () => {
      const row = await sql<Record<string, string | number>>`
        select
          (select count(*) from events where tenant_id = ${tenant.id}) as events,
          (select count(*) from deliveries where tenant_id = ${tenant.id} and status = 'delivered') as delivered,
          (select count(*) from deliveries where tenant_id = ${tenant.id} and status = 'failed') as failed,
          (select count(*) from deliveries where tenant_id = ${tenant.id} and status = 'skipped') as skipped,
          (select count(*) from deliveries where tenant_id = ${tenant.id}
            and status not in ('delivered', 'failed', 'skipped', 'cancelled')) as open,
          (select count(*) from delivery_attempts a join deliveries d
            on d.id = a.delivery_id and d.created_at = a.delivery_created_at
            where d.tenant_id = ${tenant.id}) as attempts`.execute(db);
      return Object.fromEntries(Object.entries(row.rows[0]!).map(([k, v]) => [k, Number(v)])) as Record<
        'events' | 'delivered' | 'failed' | 'skipped' | 'open' | 'attempts',
        number
      >;
    };
    const rows = await waitUntil(
      async () => {
        const now = await counts();
        return now.open === 0 && now.events === 7 && now;
      },
      { message: 'every delivery of the mixed run settled' },
    );
    assert.equal(rows.failed, 2, 'the two failing events did not end failed');
    assert.equal(rows.skipped, 7, 'the paused connection did not skip each event');
    assert.equal(
      rows.attempts,
      2 * 3 + 2 + 4,
      'the attempts are not 3 per failure, 2 for the flaky one, 1 each else',
    );
    let last: ReturnType<typeof total> | undefined;
    await waitUntil(
      async () => {
        last = total(await usageOf(session, '?granularity=hour'));
        return (
          last.eventsPublished === rows.events &&
          last.delivered === rows.delivered &&
          last.failed === rows.failed &&
          last.skipped === rows.skipped &&
          last.attempts === rows.attempts
        );
      },
      { message: () => `usage ${JSON.stringify(last)} to equal the rows ${JSON.stringify(rows)}` },
    );
    assert.equal(last!.proxyCalls, 0, 'proxy calls counted without any');
    assert.equal(last!.ingested, 0, 'ingested requests counted without any');
  });

  test('a request a source accepts counts as ingested and its event as published; a duplicate counts nothing', async () => {
    const { session } = await makeSignedInTenant(h);
    const secret = 'a github secret for usage';
    const created = await h.request('POST', '/api/v1/integrations/sources', {
      session,
      body: { name: 'GitHub', scheme: 'github', secret },
    });
    assert.equal(created.status, 201, `creating a source answered ${created.status}: ${created.text}`);
    const body = JSON.stringify({ ref: 'main' });
    const send = () =>
      h.request('POST', `/ingest/${created.body.id}`, {
        rawBody: body,
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'push',
          'x-github-delivery': 'usage-delivery-1',
          'x-hub-signature-256': githubSignature(secret, body),
        },
      });
    const first = await send();
    assert.equal(first.status, 202, `the signed request answered ${first.status}: ${first.text}`);
    const duplicate = await send();
    assert.equal(duplicate.status, 200, `its duplicate answered ${duplicate.status}: ${duplicate.text}`);
    let last: ReturnType<typeof total> | undefined;
    await waitUntil(
      async () => {
        last = total(await usageOf(session));
        return last.ingested === 1 && last.eventsPublished === 1;
      },
      { message: () => `one ingested request and one event, not ${JSON.stringify(last)}` },
    );
  });
});
