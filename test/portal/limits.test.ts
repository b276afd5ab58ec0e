import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomBase62 } from '../../src/crypto/base62.js';
import { MAX_LIVE_PORTAL_SESSIONS, MAX_PENDING_CONNECT_LINKS } from '../../src/portal/caps.js';
import { PORTAL_RETENTION_DAYS } from '../../src/portal/retention.js';
import { makeTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// What one tenant can take from another through portal sessions and connect links
// (docs/decisions/0077-portal-and-connect-link-caps.md): a tenant holds at most so many live
// sessions and pending links, at its cap it holds back no other tenant, a flood of wrong codes from
// one address throttles that address only, and ended sessions and links do not stay rows for good.

const DAY = 86_400_000;

let h: Harness;
/** A second process on the same database. */
let h2: Harness;
before(async () => {
  // Client addresses from X-Forwarded-For; the platform key makes thousands of sessions here, past
  // its usual 600 a minute; the retention runs every 100 ms instead of hourly.
  const env = { TRUST_PROXY: '1', RATE_LIMIT_PER_MINUTE: '1000000' };
  h = await startHarness({ env, workers: { retentionIntervalMs: 100 } });
  const database = ENGINE === 'postgres' ? await h.testDatabase.openAnother() : h.testDatabase.database;
  h2 = await startHarness({
    env,
    testDatabase: { ...h.testDatabase, database, drop: async () => {} },
    keyring: h.keyring,
  });
});
after(async () => {
  await h2?.close();
  await h?.close();
});

let lastAddress = 0;
/** An address no other request of this file came from. */
const newAddress = () => {
  lastAddress += 1;
  return `10.77.${Math.floor(lastAddress / 250)}.${(lastAddress % 250) + 1}`;
};

const portalSessions = (tenantId: string) => `/api/v1/platform/tenants/${tenantId}/portal-sessions`;
const connectLinks = (tenantId: string) => `/api/v1/platform/tenants/${tenantId}/connect-sessions`;
const kinds = {
  'portal sessions': {
    path: portalSessions,
    body: { subject: 'kim@customer.example' },
    cap: MAX_LIVE_PORTAL_SESSIONS,
  },
  'connect links': {
    path: connectLinks,
    body: { connectorKey: 'webhook', subject: 'customer-42' },
    cap: MAX_PENDING_CONNECT_LINKS,
  },
} as const;
type Kind = keyof typeof kinds;

function assertProblem(r: TestResponse, status: number, code: string, what: string): void {
  assert.equal(r.status, status, `${what}: answered ${r.status} ${r.text}`);
  assert.equal(r.body?.code, code, `${what}: answered ${r.text}`);
}

const create = (kind: Kind, tenantId: string, on = h) =>
  on.request('POST', kinds[kind].path(tenantId), { token: on.platformToken, body: kinds[kind].body });

/** Makes `count` of `kind` for the tenant, ten at a time; answers the IDs, asserting every one was made. */
async function createMany(kind: Kind, tenantId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let made = 0; made < count; made += 10) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(10, count - made) }, () => create(kind, tenantId)),
    );
    for (const r of answers) {
      assert.equal(r.status, 201, `${kind} no. ${made + 1}…: ${r.status} ${r.text}`);
      ids.push(r.body.id);
    }
  }
  return ids;
}

const codeOf = (url: string): string => new URL(url).hash.replace(/^#code=/, '');

for (const kind of Object.keys(kinds) as Kind[]) {
  const { cap } = kinds[kind];
  describe(`${kind} per tenant`, () => {
    test(`one more than ${cap} is 409; deleting one frees a place; another tenant is not held`, async () => {
      const tenant = await makeTenant(h, { entitlements: ['integrations'] });
      const other = await makeTenant(h, { entitlements: ['integrations'] });
      const ids = await createMany(kind, tenant.id, cap);
      const over = await create(kind, tenant.id);
      assertProblem(over, 409, 'conflict', `${kind} no. ${cap + 1}`);
      assert.match(over.body.detail, new RegExp(String(cap)), `the 409 does not say the cap: ${over.text}`);
      const theirs = await create(kind, other.id);
      assert.equal(theirs.status, 201, `a tenant at its cap held another back: ${theirs.text}`);

      const ended = await h.request('DELETE', `${kinds[kind].path(tenant.id)}/${ids[0]}`, {
        token: h.platformToken,
      });
      assert.equal(ended.status, 204, ended.text);
      assert.equal((await create(kind, tenant.id)).status, 201, `a deleted one of ${kind} still counts`);
      assertProblem(await create(kind, tenant.id), 409, 'conflict', 'the cap after a place was freed');
    });
  });
}

describe('what counts', () => {
  test('a portal session whose link lapsed unused, or that expired, counts no more; an exchanged one does', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const start = new Date();
    h.setNow(start);
    try {
      // One session exchanged at once, of a day; the rest only minted.
      const first = await h.request('POST', portalSessions(tenant.id), {
        token: h.platformToken,
        body: { subject: 'kept', expiresInSeconds: 86_400 },
      });
      assert.equal(first.status, 201, first.text);
      const exchanged = await h.request('POST', '/api/v1/portal/exchange', {
        headers: { 'x-forwarded-for': newAddress() },
        body: { code: codeOf(first.body.url) },
      });
      assert.equal(exchanged.status, 200, exchanged.text);
      await createMany('portal sessions', tenant.id, MAX_LIVE_PORTAL_SESSIONS - 1);
      assertProblem(await create('portal sessions', tenant.id), 409, 'conflict', 'at the cap');
      // Eleven minutes on, the unused links lapsed: those sessions can never be used, and count no more.
      h.setNow(new Date(start.getTime() + 11 * 60_000));
      await createMany('portal sessions', tenant.id, MAX_LIVE_PORTAL_SESSIONS - 1);
      assertProblem(await create('portal sessions', tenant.id), 409, 'conflict', 'the exchanged one counts');
    } finally {
      h.setNow(null);
    }
  });

  test('a completed connect link counts no more', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const first = await create('connect links', tenant.id);
    assert.equal(first.status, 201, first.text);
    await createMany('connect links', tenant.id, MAX_PENDING_CONNECT_LINKS - 1);
    assertProblem(await create('connect links', tenant.id), 409, 'conflict', 'at the cap');
    const completed = await h.request('POST', '/api/v1/connect/complete', {
      headers: { 'x-forwarded-for': newAddress() },
      body: { code: codeOf(first.body.url), config: { url: 'https://hooks.example.com/x' } },
    });
    assert.equal(completed.status, 201, completed.text);
    assert.equal((await create('connect links', tenant.id)).status, 201, 'a completed link still counts');
  });

  test(
    'many creates at the last place, from two processes at once: exactly one is made',
    { skip: ENGINE !== 'postgres' && 'the race needs two processes on PostgreSQL' },
    async () => {
      for (const kind of Object.keys(kinds) as Kind[]) {
        const tenant = await makeTenant(h, { entitlements: ['integrations'] });
        await createMany(kind, tenant.id, kinds[kind].cap - 1);
        const answers = await Promise.all(
          Array.from({ length: 6 }, (_, i) => create(kind, tenant.id, i % 2 ? h2 : h)),
        );
        assert.deepEqual(
          answers.map((r) => r.status).sort(),
          [201, 409, 409, 409, 409, 409],
          `${kind}: ${answers.map((r) => `${r.status} ${r.body?.code ?? ''}`).join(' | ')}`,
        );
      }
    },
  );
});

