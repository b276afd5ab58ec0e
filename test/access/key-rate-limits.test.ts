import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeKey, makeSignedInTenant, makeTenant, makeUser } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';

// Per-key limits, the tenant's bucket and the rate-limit fields of every 429 (docs/api/rate-limits.md,
// docs/api/keys.md, docs/decisions/0091-rate-limits-leased-across-processes.md).

const HEALTH = '/api/v1/automation/health';
/** A fresh window for each test, mid-minute, so a whole test stays inside one fixed window. */
let windows = 0;
const freshWindow = () => new Date((Math.floor(Date.now() / 60_000) + 10 + windows++ * 2) * 60_000 + 20_000);

/** Tenants given a requests-per-minute quota, as the quotas will give them (GateDeps.tenantRequestLimit). */
const tenantLimits = new Map<string, number>();
const tenantRequestLimit = (tenantId: string) => tenantLimits.get(tenantId) ?? null;

function assertRefusal(r: TestResponse, policy: string, what: string): void {
  assert.equal(r.status, 429, `${what}: answered ${r.status}, not 429: ${r.text}`);
  assert.equal(r.body.code, 'rate_limited', `${what}: refused with ${r.body.code}, not rate_limited`);
  assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/, `${what}: no Retry-After in seconds`);
  assert.match(
    r.headers.get('ratelimit-policy') ?? '',
    new RegExp(`"${policy}";q=\\d+;w=\\d+`),
    `${what}: no RateLimit-Policy of "${policy}"`,
  );
  assert.match(
    r.headers.get('ratelimit') ?? '',
    new RegExp(`"${policy}";r=0;t=${r.headers.get('retry-after')}`),
    `${what}: RateLimit does not say nothing is left until Retry-After`,
  );
}

