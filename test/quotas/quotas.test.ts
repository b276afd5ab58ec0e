import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ensurePartitions, partitionDays } from '../../src/db/partitions.js';
import { purgeExpired } from '../../src/delivery/retention.js';
import { evaluateConditions } from '../../src/platform/alerting/conditions.js';
import { createQuotaBook } from '../../src/quotas/book.js';
import { publishEvent, type Problem } from '../helpers/events.js';
import { makeSignedInTenant, makeTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';
import { githubSignature } from '../sources/signers.js';

let h: Harness;
before(async () => {
  h = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      RATE_LIMIT_PER_MINUTE: '100000',
    },
  });
});
after(() => h.close());

const DAY_MS = 86_400_000;
type Quotas = Record<'eventsPerDay' | 'connections' | 'requestsPerMinute' | 'retentionDays', number | null>;
const NONE: Quotas = { eventsPerDay: null, connections: null, requestsPerMinute: null, retentionDays: null };
const quotasPath = (tenantId: string) => `/api/v1/platform/tenants/${tenantId}/quotas`;
const putQuotas = (tenantId: string, body: unknown) =>
  h.request('PUT', quotasPath(tenantId), { token: h.platformToken, body });
const getQuotas = (tenantId: string) => h.request('GET', quotasPath(tenantId), { token: h.platformToken });

async function setQuotas(tenantId: string, quotas: Partial<Quotas>) {
  const response = await putQuotas(tenantId, { ...NONE, ...quotas });
  assert.equal(response.status, 200, `setting quotas answered ${response.status}: ${response.text}`);
  return response.body;
}

const eventCount = async (tenantId: string) =>
  Number(
    (
      await h.database.kysely
        .selectFrom('events')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow()
    ).n,
  );

const batch = (session: TestSession, n: number) =>
  h.request('POST', '/api/v1/integrations/events/batch', {
    session,
    body: { events: Array.from({ length: n }, (_, i) => ({ type: 'order.created', data: { i } })) },
  });

/** The seconds from `at` to the next UTC midnight, as Retry-After says them. */
const toMidnight = (at: Date) =>
  Math.ceil((Math.floor(at.getTime() / DAY_MS + 1) * DAY_MS - at.getTime()) / 1000);

