import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// Payload filters (docs/api/connections.md) through the API, with real receivers on 127.0.0.1.
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
const CONNECTIONS = '/api/v1/integrations/connections';
const FILTER_TEST = '/api/v1/integrations/filter-test';
const HOOK_URL = 'https://hooks.example.com/hubgate';

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

const rowsOf = (tenantId: string) =>
  h.database.kysely
    .selectFrom('connections')
    .select(['id', 'config'])
    .where('tenant_id', '=', tenantId)
    .execute();

const GOLD = { 'data.customer.tier': 'gold' };

describe('saving a filter', () => {
  test('create keeps the filter in config; PATCH replaces it; null clears it', async () => {
    const { session } = await makeSignedInTenant(h);
    const created = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: 'webhook', displayName: 'gold', url: HOOK_URL, filter: GOLD },
    });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.config.filter, GOLD, 'the created connection does not show its filter');
    const path = `${CONNECTIONS}/${created.body.id}`;
    const replaced = { $any: [{ type: { prefix: 'order.' } }, { 'data.total': { gte: 100 } }] };
    const edited = await h.request('PATCH', path, { session, body: { filter: replaced } });
    assert.equal(edited.status, 200, edited.text);
    assert.deepEqual(
      edited.body.config.filter,
      replaced,
      'the edited connection does not show the new filter',
    );
    const cleared = await h.request('PATCH', path, { session, body: { filter: null } });
    assert.equal(cleared.status, 200, cleared.text);
    assert.equal('filter' in cleared.body.config, false, 'filter: null leaves a filter on the connection');
  });

  const bad: Array<[string, unknown, string]> = [
    ['an unknown operator', { 'data.tier': { regex: '^g' } }, '/filter/data.tier/regex'],
    [
      'depth 5',
      { $all: [{ $all: [{ $all: [{ $all: [{ type: 'a' }] }] }] }] },
      '/filter/$all/0/$all/0/$all/0/$all/0',
    ],
    [
      '51 conditions',
      Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`data.k${i}`, i])),
      '/filter/data.k50',
    ],
    ['over 4 KiB', { 'data.a': { in: Array.from({ length: 100 }, () => 'x'.repeat(40)) } }, '/filter'],
    ['a bad operand', { 'data.total': { gt: 'soon' } }, '/filter/data.total/gt'],
    [
      'a date that does not exist',
      { 'data.paidAt': { gte: '2024-02-30T00:00:00Z' } },
      '/filter/data.paidAt/gte',
    ],
    ['hour 24', { 'data.paidAt': { lt: '2024-02-01T24:00:00Z' } }, '/filter/data.paidAt/lt'],
  ];
  for (const [name, filter, path] of bad) {
    test(`${name} → 400 validation_failed naming ${path}, nothing saved (create and edit)`, async () => {
      const { tenant, session } = await makeSignedInTenant(h);
      const create = await h.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'webhook', displayName: 'x', url: HOOK_URL, filter },
      });
      assert.equal(create.status, 400, `creating with ${name}: ${create.text}`);
      assert.equal(
        create.body.code,
        'validation_failed',
        `creating with ${name} answers ${create.body.code}`,
      );
      assert.equal(
        create.body.errors[0].path,
        path,
        `creating with ${name} names another place: ${create.text}`,
      );
      assert.equal((await rowsOf(tenant.id)).length, 0, `creating with ${name} saved a connection`);

      const ok = await h.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'webhook', displayName: 'x', url: HOOK_URL, filter: GOLD },
      });
      const edit = await h.request('PATCH', `${CONNECTIONS}/${ok.body.id}`, {
        session,
        body: { filter, displayName: 'renamed' },
      });
      assert.equal(edit.status, 400, `editing with ${name}: ${edit.text}`);
      assert.equal(edit.body.errors[0].path, path, `editing with ${name} names another place: ${edit.text}`);
      const [row] = await rowsOf(tenant.id);
      assert.deepEqual(row?.config.filter, GOLD, `editing with ${name} changed the saved filter`);
    });
  }
});