describe('per-key rate limits', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ tenantRequestLimit });
  });
  after(() => h.close());

  test('a key created with rateLimitPerMinute 3 gets 3 requests, then 429 rate_limited with Retry-After, RateLimit-Policy and RateLimit; another key of the tenant is unaffected', async () => {
    const { session } = await makeSignedInTenant(h);
    const limited = await makeKey(h, session, { rateLimitPerMinute: 3 });
    const other = await makeKey(h, session);
    assert.equal(limited.rateLimitPerMinute, 3, 'the create answer does not show the key’s limit');
    assert.equal(other.rateLimitPerMinute, null, 'a key created without a limit does not show null');
    h.setNow(freshWindow());
    try {
      for (let i = 1; i <= 3; i++) {
        const r = await h.request('GET', HEALTH, { token: limited.secret });
        assert.equal(r.status, 200, `request ${i} of 3 is refused`);
        assert.equal(
          r.headers.get('ratelimit-policy'),
          '"credential";q=3;w=60',
          `request ${i}: RateLimit-Policy does not announce the key's limit`,
        );
        assert.equal(
          r.headers.get('ratelimit'),
          `"credential";r=${3 - i};t=40`,
          `request ${i}: RateLimit does not count down`,
        );
        assert.equal(r.headers.get('ratelimit-limit'), '3', `request ${i}: RateLimit-Limit is not the key's`);
      }
      assertRefusal(
        await h.request('GET', HEALTH, { token: limited.secret }),
        'credential',
        'the 4th request',
      );
      const r = await h.request('GET', HEALTH, { token: other.secret });
      assert.equal(r.status, 200, 'another key of the same tenant is refused');
      assert.equal(
        r.headers.get('ratelimit-policy'),
        '"credential";q=600;w=60',
        'a key without a limit of its own does not have RATE_LIMIT_PER_MINUTE',
      );
    } finally {
      h.setNow(null);
    }
  });

  test('the list shows each key’s limit; rotate without rateLimitPerMinute keeps it, with it replaces it (null: the global one), and the new limit applies', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { rateLimitPerMinute: 3 });
    const listed = async () =>
      (
        await h.request<{ data: Array<{ id: string; rateLimitPerMinute: number | null }> }>(
          'GET',
          '/api/v1/company/api-keys',
          { session },
        )
      ).body.data.find((k) => k.id === key.id)?.rateLimitPerMinute;
    assert.equal(await listed(), 3, 'the list does not show the key’s limit');

    const rotate = (body: object) =>
      h.request<{ secret: string; rateLimitPerMinute: number | null }>(
        'POST',
        `/api/v1/company/api-keys/${key.id}/rotate`,
        { session, body },
      );
    const kept = await rotate({});
    assert.equal(kept.status, 200, `rotating answered ${kept.status}: ${kept.text}`);
    assert.equal(kept.body.rateLimitPerMinute, 3, 'a rotation without rateLimitPerMinute changed the limit');
    const changed = await rotate({ rateLimitPerMinute: 5 });
    assert.equal(changed.body.rateLimitPerMinute, 5, 'a rotation with rateLimitPerMinute did not replace it');
    assert.equal(await listed(), 5, 'the list does not show the new limit');

    h.setNow(freshWindow());
    try {
      for (let i = 1; i <= 5; i++) {
        assert.equal(
          (await h.request('GET', HEALTH, { token: changed.body.secret })).status,
          200,
          `request ${i} of the new limit of 5 is refused`,
        );
      }
      assertRefusal(
        await h.request('GET', HEALTH, { token: changed.body.secret }),
        'credential',
        'the 6th request',
      );
    } finally {
      h.setNow(null);
    }
    const reset = await rotate({ rateLimitPerMinute: null });
    assert.equal(
      reset.body.rateLimitPerMinute,
      null,
      'rotating with null does not go back to the global limit',
    );
  });

  test('rateLimitPerMinute out of 1–100,000 or not an integer: 400 validation_failed naming the field, nothing made or changed', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { rateLimitPerMinute: 7 });
    for (const bad of [0, 100_001, -1, 1.5, '10']) {
      const created = await h.request('POST', '/api/v1/company/api-keys', {
        session,
        body: {
          name: 'bad',
          scopes: ['integrations:READER'],
          expiresAt: key.expiresAt,
          rateLimitPerMinute: bad,
        },
      });
      assert.equal(created.status, 400, `create with ${JSON.stringify(bad)} answered ${created.status}`);
      assert.equal(
        created.body.code,
        'validation_failed',
        `create with ${JSON.stringify(bad)}: another code`,
      );
      assert.match(
        created.text,
        /rateLimitPerMinute/,
        `create with ${JSON.stringify(bad)}: the field is not named`,
      );
      const rotated = await h.request('POST', `/api/v1/company/api-keys/${key.id}/rotate`, {
        session,
        body: { rateLimitPerMinute: bad },
      });
      assert.equal(rotated.status, 400, `rotate with ${JSON.stringify(bad)} answered ${rotated.status}`);
      assert.match(
        rotated.text,
        /rateLimitPerMinute/,
        `rotate with ${JSON.stringify(bad)}: the field is not named`,
      );
    }
    const list = await h.request<{
      data: Array<{ id: string; rateLimitPerMinute: number | null; prefix: string }>;
    }>('GET', '/api/v1/company/api-keys', { session });
    assert.deepEqual(
      list.body.data.map((k) => [k.id, k.rateLimitPerMinute, k.prefix]),
      [[key.id, 7, key.prefix]],
      'a refused create made a key, or a refused rotate changed one',
    );
    for (const edge of [1, 100_000]) {
      const ok = await makeKey(h, session, { rateLimitPerMinute: edge });
      assert.equal(ok.rateLimitPerMinute, edge, `the bound ${edge} is refused`);
    }
  });

  test('a key cannot lift its own limit: the key-management routes refuse a tnt_ key with 403', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { rateLimitPerMinute: 3, scopes: ['integrations:ADMIN'] });
    const attempts = [
      ['GET', '/api/v1/company/api-keys', undefined],
      ['POST', `/api/v1/company/api-keys/${key.id}/rotate`, { rateLimitPerMinute: 100_000 }],
      [
        'POST',
        '/api/v1/company/api-keys',
        {
          name: 'mine',
          scopes: ['integrations:ADMIN'],
          expiresAt: key.expiresAt,
          rateLimitPerMinute: 100_000,
        },
      ],
    ] as const;
    for (const [method, path, body] of attempts) {
      const r = await h.request(method, path, { token: key.secret, ...(body ? { body } : {}) });
      assert.equal(r.status, 403, `${method} ${path} with the key itself answered ${r.status}: ${r.text}`);
    }
  });

  test("a tenant's requests per minute count every credential of the tenant together; a request refused by its key's own limit is not counted there", async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const a = await makeKey(h, session);
    const b = await makeKey(h, session);
    const tight = await makeKey(h, session, { rateLimitPerMinute: 1 });
    const { session: neighbour } = await makeSignedInTenant(h);
    const elsewhere = await makeKey(h, neighbour);
    tenantLimits.set(tenant.id, 5);
    h.setNow(freshWindow());
    try {
      assert.equal((await h.request('GET', HEALTH, { token: tight.secret })).status, 200, 'tight: its 1st');
      // Refused by its own limit: counted on its bucket, not the tenant's.
      assertRefusal(await h.request('GET', HEALTH, { token: tight.secret }), 'credential', 'tight: its 2nd');
      assertRefusal(await h.request('GET', HEALTH, { token: tight.secret }), 'credential', 'tight: its 3rd');
      for (let i = 2; i <= 5; i++) {
        const r = await h.request('GET', HEALTH, { token: (i % 2 ? a : b).secret });
        assert.equal(r.status, 200, `the tenant's request ${i} of 5 is refused`);
        assert.match(
          r.headers.get('ratelimit-policy') ?? '',
          /"credential";q=600;w=60, "tenant";q=5;w=60/,
          `request ${i}: RateLimit-Policy does not list the credential's and the tenant's`,
        );
        assert.match(
          r.headers.get('ratelimit') ?? '',
          new RegExp(`"tenant";r=${5 - i};t=40`),
          `request ${i}: RateLimit does not count the tenant's down`,
        );
        assert.equal(
          r.headers.get('ratelimit-remaining'),
          String(5 - i),
          `request ${i}: RateLimit-Remaining is not the tighter of the two`,
        );
      }
      const over = await h.request('GET', HEALTH, { token: b.secret });
      assertRefusal(over, 'tenant', "the tenant's 6th request");
      assert.match(
        over.body.detail,
        /tenant's requests per minute/,
        'the refusal does not say it is the tenant’s',
      );
      assertRefusal(await h.request('GET', HEALTH, { token: a.secret }), 'tenant', 'the other key');
      assertRefusal(
        await h.request('GET', '/api/v1/company/api-keys', { session }),
        'tenant',
        "the tenant's signed-in session",
      );
      assert.equal(
        (await h.request('GET', HEALTH, { token: elsewhere.secret })).status,
        200,
        "another tenant's key is refused",
      );
    } finally {
      tenantLimits.delete(tenant.id);
      h.setNow(null);
    }
  });
});