describe('the quota routes', () => {
  test('a tenant never given quotas has none; PUT replaces all four, audited, and GET reads them back', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const never = await getQuotas(tenant.id);
    assert.equal(never.status, 200, `reading quotas answered ${never.status}: ${never.text}`);
    assert.deepEqual(
      never.body,
      { ...NONE, usage: { eventsToday: 0, connections: 0 } },
      'unset quotas are not all null',
    );
    await publishEvent(h, session);
    const set = { eventsPerDay: 1000, connections: 5, requestsPerMinute: 1_000_000, retentionDays: 365 };
    const put = await putQuotas(tenant.id, set);
    assert.equal(put.status, 200, `setting quotas answered ${put.status}: ${put.text}`);
    assert.deepEqual(
      put.body,
      { ...set, usage: { eventsToday: 1, connections: 0 } },
      'the PUT answer differs',
    );
    const read = await getQuotas(tenant.id);
    assert.deepEqual(read.body, put.body, 'GET does not read back what PUT set');
    const audit = await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'tenant.quotas.update')
      .where('tenant_id', '=', tenant.id)
      .execute();
    assert.equal(audit.length, 1, 'the change is not audited once');
    assert.equal(audit[0]?.actor_type, 'platform_key', 'the change is not audited as by the platform key');
    const cleared = await putQuotas(tenant.id, NONE);
    assert.deepEqual(
      cleared.body,
      { ...NONE, usage: { eventsToday: 1, connections: 0 } },
      'null does not clear',
    );
  });

  test('every bad body is 400 validation_failed naming the field, and changes nothing', async () => {
    const tenant = await makeTenant(h);
    const good = { eventsPerDay: 10, connections: 2, requestsPerMinute: 60, retentionDays: 7 };
    await setQuotas(tenant.id, good);
    const bad: Array<[string, Record<string, unknown>]> = [
      ['eventsPerDay', { ...good, eventsPerDay: 0 }],
      ['eventsPerDay', { ...good, eventsPerDay: 1.5 }],
      ['eventsPerDay', { ...good, eventsPerDay: '10' }],
      ['connections', { ...good, connections: 0 }],
      ['connections', { ...good, connections: -1 }],
      ['connections', { ...good, connections: true }],
      ['requestsPerMinute', { ...good, requestsPerMinute: 0 }],
      ['requestsPerMinute', { ...good, requestsPerMinute: 1_000_001 }],
      ['requestsPerMinute', { ...good, requestsPerMinute: '60' }],
      ['retentionDays', { ...good, retentionDays: 0 }],
      ['retentionDays', { ...good, retentionDays: 366 }],
      ['retentionDays', { ...good, retentionDays: [7] }],
      ['plan', { ...good, plan: 'gold' }],
      ['retentionDays', { eventsPerDay: 10, connections: 2, requestsPerMinute: 60 }],
    ];
    for (const [field, body] of bad) {
      const response = await putQuotas(tenant.id, body);
      assert.equal(response.status, 400, `${JSON.stringify(body)} answered ${response.status}`);
      assert.equal(response.body.code, 'validation_failed', `${JSON.stringify(body)}: not validation_failed`);
      assert.ok(
        JSON.stringify(response.body.errors ?? response.body.detail).includes(field),
        `${JSON.stringify(body)}: the problem does not name ${field}: ${response.text}`,
      );
    }
    const read = await getQuotas(tenant.id);
    assert.deepEqual(
      { ...read.body, usage: undefined },
      { ...good, usage: undefined },
      'a refused PUT changed the quotas',
    );
  });

  test('an unknown or malformed tenant is 404 not_found, and nothing is written', async () => {
    for (const id of ['ten_0000000000000000000000', 'nope']) {
      const read = await getQuotas(id);
      assert.equal(read.status, 404, `GET ${id} answered ${read.status}`);
      const write = await putQuotas(id, NONE);
      assert.equal(write.status, 404, `PUT ${id} answered ${write.status}`);
      assert.equal(write.body.code, 'not_found', `PUT ${id}: not not_found`);
    }
    const rows = await h.database.kysely
      .selectFrom('tenant_quotas')
      .select('tenant_id')
      .where('tenant_id', '=', 'ten_0000000000000000000000')
      .execute();
    assert.deepEqual(rows, [], 'a quota row was written for an unknown tenant');
  });

  test('a tenant key cannot read or set quotas', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const response = await h.request('PUT', quotasPath(tenant.id), {
      session,
      body: { ...NONE, eventsPerDay: 1_000_000 },
    });
    assert.equal(response.status, 403, `a tenant session set its own quotas: ${response.status}`);
  });
});

describe('eventsPerDay', () => {
  test('publishes up to the quota pass; the next is 429 quota_exceeded until the next UTC day; another tenant is unaffected', async (t) => {
    t.after(() => h.setNow(null));
    const at = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS - 90_500);
    h.setNow(at);
    const { tenant, session } = await makeSignedInTenant(h);
    const other = await makeSignedInTenant(h);
    await setQuotas(tenant.id, { eventsPerDay: 3 });
    await setQuotas(other.tenant.id, { eventsPerDay: 100 });
    for (let i = 0; i < 3; i++) await publishEvent(h, session);
    const over = await publishEvent<Problem>(h, session, {}, { status: 429 });
    assert.equal(over.body.code, 'quota_exceeded', 'the publish over the quota is not quota_exceeded');
    assert.equal(
      over.headers.get('retry-after'),
      String(toMidnight(at)),
      'Retry-After is not the seconds to the next UTC day',
    );
    assert.equal(await eventCount(tenant.id), 3, 'the refused publish wrote an event');
    await publishEvent(h, other.session);
    const read = await getQuotas(tenant.id);
    assert.equal(read.body.usage.eventsToday, 3, 'usage does not show today’s events');
    // The next UTC day: the quota is whole again.
    h.setNow(new Date(at.getTime() + 91_000));
    await publishEvent(h, session);
  });

  test('a batch that would cross the quota is refused whole; one that fits passes', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    await setQuotas(tenant.id, { eventsPerDay: 5 });
    await publishEvent(h, session);
    await publishEvent(h, session);
    const crossing = await batch(session, 4);
    assert.equal(crossing.status, 429, `a crossing batch answered ${crossing.status}: ${crossing.text}`);
    assert.equal(crossing.body.code, 'quota_exceeded', 'the crossing batch is not quota_exceeded');
    assert.ok(Number(crossing.headers.get('retry-after')) > 0, 'the refused batch has no Retry-After');
    assert.equal(await eventCount(tenant.id), 2, 'the refused batch wrote some of its events');
    const fitting = await batch(session, 3);
    assert.equal(fitting.status, 202, `a fitting batch answered ${fitting.status}: ${fitting.text}`);
    assert.equal(await eventCount(tenant.id), 5, 'the fitting batch did not write its events');
    await publishEvent(h, session, {}, { status: 429 });
  });

  test('a quota set mid-day counts the day’s earlier events', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    await publishEvent(h, session);
    await publishEvent(h, session);
    const set = await setQuotas(tenant.id, { eventsPerDay: 3 });
    assert.equal(set.usage.eventsToday, 2, 'the answer does not count the day’s earlier events');
    await publishEvent(h, session);
    await publishEvent(h, session, {}, { status: 429 });
    // Raised: the same process lets publishes through at once.
    await setQuotas(tenant.id, { eventsPerDay: 4 });
    await publishEvent(h, session);
    assert.equal(await eventCount(tenant.id), 4, 'the tenant has not exactly its quota of events');
  });

  test('an idempotent replay gives its reservation back', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    await setQuotas(tenant.id, { eventsPerDay: 2 });
    const headers = { 'idempotency-key': 'same-key' };
    const first = await publishEvent(h, session, {}, { headers });
    const replay = await publishEvent(h, session, {}, { headers });
    assert.equal(replay.body.id, first.body.id, 'the replay did not answer the first event');
    await publishEvent(h, session);
    await publishEvent(h, session, {}, { status: 429 });
    assert.equal(await eventCount(tenant.id), 2, 'the replay took a place of the quota');
  });
});