describe('a flood of wrong codes', () => {
  const routes = {
    'the portal exchange': '/api/v1/portal/exchange',
    'the connect page': '/api/v1/connect/session',
  } as const;
  for (const [what, route] of Object.entries(routes)) {
    test(`${what}: thirty at once from one address get 429 past the tenth; a good code from another address works`, async () => {
      const tenant = await makeTenant(h, { entitlements: ['integrations'] });
      const kind: Kind = route === routes['the portal exchange'] ? 'portal sessions' : 'connect links';
      const made = await create(kind, tenant.id);
      assert.equal(made.status, 201, made.text);
      const flooder = newAddress();
      const flood = await Promise.all(
        Array.from({ length: 30 }, () =>
          h.request('POST', route, {
            headers: { 'x-forwarded-for': flooder },
            body: { code: randomBase62(32) },
          }),
        ),
      );
      const statuses = flood.map((r) => r.status);
      assert.deepEqual([...new Set(statuses)].sort(), [401, 429], `the flood answered ${statuses.join(' ')}`);
      assert.ok(
        statuses.filter((s) => s === 401).length <= 10,
        `more than ten codes were tried: ${statuses.join(' ')}`,
      );
      for (const r of flood.filter((r) => r.status === 429))
        assert.ok(Number(r.headers.get('retry-after')) > 0, 'a 429 says when to try again');
      // The flooding address is held back even with a good code; another address is not.
      const good = codeOf(made.body.url);
      assertProblem(
        await h.request('POST', route, { headers: { 'x-forwarded-for': flooder }, body: { code: good } }),
        429,
        'rate_limited',
        'a good code from the flooding address',
      );
      const elsewhere = await h.request('POST', route, {
        headers: { 'x-forwarded-for': newAddress() },
        body: { code: good },
      });
      assert.equal(elsewhere.status, 200, `another address was held back by the flood: ${elsewhere.text}`);
    });
  }
});

describe('retention', () => {
  test(`sessions and links expired more than ${PORTAL_RETENTION_DAYS} days ago are deleted; younger ones stay`, async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const now = Date.now();
    const made: Record<'old' | 'young', Record<Kind, string>> = { old: {} as never, young: {} as never };
    try {
      for (const [age, daysAgo] of [
        ['old', PORTAL_RETENTION_DAYS + 2],
        ['young', PORTAL_RETENTION_DAYS - 2],
      ] as const) {
        h.setNow(new Date(now - daysAgo * DAY));
        for (const kind of Object.keys(kinds) as Kind[]) {
          const r = await create(kind, tenant.id);
          assert.equal(r.status, 201, r.text);
          made[age][kind] = r.body.id;
        }
      }
    } finally {
      h.setNow(null);
    }
    const listed = async (kind: Kind): Promise<string[]> => {
      const r = await h.request('GET', `${kinds[kind].path(tenant.id)}?limit=100`, {
        token: h.platformToken,
      });
      assert.equal(r.status, 200, r.text);
      return (r.body.data as Array<{ id: string }>).map((s) => s.id);
    };
    for (const kind of Object.keys(kinds) as Kind[]) {
      await waitUntil(async () => !(await listed(kind)).includes(made.old[kind]), {
        message: `the old one of ${kind} to be deleted`,
      });
      assert.ok((await listed(kind)).includes(made.young[kind]), `a young one of ${kind} was deleted`);
    }
    assertProblem(
      await h.request('GET', `${connectLinks(tenant.id)}/${made.old['connect links']}`, {
        token: h.platformToken,
      }),
      404,
      'not_found',
      'a deleted old link',
    );
  });
});