describe('every 429 carries Retry-After, RateLimit-Policy and RateLimit', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test('a sign-in lockout', async () => {
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id);
    let last: TestResponse | undefined;
    for (let i = 0; i < 11; i++) {
      last = await h.request('POST', '/api/v1/auth/login', {
        body: { email: user.email, password: 'not the password at all' },
      });
    }
    assert.ok(last, 'no attempt was made');
    assertRefusal(last, 'sign-in', 'the 11th failed sign-in');
    assert.equal(
      last.headers.get('ratelimit-policy'),
      '"sign-in";q=10;w=900',
      'the lockout does not announce ten failures in 15 minutes',
    );
    assert.equal(last.headers.get('ratelimit-remaining'), '0', 'the older RateLimit-Remaining is not 0');
  });
});

// The limits hold across processes: two apps on one PostgreSQL database, each with its own pool and
// limiter, hammered at once (test/scale/multi-process.test.ts does the same with `serve` processes).
if (ENGINE === 'postgres') {
  describe('per-key and tenant limits across two processes', () => {
    const LIMIT = 200;
    let first: Harness;
    let second: Harness;
    before(async () => {
      first = await startHarness({ tenantRequestLimit });
      const another = await first.testDatabase.openAnother();
      second = await startHarness({
        tenantRequestLimit,
        testDatabase: { ...first.testDatabase, database: another, drop: async () => {} },
        keyring: first.keyring,
      });
    });
    after(async () => {
      await second.close();
      await first.close();
    });

    /** `clients` loops per app sending `perClient` requests each, at once; how many were admitted. */
    async function hammer(tokens: [string, string], clients: number, perClient: number) {
      const statuses: number[] = [];
      const loop = async (h: Harness, token: string) => {
        for (let i = 0; i < perClient; i++) statuses.push((await h.request('GET', HEALTH, { token })).status);
      };
      await Promise.all(
        Array.from({ length: clients }, (_, i) => (i % 2 ? loop(second, tokens[1]) : loop(first, tokens[0]))),
      );
      assert.deepEqual(
        statuses.filter((s) => s !== 200 && s !== 429),
        [],
        'every answer is 200 or 429',
      );
      return statuses.filter((s) => s === 200).length;
    }

    test(`one key with a limit of ${LIMIT}, hammered through both: together they admit it within 10 %`, async (t) => {
      const { session } = await makeSignedInTenant(first);
      const key = await makeKey(first, session, { rateLimitPerMinute: LIMIT });
      const at = freshWindow();
      first.setNow(at);
      second.setNow(at);
      try {
        const admitted = await hammer([key.secret, key.secret], 8, 40);
        t.diagnostic(`${admitted} of 320 admitted, limit ${LIMIT}`);
        assert.ok(
          admitted >= LIMIT * 0.9 && admitted <= LIMIT * 1.1,
          `${admitted} admitted is not within 10 % of ${LIMIT}`,
        );
      } finally {
        first.setNow(null);
        second.setNow(null);
      }
    });

    test(`a tenant's bucket of ${LIMIT}, two keys hammered one through each: together within 10 %`, async (t) => {
      const { tenant, session } = await makeSignedInTenant(first);
      const a = await makeKey(first, session);
      const b = await makeKey(first, session);
      tenantLimits.set(tenant.id, LIMIT);
      const at = freshWindow();
      first.setNow(at);
      second.setNow(at);
      try {
        const admitted = await hammer([a.secret, b.secret], 8, 40);
        t.diagnostic(`${admitted} of 320 admitted, tenant limit ${LIMIT}`);
        assert.ok(
          admitted >= LIMIT * 0.9 && admitted <= LIMIT * 1.1,
          `${admitted} admitted is not within 10 % of ${LIMIT}`,
        );
      } finally {
        tenantLimits.delete(tenant.id);
        first.setNow(null);
        second.setNow(null);
      }
    });
  });
}