test('a source’s ingest over the day’s events answers 429 quota_exceeded, and the provider’s retry is taken the next day', async (t) => {
  t.after(() => h.setNow(null));
  const { tenant, session } = await makeSignedInTenant(h);
  await setQuotas(tenant.id, { eventsPerDay: 1 });
  const secret = 'gh-quota-secret';
  const created = await h.request('POST', '/api/v1/integrations/sources', {
    session,
    body: { name: 'quota', scheme: 'github', secret },
  });
  assert.equal(created.status, 201, `creating a source answered ${created.status}: ${created.text}`);
  const send = (delivery: string) => {
    const body = JSON.stringify({ ref: 'refs/heads/main', delivery });
    return h.request('POST', `/ingest/${created.body.id}`, {
      rawBody: body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': delivery,
        'x-hub-signature-256': githubSignature(secret, body),
      },
    });
  };
  assert.equal((await send('d-1')).status, 202, 'the first delivery within the quota was refused');
  const over = await send('d-2');
  assert.equal(over.status, 429, `the delivery over the quota answered ${over.status}: ${over.text}`);
  assert.equal(over.body.code, 'quota_exceeded', 'the delivery over the quota is not quota_exceeded');
  assert.ok(Number(over.headers.get('retry-after')) > 0, 'the refusal has no Retry-After');
  h.setNow(new Date(Math.floor(Date.now() / DAY_MS + 1) * DAY_MS + 1000));
  assert.equal((await send('d-2')).status, 202, 'the provider’s retry the next day was not taken');
});