describe('matching at publish', () => {
  async function twoHooks(session: TestSession, filter: unknown) {
    const filtered = await startReceiver();
    const open = await startReceiver();
    const a = await makeWebhookConnection(h, session, filtered.url(), { displayName: 'filtered', filter });
    const b = await makeWebhookConnection(h, session, open.url(), { displayName: 'open' });
    return { filtered, open, a, b, close: () => Promise.all([filtered.close(), open.close()]) };
  }

  test('the filtered connection gets only matching events; the other gets both', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const hooks = await twoHooks(session, { 'data.customer.tier': 'gold', 'data.total': { gte: 100 } });
    t.after(hooks.close);
    const publish = (data: unknown) =>
      h.request('POST', '/api/v1/integrations/events', { session, body: { type: 'order.paid', data } });
    const silver = await publish({ customer: { tier: 'silver' }, total: 500 });
    assert.equal(
      silver.body.deliveries,
      1,
      'the silver event fans out to other than the unfiltered connection',
    );
    const gold = await publish({ customer: { tier: 'gold' }, total: 150 });
    assert.equal(gold.body.deliveries, 2, 'the gold event fans out to other than both connections');
    const keyed = await h.request('POST', '/api/v1/integrations/events', {
      session,
      body: { type: 'order.paid', data: { customer: { tier: 'gold' }, total: 5 } },
      headers: { 'idempotency-key': 'small-gold' },
    });
    assert.equal(keyed.body.deliveries, 1, 'a keyed publish does not apply the filter');
    await hooks.open.waitFor(3);
    await waitUntil(() => hooks.filtered.received.length >= 1, {
      message: 'the gold event at the filtered receiver',
    });
    await h.request('POST', '/api/v1/integrations/events', {
      session,
      body: { type: 'order.paid', data: {} },
    });
    await hooks.open.waitFor(4);
    assert.deepEqual(
      hooks.filtered.received.map((r) => JSON.parse(r.body).id),
      [gold.body.id],
      'the filtered receiver got other events than the gold one',
    );
  });

  test('a batch is filtered per item', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const hooks = await twoHooks(session, { $any: [{ type: 'a.b' }, { 'data.n': { in: [2, 3] } }] });
    t.after(hooks.close);
    const events = [1, 2, 3, 4].map((n) => ({ type: 'x.y', data: { n } }));
    const r = await h.request('POST', '/api/v1/integrations/events/batch', {
      session,
      body: { events: [...events, { type: 'a.b', data: {}, idempotencyKey: 'k1' }] },
    });
    assert.equal(r.status, 202, r.text);
    assert.deepEqual(
      r.body.data.map((item: { deliveries: number }) => item.deliveries),
      [1, 2, 2, 1, 2],
      'batch items fan out other than each item alone would with the filter',
    );
    await hooks.open.waitFor(5);
    await hooks.filtered.waitFor(3);
    const got = hooks.filtered.received.map((x) => JSON.parse(x.body)).map((b) => b.data.n ?? b.type);
    assert.deepEqual(got.sort(), [2, 3, 'a.b'].sort(), 'the filtered receiver got other batch items');
  });
});

describe('POST /api/v1/integrations/filter-test', () => {
  test('shows whether a sample event matches, and which conditions failed', async () => {
    const { session } = await makeSignedInTenant(h);
    const filter = { type: { prefix: 'order.' }, 'data.customer.tier': { in: ['gold', 'platinum'] } };
    const yes = await h.request('POST', FILTER_TEST, {
      session,
      body: { filter, event: { type: 'order.paid', data: { customer: { tier: 'gold' } } } },
    });
    assert.equal(yes.status, 200, yes.text);
    assert.deepEqual(
      yes.body,
      { matches: true, failed: [] },
      'a matching sample event is not shown as matching',
    );
    const no = await h.request('POST', FILTER_TEST, {
      session,
      body: { filter, event: { type: 'user.created', data: {} } },
    });
    assert.equal(no.status, 200, no.text);
    assert.equal(no.body.matches, false, 'a sample event that fails is shown as matching');
    assert.deepEqual(
      no.body.failed.map((f: { filterPath: string; actualType: string }) => [f.filterPath, f.actualType]),
      [
        ['/filter/type/prefix', 'string'],
        ['/filter/data.customer.tier/in', 'missing'],
      ],
      'the failed conditions shown are not the two that failed',
    );
    const bad = await h.request('POST', FILTER_TEST, {
      session,
      body: { filter: { 'data.a': { like: 1 } }, event: { type: 'a', data: {} } },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(
      bad.body.errors[0].path,
      '/filter/data.a/like',
      'an unknown operator is not named by its path',
    );
  });

  test('sessions only: a tenant key is refused, as the allowlist is closed', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    const r = await h.request('POST', FILTER_TEST, {
      token: key.secret,
      body: { filter: null, event: { type: 'a', data: {} } },
    });
    assert.equal(r.status, 403, r.text);
    assert.equal(
      r.body.code,
      'route_not_allowed',
      'a tenant key on the filter test is not route_not_allowed',
    );
  });
});
