import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MODULE_KEYS } from '../../src/access/catalog.js';
import { isWellFormedToken } from '../../src/crypto/api-tokens.js';
import { randomBase62 } from '../../src/crypto/base62.js';
import { issueSetupToken } from '../../src/setup/setup.js';
import { assertNoLeak } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';

const PUBLIC_URL = 'https://hub.example.com';
const SETUP = '/api/v1/setup';
const HOUR = 60 * 60 * 1000;
// A proxy in front (TRUST_PROXY=1) lets each test be a client address of its own: the throttle
// counts wrong tokens per address, and one test's guesses must not lock the next one out.
const ENV = { PUBLIC_URL, TRUST_PROXY: '1' };

let nextAddress = 1;
const newAddress = () => `198.51.100.${nextAddress++}`;

const issue = async (h: Harness, at = new Date()) => {
  const issued = await issueSetupToken(h.database.kysely, h.keyring, at);
  assert.ok(issued, 'a token is issued while no user exists');
  return issued.token;
};

const validBody = (token: string) => ({
  token,
  organizationName: `Acme ${randomBase62(4)}`,
  email: `admin-${randomBase62(8).toLowerCase()}@example.com`,
  password: `pw ${randomBase62(20)}`,
});

const postSetup = (h: Harness, body: unknown, address: string, headers: Record<string, string> = {}) =>
  h.request('POST', SETUP, { body, headers: { 'x-forwarded-for': address, ...headers } });

const required = async (h: Harness): Promise<boolean> => {
  const r = await h.request('GET', SETUP);
  assert.equal(r.status, 200, r.text);
  return r.body.required;
};

const sessionOf = (response: TestResponse): TestSession => ({
  cookie: response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; '),
  csrfToken: response.body.csrfToken,
});

function assertProblem(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, code, response.text);
  assert.equal(response.headers.getSetCookie().length, 0, 'a refused setup sets no cookie');
}

const counts = async (h: Harness) => ({
  tenants: (await h.database.kysely.selectFrom('tenants').select('id').execute()).length,
  users: (await h.database.kysely.selectFrom('users').select('id').execute()).length,
});