describe('connections', () => {
  test('a create at the quota is 409 quota_exceeded; revoking one frees a place', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    await setQuotas(tenant.id, { connections: 2 });
    const first = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/a');
    await makeWebhookConnection(h, session, 'http://127.0.0.1:9/b');
    const body = { connectorKey: 'webhook', displayName: 'third', url: 'http://127.0.0.1:9/c' };
    const third = await h.request('POST', '/api/v1/integrations/connections', { session, body });
    assert.equal(third.status, 409, `a third connection answered ${third.status}: ${third.text}`);
    assert.equal(third.body.code, 'quota_exceeded', 'the create over the quota is not quota_exceeded');
    const revoke = await h.request('POST', `/api/v1/integrations/connections/${first.id}/revoke`, {
      session,
      body: {},
    });
    assert.equal(revoke.status, 200, `revoking answered ${revoke.status}: ${revoke.text}`);
    const again = await h.request('POST', '/api/v1/integrations/connections', { session, body });
    assert.equal(again.status, 201, `a create after a revoke answered ${again.status}: ${again.text}`);
    const read = await getQuotas(tenant.id);
    assert.equal(read.body.usage.connections, 2, 'usage does not count the connections not revoked');
  });

  test('concurrent creates cannot both take the last place', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    await setQuotas(tenant.id, { connections: 1 });
    const answers = await Promise.all(
      [1, 2, 3].map((i) =>
        h.request('POST', '/api/v1/integrations/connections', {
          session,
          body: { connectorKey: 'webhook', displayName: `c${i}`, url: 'http://127.0.0.1:9/x' },
        }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    assert.deepEqual(statuses, [201, 409, 409], `concurrent creates answered ${statuses.join(', ')}`);
  });
});

describe('retentionDays', () => {
  test('the retention job deletes each tenant’s old deliveries by its own days; another’s stay', async (t) => {
    t.after(() => h.setNow(null));
    const now = new Date();
    // Old events with skipped deliveries (a paused connection), 3 days ago, for three tenants.
    const tenants = await Promise.all([0, 1, 2].map(() => makeSignedInTenant(h)));
    for (const { session } of tenants) {
      const connection = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/hook');
      const pause = await h.request('POST', `/api/v1/integrations/connections/${connection.id}/pause`, {
        session,
        body: {},
      });
      assert.equal(pause.status, 200, `pausing answered ${pause.status}: ${pause.text}`);
    }
    h.setNow(new Date(now.getTime() - 3 * DAY_MS));
    for (const { session } of tenants) await publishEvent(h, session);
    h.setNow(null);
    for (const { session } of tenants) await publishEvent(h, session);
    const [short, global, long] = tenants.map((x) => x.tenant.id) as [string, string, string];
    await setQuotas(short, { retentionDays: 1 });
    await setQuotas(long, { retentionDays: 10 });
    const deliveries = async (tenantId: string) =>
      (
        await h.database.kysely
          .selectFrom('deliveries')
          .select('status')
          .where('tenant_id', '=', tenantId)
          .execute()
      ).map((d) => d.status);
    assert.deepEqual(await deliveries(short), ['skipped', 'skipped'], 'the paused connection did not skip');
    // Global retention 5 days: only the 1-day tenant loses its 3-day-old rows.
    await purgeExpired(h.database.kysely, now, new Date(now.getTime() - 5 * DAY_MS), h.database.engine);
    assert.equal((await deliveries(short)).length, 1, 'the 1-day tenant kept its 3-day-old delivery');
    assert.equal(await eventCount(short), 1, 'the 1-day tenant kept its 3-day-old event');
    assert.equal((await deliveries(global)).length, 2, 'a tenant on the global days lost a delivery');
    assert.equal((await deliveries(long)).length, 2, 'the 10-day tenant lost a delivery');
    // Global retention 2 days: the global tenant loses them too, the 10-day tenant keeps them.
    await purgeExpired(h.database.kysely, now, new Date(now.getTime() - 2 * DAY_MS), h.database.engine);
    assert.equal(
      (await deliveries(global)).length,
      1,
      'a tenant on the global days kept a delivery past them',
    );
    assert.equal(await eventCount(global), 1, 'a tenant on the global days kept an event past them');
    assert.equal((await deliveries(long)).length, 2, 'the 10-day tenant lost a delivery within its days');
    assert.equal(await eventCount(long), 2, 'the 10-day tenant lost an event within its days');
  });

  test('a day partition is dropped only once every tenant’s retention has passed it', async (t) => {
    t.after(() => h.setNow(null));
    const day = new Date('2021-05-01T10:00:00Z');
    const tenants = await Promise.all([0, 1].map(() => makeSignedInTenant(h)));
    await ensurePartitions(h.database.kysely, day, 0);
    for (const { session } of tenants) {
      const connection = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/hook');
      await h.request('POST', `/api/v1/integrations/connections/${connection.id}/pause`, {
        session,
        body: {},
      });
      h.setNow(day);
      await publishEvent(h, session);
      h.setNow(null);
    }
    const [plain, long] = tenants.map((x) => x.tenant.id) as [string, string];
    await setQuotas(long, { retentionDays: 365 });
    const now = new Date('2021-06-10T00:00:00Z');
    const purged = await purgeExpired(
      h.database.kysely,
      now,
      new Date(now.getTime() - 30 * DAY_MS),
      h.database.engine,
    );
    assert.deepEqual(purged.days, [], 'a day the 365-day tenant still keeps was dropped');
    assert.equal(await eventCount(plain), 0, 'a tenant on the global days kept an event past them');
    assert.equal(await eventCount(long), 1, 'the 365-day tenant lost an event within its days');
    await setQuotas(long, { retentionDays: null });
    await purgeExpired(h.database.kysely, now, new Date(now.getTime() - 30 * DAY_MS), h.database.engine);
    assert.equal(await eventCount(long), 0, 'back on the global days, the tenant kept its old event');
    if (h.database.engine === 'postgres') {
      assert.ok(
        !(await partitionDays(h.database.kysely)).includes('20210501'),
        'the expired day was not dropped',
      );
    }
  });
});

describe('TenantQuotaNearlyUsed', () => {
  const firing = async (tenantId: string) =>
    (await evaluateConditions(h.database.kysely, new Date(), h.config.alerts))
      .filter((c) => c.labels.alertname === 'TenantQuotaNearlyUsed' && c.labels.tenantId === tenantId)
      .map((c) => c.labels);

  test('fires from 80 % of a set quota, per quota, and resolves below', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    await setQuotas(tenant.id, { eventsPerDay: 5, connections: 2 });
    for (let i = 0; i < 3; i++) await publishEvent(h, session);
    assert.deepEqual(await firing(tenant.id), [], 'fires at 60 %');
    await publishEvent(h, session);
    assert.deepEqual(
      await firing(tenant.id),
      [
        {
          alertname: 'TenantQuotaNearlyUsed',
          severity: 'warning',
          tenantId: tenant.id,
          quota: 'eventsPerDay',
        },
      ],
      'does not fire at 80 % of eventsPerDay',
    );
    await makeWebhookConnection(h, session, 'http://127.0.0.1:9/a');
    const second = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/b');
    assert.deepEqual(
      (await firing(tenant.id)).map((l) => l.quota).sort(),
      ['connections', 'eventsPerDay'],
      'does not fire for connections at 100 %',
    );
    await h.request('POST', `/api/v1/integrations/connections/${second.id}/revoke`, { session, body: {} });
    await setQuotas(tenant.id, { eventsPerDay: 100, connections: 2 });
    assert.deepEqual(await firing(tenant.id), [], 'does not resolve below 80 %');
  });
});

