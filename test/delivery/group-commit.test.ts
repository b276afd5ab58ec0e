import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TenantScope } from '../../src/access/scope.js';
import { loadConnectorCatalog } from '../../src/connections/catalog.js';
import type { AppContext } from '../../src/context.js';
import { createEventWriter } from '../../src/delivery/group-commit.js';
import { DELIVERY_CHANNEL } from '../../src/delivery/wakeup.js';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { ENGINE } from '../helpers/test-database.js';

// Receivers listen on 127.0.0.1 only, opened by DELIVERY_ALLOWED_CIDRS; nothing else is contacted.
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
const EVENTS = '/api/v1/integrations/events';

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

describe('group commit: concurrent publishes share statements', () => {
  test('a burst from two tenants: every event answered, fanned out to its own tenant only', async (t) => {
    const tenants = await Promise.all(
      [0, 1].map(async () => {
        const { session } = await makeSignedInTenant(h);
        const receiver = await startReceiver();
        t.after(() => receiver.close());
        await makeWebhookConnection(h, session, receiver.url());
        const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
        return { receiver, key };
      }),
    );
    const PER_TENANT = 60;
    // Interleaved, all at once: the groups the writer forms mix both tenants' events.
    const answers = await Promise.all(
      Array.from({ length: PER_TENANT * 2 }, (_, i) => {
        const tenant = i % 2;
        return h
          .request('POST', EVENTS, {
            token: tenants[tenant]!.key.secret,
            body: { type: 'burst.event', data: { i, tenant } },
          })
          .then((r) => ({ tenant, r }));
      }),
    );
    for (const { r } of answers) {
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.deliveries, 1, 'each event fans out to its tenant’s one connection');
    }
    const ids = answers.map(({ r }) => r.body.id as string);
    assert.equal(new Set(ids).size, ids.length, 'every event has its own ID');
    for (const [tenant, { receiver }] of tenants.entries()) {
      const expected = answers
        .filter((a) => a.tenant === tenant)
        .map(({ r }) => r.body.id as string)
        .sort();
      const arrived = await receiver.waitFor(PER_TENANT);
      const got = arrived.map((a) => JSON.parse(a.body) as { id: string; data: { tenant: number } });
      assert.deepEqual(
        [...new Set(got.map((g) => g.id))].sort(),
        expected,
        `tenant ${tenant}'s receiver gets its own events, all of them`,
      );
      assert.ok(
        got.every((g) => g.data.tenant === tenant),
        'no event reaches another tenant’s connection',
      );
    }
  });

  test('an event whose write fails does not fail the events grouped with it', async () => {
    const { tenant } = await makeSignedInTenant(h);
    const ctx = {
      db: h.database.kysely,
      keyring: h.keyring,
      usage: { count: () => {}, flush: () => Promise.resolve() },
    } as unknown as AppContext;
    const writer = createEventWriter({ ctx, catalog: await loadConnectorCatalog([]) });
    const scopeOf = (tenantId: string) =>
      ({ tenantId, entitlements: ['integrations'] }) as unknown as TenantScope;
    const at = new Date();
    // Queued in one turn of the event loop: one group. The missing tenant fails its statement.
    const results = await Promise.allSettled([
      writer.write({ scope: scopeOf(tenant.id), at, type: 'a.one', payload: '{}' }),
      writer.write({ scope: scopeOf('tnt_missing'), at, type: 'a.two', payload: '{}' }),
      writer.write({ scope: scopeOf(tenant.id), at, type: 'a.three', payload: '{}' }),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
      'only the event of the missing tenant fails',
    );
    const stored = await h.database.kysely
      .selectFrom('events')
      .select('type')
      .where('tenant_id', '=', tenant.id)
      .orderBy('type')
      .execute();
    assert.deepEqual(
      stored.map((e) => e.type),
      ['a.one', 'a.three'],
      'both events of the real tenant are stored',
    );
  });

  // Every process's workers hear of new deliveries through NOTIFY; deliveries the publishing
  // process's own worker took at once need no claim anywhere, so they cost no NOTIFY.
  if (ENGINE === 'postgres') {
    test('deliveries the publishing process sends itself are not announced; a keyed publish, claimed later, is', async (t) => {
      const { session } = await makeSignedInTenant(h);
      const receiver = await startReceiver(t);
      await makeWebhookConnection(h, session, receiver.url());
      const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
      let heard = 0;
      const unlisten = await h.database.listen!(DELIVERY_CHANNEL, () => heard++);
      t.after(() => unlisten());
      for (let i = 0; i < 10; i++) {
        const r = await h.request('POST', EVENTS, {
          token: key.secret,
          body: { type: 'sent.here', data: { i } },
        });
        assert.equal(r.status, 202, r.text);
      }
      await receiver.waitFor(10);
      const afterUnkeyed = heard;
      const keyed = await h.request('POST', EVENTS, {
        token: key.secret,
        headers: { 'idempotency-key': 'announce-me' },
        body: { type: 'claimed.later', data: {} },
      });
      assert.equal(keyed.status, 202, keyed.text);
      await receiver.waitFor(11);
      assert.ok(heard > afterUnkeyed, 'a keyed publish, written apart from the group commit, is announced');
      assert.ok(
        afterUnkeyed <= 1,
        `ten publishes sent by this process's own worker were announced ${afterUnkeyed} times (one is the listener's own)`,
      );
    });
  }
});
