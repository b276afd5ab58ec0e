import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  assertNoLeak,
  makeKey,
  makeSignedInTenant,
  makeTenant,
  makeUser,
  signIn,
} from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness({ env: { PUBLIC_URL: 'https://hub.example.com' } });
});
after(() => h.close());

const HOUR = 60 * 60 * 1000;
const auditActions = async (tenantId: string) =>
  (
    await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .orderBy('created_at')
      .execute()
  ).map((r) => r.action);

describe('password sign-in', () => {
  test('sets svc_access and the CSRF cookie exactly as docs/api/authentication.md says, and answers the user and a CSRF token', async () => {
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id, { role: 'EXECUTIVE' });
    const response = await h.request('POST', '/api/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    assert.equal(response.status, 200, 'signing in with the right password fails');
    assert.deepEqual(
      response.body.user,
      {
        id: user.id,
        email: user.email,
        role: 'EXECUTIVE',
        tenantId: tenant.id,
      },
      'the sign-in answer shows another user than the one signed in',
    );
    assert.match(
      response.body.csrfToken,
      /^[0-9A-Za-z]{22}\.[0-9a-f]{64}$/,
      'the CSRF token in the sign-in answer is not in its signed format',
    );
    // The rest of the sign-in answer: the tenant as the session route shows it, when it ends, how.
    assert.deepEqual(
      response.body.tenant,
      {
        id: tenant.id,
        name: tenant.name,
        entitlements: tenant.entitlements,
      },
      'the sign-in answer shows the tenant other than the session route does',
    );
    assert.equal(
      response.body.authMethod,
      'password',
      'the sign-in answer does not say the method was a password',
    );
    const expiresIn = Date.parse(response.body.expiresAt) - Date.now();
    assert.ok(expiresIn > 11.9 * 3600_000 && expiresIn <= 12 * 3600_000, response.body.expiresAt);
    const cookies = response.headers.getSetCookie();
    const access = cookies.find((c) => c.startsWith('svc_access='));
    const csrf = cookies.find((c) => c.startsWith('__Host-svc_csrf='));
    assert.ok(access && csrf, cookies.join(' | '));
    assert.match(access, /; HttpOnly/, 'the session cookie is readable by scripts (no HttpOnly)');
    assert.match(access, /; Secure/, 'the session cookie may travel over plain HTTP (no Secure)');
    assert.match(access, /; SameSite=Lax/, 'the session cookie is not SameSite=Lax');
    assert.match(access, /; Path=\//, 'the session cookie does not cover the whole site');
    assert.match(csrf, /; Secure/, 'the CSRF cookie may travel over plain HTTP (no Secure)');
    assert.match(csrf, /; SameSite=Strict/, 'the CSRF cookie is not SameSite=Strict');
    assert.match(csrf, /; Path=\//, 'the CSRF cookie does not cover the whole site');
    assert.doesNotMatch(csrf, /HttpOnly/, "the CSRF cookie is unreadable by the page's scripts (HttpOnly)");
    assert.doesNotMatch(csrf, /Domain=/, 'the __Host- CSRF cookie names a Domain, which browsers reject');
    assert.equal(
      csrf.split(';')[0],
      `__Host-svc_csrf=${response.body.csrfToken}`,
      'the CSRF cookie carries another token than the sign-in answer',
    );
    assert.equal(response.headers.get('cache-control'), 'no-store', 'the sign-in answer may be cached');

    const token = access.split(';')[0]?.split('=')[1] ?? '';
    const row = await h.database.kysely
      .selectFrom('sessions')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(token), 'only a hash of the session token is stored');
    assert.ok(
      (await auditActions(tenant.id)).includes('sign_in.success'),
      'a successful sign-in is not in the audit log',
    );
    assertNoLeak(h, [user.password]);
  });

  test('an unknown e-mail and a wrong password get the same 401 invalid_credentials; both are audited', async () => {
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id);
    const wrong = await h.request('POST', '/api/v1/auth/login', {
      body: { email: user.email, password: 'not the password' },
    });
    const unknown = await h.request('POST', '/api/v1/auth/login', {
      body: { email: 'nobody@example.com', password: 'not the password' },
    });
    for (const response of [wrong, unknown]) {
      assert.equal(response.status, 401, 'a failed sign-in is not answered 401');
      assert.equal(
        response.body.code,
        'invalid_credentials',
        'a failed sign-in is refused with another code than invalid_credentials',
      );
      assert.equal(response.headers.getSetCookie().length, 0, 'a failed sign-in sets a cookie');
    }
    const { requestId: _a, ...wrongBody } = wrong.body;
    const { requestId: _b, ...unknownBody } = unknown.body;
    assert.deepEqual(
      wrongBody,
      unknownBody,
      'a wrong password and an unknown e-mail are answered differently, revealing which accounts exist',
    );
    assert.ok(
      (await auditActions(tenant.id)).includes('sign_in.failure'),
      "a wrong password is not in the tenant's audit log",
    );
    const anonymous = await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'sign_in.failure')
      .where('tenant_id', 'is', null)
      .execute();
    assert.ok(
      anonymous.some((r) => (r.metadata as { email?: string }).email === 'nobody@example.com'),
      'a sign-in for an unknown e-mail is not in the audit log',
    );
    assertNoLeak(h, ['not the password']);
  });

  test('ten failures within 15 minutes lock the account (429 with Retry-After), even for the right password', async () => {
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id);
    for (let i = 0; i < 10; i++) {
      const r = await h.request('POST', '/api/v1/auth/login', {
        body: { email: user.email, password: `wrong ${i}` },
      });
      assert.equal(r.status, 401, `wrong password ${i} is not answered 401`);
    }
    const locked = await h.request('POST', '/api/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    assert.equal(locked.status, 429, 'the right password gets in while the account is locked');
    assert.equal(
      locked.body.code,
      'rate_limited',
      'a locked account is refused with another code than rate_limited',
    );
    assert.ok(Number(locked.headers.get('retry-after')) > 0, 'a locked account is not told when to retry');
    // Another account is not affected; after the window the account opens again.
    const other = await makeUser(h, tenant.id);
    assert.equal(
      (
        await h.request('POST', '/api/v1/auth/login', {
          body: { email: other.email, password: other.password },
        })
      ).status,
      200,
      'another account of the tenant is locked too',
    );
    h.setNow(new Date(Date.now() + 16 * 60 * 1000));
    try {
      const again = await h.request('POST', '/api/v1/auth/login', {
        body: { email: user.email, password: user.password },
      });
      assert.equal(again.status, 200, 'the account stays locked after the 15-minute window');
    } finally {
      h.setNow(null);
    }
  });

  test('an unknown address is locked the same way, so the lock reveals nothing', async () => {
    for (let i = 0; i < 10; i++) {
      await h.request('POST', '/api/v1/auth/login', { body: { email: 'ghost@example.com', password: 'x' } });
    }
    const r = await h.request('POST', '/api/v1/auth/login', {
      body: { email: 'Ghost@Example.com', password: 'x' },
    });
    assert.equal(r.status, 429, 'an unknown address (in another case) is not locked after ten failures');
  });

  test('bad sign-in bodies are 400; a sign-in posted from another origin is 403 csrf_failed', async () => {
    for (const body of [
      {},
      { email: 'a@b.co' },
      { email: 'a@b.co', password: 'x', remember: true },
      { email: 1, password: 'x' },
    ]) {
      const r = await h.request('POST', '/api/v1/auth/login', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(
        r.body.code,
        'validation_failed',
        `a bad sign-in body is refused with another code than validation_failed: ${JSON.stringify(body)}`,
      );
    }
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id);
    const foreign = await h.request('POST', '/api/v1/auth/login', {
      body: { email: user.email, password: user.password },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(foreign.status, 403, 'a sign-in posted from another origin is not refused with 403');
    assert.equal(
      foreign.body.code,
      'csrf_failed',
      'a sign-in posted from another origin is refused with another code than csrf_failed',
    );
    const own = await h.request('POST', '/api/v1/auth/login', {
      body: { email: user.email, password: user.password },
      headers: { origin: 'https://hub.example.com' },
    });
    assert.equal(own.status, 200, "a sign-in posted from the app's own origin is refused");
  });
});

describe('the session', () => {
  test('GET /auth/session answers the user, the tenant with its entitlements, a CSRF token and the method', async () => {
    const { tenant, user, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const r = await h.request('GET', '/api/v1/auth/session', { session });
    assert.equal(r.status, 200, 'reading the session fails');
    assert.equal(r.body.user.id, user.id, 'the session shows another user');
    assert.deepEqual(
      r.body.tenant,
      {
        id: tenant.id,
        name: r.body.tenant.name,
        entitlements: ['integrations'],
      },
      'the session shows the tenant or its entitlements wrong',
    );
    assert.equal(r.body.authMethod, 'password', 'the session does not say the method was a password');
    assert.match(r.body.csrfToken, /\./, 'the session answer has no CSRF token');
    // The new token is as good as the first.
    const created = await h.request('POST', '/api/v1/company/api-keys', {
      session: { ...session, csrfToken: r.body.csrfToken },
      body: {
        name: 'k',
        scopes: ['integrations:READER'],
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    assert.equal(created.status, 201, 'the CSRF token from the session route is refused');
  });

  test('unsafe methods need the session’s X-CSRF-Token: missing, wrong, or another session’s is 403 csrf_failed', async () => {
    const flipLast = (token: string) => `${token.slice(0, -1)}${token.endsWith('0') ? '1' : '0'}`;
    const a = await makeSignedInTenant(h);
    const b = await makeSignedInTenant(h);
    const body = {
      name: 'k',
      scopes: ['integrations:READER'],
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    };
    const variants: Array<[string, Record<string, string>]> = [
      ['missing', { cookie: a.session.cookie }],
      // One character changed (to another one: a token ending in 0 stays wrong).
      ['wrong', { cookie: a.session.cookie, 'x-csrf-token': flipLast(a.session.csrfToken) }],
      ['another session', { cookie: a.session.cookie, 'x-csrf-token': b.session.csrfToken }],
      ['garbage', { cookie: a.session.cookie, 'x-csrf-token': 'abc' }],
      [
        'foreign origin',
        { cookie: a.session.cookie, 'x-csrf-token': a.session.csrfToken, origin: 'https://evil.example' },
      ],
    ];
    for (const [label, headers] of variants) {
      const r = await h.request('POST', '/api/v1/company/api-keys', { headers, body });
      assert.equal(r.status, 403, label);
      assert.equal(r.body.code, 'csrf_failed', label);
    }
    const keys = await h.request('GET', '/api/v1/company/api-keys', { session: a.session });
    assert.equal(keys.body.data.length, 0, 'nothing was created');
    // Safe methods need no token.
    assert.equal(
      (await h.request('GET', '/api/v1/auth/session', { headers: { cookie: a.session.cookie } })).status,
      200,
      'a GET with only the session cookie is refused for want of a CSRF token',
    );
  });

  test('logout ends the session at once, server side', async () => {
    const { session } = await makeSignedInTenant(h);
    const out = await h.request('POST', '/api/v1/auth/logout', { session });
    assert.equal(out.status, 204, 'signing out fails');
    assert.ok(
      out.headers.getSetCookie().some((c) => c.startsWith('svc_access=;')),
      'signing out does not clear the session cookie',
    );
    const after = await h.request('GET', '/api/v1/auth/session', { session });
    assert.equal(after.status, 401, 'a signed-out session still works');
    assert.equal(
      after.body.code,
      'unauthenticated',
      'a signed-out session is refused with another code than unauthenticated',
    );
  });

  test('a session expires after 2 h idle', async () => {
    const { session } = await makeSignedInTenant(h);
    const start = Date.now();
    h.setNow(new Date(start + 2 * HOUR - 60_000));
    try {
      assert.equal((await h.request('GET', '/api/v1/auth/session', { session })).status, 200, 'just inside');
      h.setNow(new Date(start + 4 * HOUR));
      assert.equal((await h.request('GET', '/api/v1/auth/session', { session })).status, 401, 'idle for 2 h');
    } finally {
      h.setNow(null);
    }
  });

  test('a session expires 12 h after sign-in however active it is', async () => {
    const { session } = await makeSignedInTenant(h);
    const start = Date.now();
    try {
      for (let hour = 1; hour < 12; hour++) {
        h.setNow(new Date(start + hour * HOUR));
        assert.equal(
          (await h.request('GET', '/api/v1/auth/session', { session })).status,
          200,
          `hour ${hour}`,
        );
      }
      h.setNow(new Date(start + 12 * HOUR + 1000));
      assert.equal(
        (await h.request('GET', '/api/v1/auth/session', { session })).status,
        401,
        'a session still works 12 h after sign-in',
      );
    } finally {
      h.setNow(null);
    }
  });

  test('an unknown or forged session cookie is 401 unauthenticated', async () => {
    for (const cookie of ['svc_access=abc', `svc_access=${'A'.repeat(43)}`, 'svc_access=']) {
      const r = await h.request('GET', '/api/v1/auth/session', { headers: { cookie } });
      assert.equal(r.status, 401, cookie);
      assert.equal(
        r.body.code,
        'unauthenticated',
        `${cookie}: a forged session cookie is refused with another code than unauthenticated`,
      );
    }
    const none = await h.request('GET', '/api/v1/auth/session');
    assert.equal(none.status, 401, 'a request without a session is not refused with 401');
  });

  test('with an Authorization header, cookies are ignored', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    // A valid session cookie does not rescue a bad bearer token ...
    const bad = await h.request('GET', '/api/v1/auth/session', {
      session,
      headers: { authorization: 'Bearer nope' },
    });
    assert.equal(bad.status, 401, 'a valid session cookie rescues a bad bearer token');
    // ... and with a good key the request is the key's, so key management refuses it.
    const asKey = await h.request('GET', '/api/v1/company/api-keys', { session, token: key.secret });
    assert.equal(asKey.status, 403, "a request with a key and a session cookie is treated as the session's");
    assert.equal(
      asKey.body.code,
      'interactive_session_required',
      'a key on key management is refused with another code than interactive_session_required',
    );
    assertNoLeak(h, [], [key.secret]);
  });

  test('a new sign-in makes a new session; signing out of one leaves the other', async () => {
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id);
    const first = await signIn(h, user);
    const second = await signIn(h, user);
    assert.notEqual(first.cookie, second.cookie, 'two sign-ins share one session');
    await h.request('POST', '/api/v1/auth/logout', { session: first });
    assert.equal(
      (await h.request('GET', '/api/v1/auth/session', { session: second })).status,
      200,
      'signing out of one session ends the other too',
    );
  });
});