describe('the quota book', () => {
  test('requestsPerMinute answers from the cache, starts a read on a miss, and follows a change within its TTL', async () => {
    const tenant = await makeTenant(h);
    await setQuotas(tenant.id, { requestsPerMinute: 600 });
    let clock = 0;
    const book = createQuotaBook(h.database.kysely, { ttlMs: 1000, clock: () => clock });
    const first = book.requestsPerMinute(tenant.id);
    assert.ok(first instanceof Promise, 'a first miss does not wait for the read');
    assert.equal(await first, 600, 'the first read does not answer the quota');
    assert.equal(book.requestsPerMinute(tenant.id), 600, 'the read was not kept');
    await setQuotas(tenant.id, { requestsPerMinute: 60 });
    assert.equal(book.requestsPerMinute(tenant.id), 600, 'another process’s book changed within its TTL');
    clock = 1001;
    assert.equal(
      book.requestsPerMinute(tenant.id),
      600,
      'a stale entry does not answer what it knew while it reads',
    );
    await waitUntil(() => book.requestsPerMinute(tenant.id) === 60, {
      message: 'the stale entry was not read again',
    });
    await setQuotas(tenant.id, { requestsPerMinute: 30 });
    book.forget(tenant.id);
    // The process that set them: its next request waits for the new quotas, none passes on the old.
    assert.equal(
      await book.requestsPerMinute(tenant.id),
      30,
      'a forgotten tenant is not read again before it answers',
    );
    assert.equal(book.requestsPerMinute(tenant.id), 30, 'the new read was not kept');
  });

  test('a tenant refused for the day is refused from memory for a second, then asked again: events given back meanwhile become publishable', async () => {
    const tenant = await makeTenant(h);
    await setQuotas(tenant.id, { eventsPerDay: 1 });
    let clock = 0;
    const book = createQuotaBook(h.database.kysely, { ttlMs: 60_000, clock: () => clock });
    const at = new Date();
    await book.reserveEvents(tenant.id, 1, at);
    const refused = async (what: string) => {
      const error = await book.reserveEvents(tenant.id, 1, at).then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
      assert.equal(error?.code, 'quota_exceeded', `${what}: not refused with quota_exceeded`);
    };
    await refused('the second event of the day');
    // Another process's failed write gives its place back: the row says one is free again.
    await h.database.kysely
      .updateTable('tenant_event_days')
      .set({ events: 0 })
      .where('tenant_id', '=', tenant.id)
      .execute();
    clock = 999;
    await refused('within the second after the refusal (from memory, no statement)');
    clock = 1_001;
    const reservation = await book.reserveEvents(tenant.id, 1, at);
    assert.ok(reservation, 'after the second, the place given back is not taken');
    const { events } = await h.database.kysely
      .selectFrom('tenant_event_days')
      .select('events')
      .where('tenant_id', '=', tenant.id)
      .executeTakeFirstOrThrow();
    assert.equal(events, 1, 'the reservation after the second was not counted on the row');
  });
});