describe('first-run setup, from an attacker’s side, before it is done', () => {
  let h: Harness;
  let token: string;
  before(async () => {
    h = await startHarness({ env: ENV });
    token = await issue(h);
  });
  after(() => h.close());

  test('the setup check takes no query parameter (a token there is refused, never read)', async () => {
    const r = await h.request('GET', `${SETUP}?token=${token}`);
    assertProblem(r, 400, 'validation_failed');
    assert.ok(!r.text.includes(token), 'the refusal of a token in the query string echoes the token');
  });

  test('a fresh hub (a platform key, no user) says setup is required, without a credential', async () => {
    assert.equal(await required(h), true, 'a fresh hub does not say setup is required');
  });

  test('no token, a wrong token and a malformed token are 401 invalid_credentials, alike', async () => {
    const address = newAddress();
    const answers = [];
    for (const guess of ['', randomBase62(32), 'x', `${token.slice(0, 31)}!`, token.toLowerCase()]) {
      if (guess === token) continue;
      const r = await postSetup(h, { ...validBody(guess) }, address);
      assertProblem(r, 401, 'invalid_credentials');
      const { requestId: _, ...rest } = r.body;
      answers.push(JSON.stringify(rest));
    }
    assert.equal(new Set(answers).size, 1, 'the same answer whatever was wrong');
    assert.deepEqual(
      await counts(h),
      { tenants: 0, users: 0 },
      'a refused setup token still created a tenant or user',
    );
    assert.equal(await required(h), true, 'setup is no longer required after only refused tokens');
  });

  test('an expired token is 401; a token is valid for 24 hours', async () => {
    const address = newAddress();
    const issuedAt = new Date();
    const old = await issue(h, issuedAt);
    h.setNow(new Date(issuedAt.getTime() + 24 * HOUR + 1000));
    try {
      assertProblem(await postSetup(h, validBody(old), address), 401, 'invalid_credentials');
    } finally {
      h.setNow(null);
    }
    const row = await h.database.kysely
      .selectFrom('setup_tokens')
      .select(['created_at', 'expires_at'])
      .where('created_at', '=', issuedAt)
      .executeTakeFirstOrThrow();
    assert.equal(
      new Date(row.expires_at).getTime() - new Date(row.created_at).getTime(),
      24 * HOUR,
      'a setup token is not valid for exactly 24 hours',
    );
  });

  test('only a keyed hash of each token is stored', async () => {
    const rows = await h.database.kysely.selectFrom('setup_tokens').selectAll().execute();
    assert.ok(rows.length >= 2, 'the setup tokens issued are not stored');
    assert.ok(!JSON.stringify(rows).includes(token), 'a setup token is stored in clear');
    for (const row of rows)
      assert.match(row.token_hash, /^[0-9a-f]{64}$/, 'a stored setup token hash is not a hex SHA-256 digest');
  });

  test('ten wrong tokens from one address, then 429 with Retry-After, even with the right token', async () => {
    const address = newAddress();
    for (let i = 0; i < 10; i++) {
      assertProblem(await postSetup(h, validBody(randomBase62(32)), address), 401, 'invalid_credentials');
    }
    const locked = await postSetup(h, validBody(token), address);
    assertProblem(locked, 429, 'rate_limited');
    const retryAfter = Number(locked.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, String(retryAfter));
    // Another address is not locked (a wrong token there is still checked: 401, not 429).
    assertProblem(await postSetup(h, validBody(randomBase62(32)), newAddress()), 401, 'invalid_credentials');
    // The refusals made nothing and used nothing up.
    assert.deepEqual(
      await counts(h),
      { tenants: 0, users: 0 },
      'a refused or throttled setup still created a tenant or user',
    );
    assert.equal(await required(h), true, 'setup is no longer required after refused and throttled attempts');
  });

  test('the ten are counted under concurrency too: twenty at once from one address, ten checked', async () => {
    const address = newAddress();
    const statuses = await Promise.all(
      Array.from(
        { length: 20 },
        async () => (await postSetup(h, validBody(randomBase62(32)), address)).status,
      ),
    );
    assert.equal(statuses.filter((s) => s === 401).length, 10, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 10, statuses.join(','));
  });

  test('sign-in failures and setup failures do not count against each other', async () => {
    const address = newAddress();
    // An attacker who names the setup throttle as an e-mail address locks nothing.
    for (let i = 0; i < 10; i++) {
      const r = await h.request('POST', '/api/v1/auth/login', {
        body: { email: `setup:ip:${address}`, password: 'x' },
        headers: { 'x-forwarded-for': address },
      });
      assert.equal(r.status, 401, r.text);
    }
    assertProblem(await postSetup(h, validBody(randomBase62(32)), address), 401, 'invalid_credentials');
  });

  test('invalid fields are 400 validation_failed naming the field, before any token is checked', async () => {
    const address = newAddress();
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['NUL in organizationName', { organizationName: 'Acme\u0000Corp' }, 'organizationName'],
      ['lone surrogate in organizationName', { organizationName: 'Acme \ud800' }, 'organizationName'],
      ['password of 11 characters', { password: 'a'.repeat(11) }, 'password'],
      ['password of 201 characters', { password: 'a'.repeat(201) }, 'password'],
      ['empty organizationName', { organizationName: '' }, 'organizationName'],
      ['a blank organizationName', { organizationName: '   ' }, 'organizationName'],
      ['organizationName of 201 characters', { organizationName: 'a'.repeat(201) }, 'organizationName'],
      ['not an e-mail address', { email: 'not-an-address' }, 'email'],
      ['e-mail over 254 characters', { email: `${'a'.repeat(250)}@example.com` }, 'email'],
      ['an unknown field', { role: 'MEMBER' }, ''],
      ['a token that is not a string', { token: 12345 }, 'token'],
    ];
    for (const [what, change, field] of cases) {
      const r = await postSetup(h, { ...validBody(token), ...change }, address);
      assertProblem(r, 400, 'validation_failed');
      if (field)
        assert.ok(JSON.stringify(r.body.errors ?? r.body.detail).includes(field), `${what}: ${r.text}`);
    }
    // A missing token is a missing field: 400, like any other.
    const { token: _, ...withoutToken } = validBody(token);
    assertProblem(await postSetup(h, withoutToken, address), 400, 'validation_failed');
    assertProblem(
      await h.request('POST', SETUP, {
        rawBody: '{"token":',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_json',
    );
    // None of these counted as a guess: the address can still make ten.
    for (let i = 0; i < 10; i++) {
      assertProblem(await postSetup(h, validBody(randomBase62(32)), address), 401, 'invalid_credentials');
    }
    assertProblem(await postSetup(h, validBody(randomBase62(32)), address), 429, 'rate_limited');
  });

  test('a setup posted from another site is 403 csrf_failed, whatever the token', async () => {
    for (const origin of ['https://evil.example', 'http://hub.example.com', 'null']) {
      const r = await postSetup(h, validBody(token), newAddress(), { origin });
      assertProblem(r, 403, 'csrf_failed');
    }
    assert.equal(await required(h), true, 'setup is no longer required after a cross-site attempt');
  });

  test('the answer to a refusal never carries the token or the password', () => {
    assertNoLeak(h, [token]);
  });

  describe('then the right token, after all those refusals', () => {
    let body: ReturnType<typeof validBody>;
    let done: TestResponse;
    let session: TestSession;
    const address = newAddress();

    before(async () => {
      // A wrong token first, from the very address that then sends the right one.
      assertProblem(await postSetup(h, validBody(randomBase62(32)), address), 401, 'invalid_credentials');
      body = { ...validBody(token), email: `Admin-${randomBase62(6)}@Example.com` };
      done = await postSetup(h, body, address, { origin: PUBLIC_URL });
      assert.equal(done.status, 201, done.text);
      session = sessionOf(done);
    });

    test('201 with the sign-in answer and the platform key, shown once, never cached', () => {
      assert.deepEqual(
        Object.keys(done.body).sort(),
        ['authMethod', 'csrfToken', 'expiresAt', 'platformKey', 'tenant', 'user'],
        'the setup answer has missing or extra fields',
      );
      const { user, tenant, platformKey } = done.body;
      assert.match(user.id, /^usr_[0-9A-Za-z]{22}$/, 'the new user ID is not a usr_ ID');
      assert.deepEqual(
        user,
        {
          id: user.id,
          email: body.email.toLowerCase(),
          role: 'PLATFORM_ADMIN',
          tenantId: tenant.id,
        },
        'the new user is not the platform administrator with the lower-cased email',
      );
      assert.match(tenant.id, /^ten_[0-9A-Za-z]{22}$/, 'the new tenant ID is not a ten_ ID');
      assert.deepEqual(
        tenant,
        {
          id: tenant.id,
          name: body.organizationName,
          entitlements: [...MODULE_KEYS].sort(),
        },
        'the new tenant lacks the organisation name or some module',
      );
      assert.equal(
        done.body.authMethod,
        'password',
        'the setup answer does not say the session came from a password',
      );
      assert.match(
        done.body.csrfToken,
        /^[0-9A-Za-z]{22}\.[0-9a-f]{64}$/,
        "the setup answer's CSRF token is malformed",
      );
      const expiresIn = Date.parse(done.body.expiresAt) - Date.now();
      assert.ok(expiresIn > 11.9 * HOUR && expiresIn <= 12 * HOUR, done.body.expiresAt);
      assert.deepEqual(
        Object.keys(platformKey).sort(),
        ['expiresAt', 'id', 'prefix', 'secret'],
        'the platform key in the answer has missing or extra fields',
      );
      assert.match(platformKey.id, /^pkey_[0-9A-Za-z]{22}$/, 'the platform key ID is not a pkey_ ID');
      assert.ok(
        isWellFormedToken('plt_', platformKey.secret),
        'the platform key secret is not a well-formed plt_ token',
      );
      assert.equal(
        platformKey.prefix,
        platformKey.secret.slice(0, 12),
        "the platform key's shown prefix is not the start of its secret",
      );
      assert.equal(platformKey.expiresAt, null, 'the setup platform key expires');
      assert.equal(
        done.headers.get('cache-control'),
        'no-store',
        'the answer carrying the platform key secret may be cached',
      );
    });

    test('the cookies are those of a password sign-in, and the session works', async () => {
      const cookies = done.headers.getSetCookie();
      const access = cookies.find((c) => c.startsWith('svc_access='));
      const csrf = cookies.find((c) => c.startsWith('__Host-svc_csrf='));
      assert.ok(access && csrf, cookies.join(' | '));
      for (const attribute of [/; HttpOnly/, /; Secure/, /; SameSite=Lax/, /; Path=\//])
        assert.match(access, attribute, `the access cookie lacks ${attribute}`);
      for (const attribute of [/; Secure/, /; SameSite=Strict/, /; Path=\//])
        assert.match(csrf, attribute, `the CSRF cookie lacks ${attribute}`);
      assert.doesNotMatch(csrf, /HttpOnly/, 'the CSRF cookie is HttpOnly, so the UI cannot read it');
      assert.equal(
        csrf.split(';')[0],
        `__Host-svc_csrf=${done.body.csrfToken}`,
        'the CSRF cookie does not hold the CSRF token of the answer',
      );

      const current = await h.request('GET', '/api/v1/auth/session', { session });
      assert.equal(current.status, 200, current.text);
      assert.deepEqual(
        current.body.user,
        done.body.user,
        'the session shows another user than the setup answer',
      );
      assert.deepEqual(
        current.body.tenant,
        done.body.tenant,
        'the session shows another tenant than the setup answer',
      );
      assert.equal(current.body.authMethod, 'password', 'the session does not say it came from a password');
      // An unsafe request with the CSRF token of the answer passes the gate.
      const key = await h.request('POST', '/api/v1/company/api-keys', {
        session,
        body: {
          name: 'after setup',
          scopes: ['integration_hub:ADMIN'],
          expiresAt: new Date(Date.now() + 24 * HOUR).toISOString(),
        },
      });
      assert.equal(key.status, 201, key.text);
    });

    test('the administrator can sign in with the password chosen', async () => {
      const r = await h.request('POST', '/api/v1/auth/login', {
        body: { email: body.email, password: body.password },
      });
      assert.equal(r.status, 200, r.text);
      assert.equal(
        r.body.user.role,
        'PLATFORM_ADMIN',
        'the administrator signs in with another role than platform administrator',
      );
    });

    test('the platform key is named setup and opens the platform routes', async () => {
      const monitoring = await h.request('GET', '/api/v1/platform/monitoring', {
        token: done.body.platformKey.secret,
      });
      assert.equal(monitoring.status, 200, monitoring.text);
      const tenantRead = await h.request('GET', `/api/v1/platform/tenants/${done.body.tenant.id}`, {
        token: done.body.platformKey.secret,
      });
      assert.equal(tenantRead.status, 200, tenantRead.text);
      assert.deepEqual(
        tenantRead.body.entitlements,
        [...MODULE_KEYS].sort(),
        'the new tenant read through the platform key lacks some module',
      );
      const row = await h.database.kysely
        .selectFrom('platform_keys')
        .selectAll()
        .where('id', '=', done.body.platformKey.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.name, 'setup', 'the setup platform key is not named setup');
      assert.equal(row.expires_at, null, 'the stored setup platform key has an expiry');
      assert.ok(!JSON.stringify(row).includes(done.body.platformKey.secret), 'only a hash is stored');
    });

    test('setup.complete is in the tenant’s own audit log, by the new user, with no secret', async () => {
      const log = await h.request('GET', '/api/v1/company/audit-log?limit=100', { session });
      assert.equal(log.status, 200, log.text);
      const entry = log.body.data.find((e: { action: string }) => e.action === 'setup.complete');
      assert.ok(entry, JSON.stringify(log.body.data.map((e: { action: string }) => e.action)));
      assert.equal(entry.actorType, 'user', 'setup.complete is not by a user');
      assert.equal(entry.actorId, done.body.user.id, 'setup.complete is not by the new administrator');
      assert.equal(entry.targetType, 'tenant', 'setup.complete does not name a tenant as its target');
      assert.equal(
        entry.targetId,
        done.body.tenant.id,
        'setup.complete names another tenant than the new one',
      );
      assert.equal(
        entry.requestId,
        done.headers.get('x-request-id'),
        'setup.complete carries another request ID than the setup answer',
      );
      assert.equal(
        entry.ip,
        address,
        'setup.complete records another client address than the one that set up',
      );
      assert.deepEqual(
        entry.metadata,
        {
          organizationName: body.organizationName,
          email: body.email.toLowerCase(),
          entitlements: [...MODULE_KEYS].sort(),
          platformKeyId: done.body.platformKey.id,
          platformKeyPrefix: done.body.platformKey.prefix,
        },
        'setup.complete metadata is wrong or carries a secret',
      );
      const actions = log.body.data.map((e: { action: string }) => e.action);
      for (const action of ['tenant.create', 'user.create']) assert.ok(actions.includes(action), action);
      // The platform key's own row is a platform one, written in the same transaction.
      const keyRow = await h.database.kysely
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'platform_key.create')
        .where('target_id', '=', done.body.platformKey.id)
        .executeTakeFirstOrThrow();
      assert.equal(keyRow.tenant_id, null, "the platform key's audit row is filed under a tenant");
      assert.equal(
        keyRow.actor_id,
        done.body.user.id,
        "the platform key's audit row is not by the new administrator",
      );
      assert.equal(
        new Date(keyRow.created_at).getTime(),
        Date.parse(entry.createdAt),
        "the platform key's audit row is not written in the same transaction as setup.complete",
      );
      const everything = JSON.stringify(
        await h.database.kysely.selectFrom('audit_log').selectAll().execute(),
      );
      for (const secret of [token, body.password, done.body.platformKey.secret]) {
        assert.ok(!everything.includes(secret), 'no secret in any audit row');
      }
    });

    test('setup is no longer required, and no token is kept or made any more', async () => {
      assert.equal(await required(h), false, 'setup is still required after it was done');
      assert.deepEqual(
        await h.database.kysely.selectFrom('setup_tokens').selectAll().execute(),
        [],
        'a setup token is kept after setup',
      );
      assert.equal(
        await issueSetupToken(h.database.kysely, h.keyring, new Date()),
        null,
        'a setup token is still issued after setup',
      );
    });

    test('setup after setup is 409 conflict, checked first: whatever the token or the body', async () => {
      const address = newAddress();
      const attempts: unknown[] = [
        validBody(token),
        validBody('garbage'),
        validBody(randomBase62(32)),
        { ...validBody(''), password: 'short' },
        { organizationName: 'no token at all' },
        { ...validBody(token), extra: true },
      ];
      for (const attempt of attempts) assertProblem(await postSetup(h, attempt, address), 409, 'conflict');
      // More than ten of them lock nothing: they are not guesses.
      for (let i = 0; i < 5; i++) {
        assertProblem(await postSetup(h, validBody(randomBase62(32)), address), 409, 'conflict');
      }
      assert.deepEqual(
        await counts(h),
        { tenants: 1, users: 1 },
        'a setup after setup created another tenant or user',
      );
    });

    test('the setup token and the password never appear in a log or a response; the key secret in one response', () => {
      assertNoLeak(h, [token, body.password], [done.body.platformKey.secret]);
    });
  });
});

describe('concurrent setups', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test('two at once with two valid tokens: exactly one 201 and one 409', async () => {
    const [first, second] = [await issue(h), await issue(h)];
    const answers = await Promise.all([
      postSetup(h, validBody(first), newAddress()),
      postSetup(h, validBody(second), newAddress()),
    ]);
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 409], answers.map((r) => r.text).join('\n'));
    assertProblem(
      answers.find((r) => r.status === 409)!,
      409,
      'conflict',
    );
    assert.deepEqual(
      await counts(h),
      { tenants: 1, users: 1 },
      'two concurrent setups made more or less than one tenant and one user',
    );
    const keys = await h.database.kysely
      .selectFrom('platform_keys')
      .select('name')
      .where('name', '=', 'setup')
      .execute();
    assert.equal(keys.length, 1, 'two concurrent setups made more or less than one setup platform key');
  });
});

describe('concurrent setups, many at once with one token', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test('eight at once: one 201, the rest 409, one tenant, one user, one setup key', async () => {
    const token = await issue(h);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => postSetup(h, validBody(token), newAddress())),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, 1, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 409).length, 7, statuses.join(','));
    assert.deepEqual(
      await counts(h),
      { tenants: 1, users: 1 },
      'eight concurrent setups made more or less than one tenant and one user',
    );
  });
});

// Two processes on one PostgreSQL database: the lock holds between them, not only within one pool.
if (ENGINE === 'postgres') {
  describe('concurrent setups across processes', () => {
    let first: Harness;
    let second: Harness;
    before(async () => {
      first = await startHarness({ env: ENV });
      const another = await first.testDatabase.openAnother();
      second = await startHarness({
        env: ENV,
        testDatabase: { ...first.testDatabase, database: another, drop: () => another.close() },
        keyring: first.keyring,
      });
    });
    after(async () => {
      await second.close();
      await first.close();
    });

    test('one setup through each process at once: exactly one 201 and one 409', async () => {
      const [a, b] = [await issue(first), await issue(second)];
      const answers = await Promise.all([
        postSetup(first, validBody(a), newAddress()),
        postSetup(second, validBody(b), newAddress()),
      ]);
      assert.deepEqual(
        answers.map((r) => r.status).sort(),
        [201, 409],
        answers.map((r) => r.text).join('\n'),
      );
      assert.deepEqual(
        await counts(first),
        { tenants: 1, users: 1 },
        'setups in two processes made more or less than one tenant and one user',
      );
    });
  });
}
