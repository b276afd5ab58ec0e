import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { authenticatorsFor, registerPasskey } from '../helpers/authenticator.js';
import {
  assertNoLeak,
  makeKey,
  makeSignedInTenant,
  makeTenant,
  makeUser,
  signIn,
  TEST_PASSWORD,
} from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { assertProblem, auditActions, invite, listed, newEmail, USERS } from './people.js';

const PUBLIC_URL = 'https://hub.example.com';
const DAY = 24 * 60 * 60 * 1000;

let h: Harness;
const tokens: string[] = [];
before(async () => {
  h = await startHarness({ env: { PUBLIC_URL, TRUST_PROXY: '1' } });
});
after(() => h.close());

const { newAuthenticator } = authenticatorsFor(PUBLIC_URL);

/** A tenant with a signed-in person of `role` (COMPANY_IT_ADMIN unless said). */
const tenantWith = (role = 'COMPANY_IT_ADMIN') => makeSignedInTenant(h, { role });

async function inviteAndKeep(session: TestSession, body: { email?: string; role?: string } = {}) {
  const invited = await invite(h, session, body);
  tokens.push(invited.token);
  return invited;
}

describe('listing people', () => {
  test("lists the tenant's people newest first with their fields, and nobody of another tenant", async () => {
    const { tenant, user, session } = await tenantWith();
    await registerPasskey(h, session, newAuthenticator());
    const member = await makeUser(h, tenant.id, { role: 'MEMBER' });
    const invited = await inviteAndKeep(session, { role: 'EXECUTIVE' });
    const other = await makeSignedInTenant(h);

    const r = await h.request('GET', USERS, { session });
    assert.equal(r.status, 200, `listing people answered ${r.status}: ${r.text}`);
    assert.deepEqual(Object.keys(r.body).sort(), ['data', 'nextCursor'], 'the list is not in the list shape');
    assert.deepEqual(
      r.body.data.map((u: { id: string }) => u.id),
      [invited.id, member.id, user.id],
      "the list is not the tenant's three people, newest first",
    );
    const [shownInvited, shownMember, shownAdmin] = r.body.data;
    assert.deepEqual(
      Object.keys(shownAdmin).sort(),
      ['createdAt', 'email', 'id', 'lastSignInAt', 'passkeys', 'passwordSignIn', 'role', 'status'],
      'a person in the list has missing or extra fields',
    );
    assert.deepEqual(
      { ...shownAdmin, createdAt: undefined, lastSignInAt: undefined },
      {
        id: user.id,
        email: user.email,
        role: 'COMPANY_IT_ADMIN',
        status: 'active',
        createdAt: undefined,
        lastSignInAt: undefined,
        passkeys: 1,
        passwordSignIn: true,
      },
      'the signed-in admin is listed wrong',
    );
    assert.ok(
      Date.now() - Date.parse(shownAdmin.lastSignInAt) < 60_000,
      `the admin's last sign-in is not their sign-in of a moment ago: ${shownAdmin.lastSignInAt}`,
    );
    assert.equal(shownMember.lastSignInAt, null, 'a person who never signed in has a last sign-in');
    assert.equal(shownMember.passkeys, 0, 'a person without passkeys is listed with some');
    assert.equal(shownInvited.status, 'invited', 'an invited person is not listed as invited');
    assert.equal(shownInvited.role, 'EXECUTIVE', 'an invited person is listed with another role');
    assert.ok(!r.text.includes(other.user.email), "another tenant's person is in the list");

    const first = await h.request('GET', `${USERS}?limit=2`, { session });
    assert.equal(first.body.data.length, 2, 'a page of 2 does not hold 2 people');
    const second = await h.request(
      'GET',
      `${USERS}?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      {
        session,
      },
    );
    assert.deepEqual(
      [...first.body.data, ...second.body.data].map((u: { id: string }) => u.id),
      [invited.id, member.id, user.id],
      'paging through the list loses, repeats or reorders people',
    );
    assert.equal(second.body.nextCursor, null, 'the last page offers another');
    assertProblem(
      await h.request('GET', `${USERS}?limit=0`, { session }),
      400,
      'validation_failed',
      'limit=0',
    );
    assertProblem(
      await h.request('GET', `${USERS}?cursor=nope`, { session }),
      400,
      'validation_failed',
      'a bad cursor',
    );
  });
});

describe('inviting', () => {
  test('answers 201 with the invited person and a link shown once, kept only as a hash, and audited', async () => {
    const { tenant, session } = await tenantWith('EXECUTIVE');
    const email = newEmail('mixed.case');
    const r = await h.request('POST', USERS, {
      session,
      body: { email: email.toUpperCase(), role: 'COMPANY_IT_ADMIN' },
    });
    assert.equal(r.status, 201, `an EXECUTIVE could not invite: ${r.text}`);
    assert.equal(r.headers.get('cache-control'), 'no-store', 'the answer with the link may be cached');
    const { invitation, ...user } = r.body;
    assert.match(user.id, /^usr_[0-9A-Za-z]{22}$/, 'the invited person has no usr_ ID');
    assert.deepEqual(
      { ...user, createdAt: undefined },
      {
        id: user.id,
        email,
        role: 'COMPANY_IT_ADMIN',
        status: 'invited',
        createdAt: undefined,
        lastSignInAt: null,
        passkeys: 0,
        passwordSignIn: true,
      },
      'the invited person is answered wrong (the e-mail address lower-cased)',
    );
    assert.match(
      invitation.url,
      /^https:\/\/hub\.example\.com\/invite#token=[0-9A-Za-z]{32}$/,
      'the link is not PUBLIC_URL/invite with the token in the fragment',
    );
    const lifetime = Date.parse(invitation.expiresAt) - Date.now();
    assert.ok(
      lifetime > 7 * DAY - 60_000 && lifetime <= 7 * DAY,
      `the link does not last 7 days: ${invitation.expiresAt}`,
    );
    const token = invitation.url.split('#token=')[1] as string;
    tokens.push(token);

    const stored = await h.database.kysely
      .selectFrom('invitations')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    assert.equal(stored.length, 1, 'the invitation is not stored once');
    assert.ok(!JSON.stringify(stored).includes(token), 'the token is stored as it is, not hashed');
    assert.deepEqual(
      (await auditActions(h, tenant.id)).slice(-2).sort(),
      ['user.create', 'user.invite'],
      'inviting is not audited as the creation of a user and an invitation',
    );
    const audit = await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', user.id)
      .execute();
    assert.ok(!JSON.stringify(audit).includes(token), 'the token is in the audit log');
    assert.deepEqual(
      (await listed(h, session, user.id))?.status,
      'invited',
      'the list does not show the invited person',
    );
  });

  test('an address an active user holds, in this tenant or another, or one this tenant invited, is 409 conflict', async () => {
    const { tenant, user, session } = await tenantWith();
    const invited = await inviteAndKeep(session);
    const other = await makeSignedInTenant(h);
    for (const email of [user.email, invited.email, other.user.email, invited.email.toUpperCase()]) {
      assertProblem(
        await h.request('POST', USERS, { session, body: { email, role: 'MEMBER' } }),
        409,
        'conflict',
        `inviting ${email}`,
      );
    }
    const count = await h.database.kysely
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .execute();
    assert.equal(count.length, 2, 'a refused invitation made a user');
  });

  test('invalid bodies are 400 validation_failed', async () => {
    const { session } = await tenantWith();
    for (const body of [
      {},
      { email: newEmail() },
      { email: 'not an address', role: 'MEMBER' },
      { email: newEmail(), role: 'OWNER' },
      { email: newEmail(), role: 'MEMBER', password: TEST_PASSWORD },
    ]) {
      assertProblem(
        await h.request('POST', USERS, { session, body }),
        400,
        'validation_failed',
        JSON.stringify(body),
      );
    }
  });
});

describe('roles', () => {
  test('a role change answers 200 with the person, is audited, and their session has the new role at once', async () => {
    const { tenant, session } = await tenantWith();
    const colleague = await makeUser(h, tenant.id, { role: 'EXECUTIVE' });
    const theirs = await signIn(h, colleague);
    assert.equal(
      (await h.request('GET', '/api/v1/company/api-keys', { session: theirs })).status,
      200,
      'an EXECUTIVE cannot list keys',
    );

    const r = await h.request('PATCH', `${USERS}/${colleague.id}`, { session, body: { role: 'MEMBER' } });
    assert.equal(r.status, 200, `demoting an EXECUTIVE answered ${r.status}: ${r.text}`);
    assert.equal(r.body.role, 'MEMBER', 'the answer does not show the new role');
    assert.equal(r.body.id, colleague.id, 'the answer shows another person');
    assertProblem(
      await h.request('GET', '/api/v1/company/api-keys', { session: theirs }),
      403,
      'role_forbidden',
      "the demoted person's session listing keys",
    );
    assertProblem(
      await h.request('GET', USERS, { session: theirs }),
      403,
      'role_forbidden',
      'a MEMBER listing people',
    );
    const [row] = await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', colleague.id)
      .where('action', '=', 'user.role.update')
      .execute();
    assert.deepEqual(
      row?.metadata,
      { email: colleague.email, before: 'EXECUTIVE', after: 'MEMBER' },
      'the role change is not audited with the roles before and after',
    );
    const same = await h.request('PATCH', `${USERS}/${colleague.id}`, { session, body: { role: 'MEMBER' } });
    assert.equal(same.status, 200, 'setting the role a person has is refused');
  });

  test('only a PLATFORM_ADMIN invites, makes, changes or removes a PLATFORM_ADMIN (403 role_forbidden)', async () => {
    const { tenant, session } = await tenantWith('COMPANY_IT_ADMIN');
    const platformAdmin = await makeUser(h, tenant.id, { role: 'PLATFORM_ADMIN' });
    const member = await makeUser(h, tenant.id, { role: 'MEMBER' });
    const refusals = [
      ['POST', USERS, { email: newEmail(), role: 'PLATFORM_ADMIN' }],
      ['PATCH', `${USERS}/${member.id}`, { role: 'PLATFORM_ADMIN' }],
      ['PATCH', `${USERS}/${platformAdmin.id}`, { role: 'MEMBER' }],
      ['DELETE', `${USERS}/${platformAdmin.id}`, undefined],
    ] as const;
    for (const [method, path, body] of refusals)
      assertProblem(
        await h.request(method, path, { session, body }),
        403,
        'role_forbidden',
        `${method} ${path} by a COMPANY_IT_ADMIN`,
      );
    assert.equal(
      (await listed(h, session, platformAdmin.id))?.role,
      'PLATFORM_ADMIN',
      'a refused change changed the PLATFORM_ADMIN',
    );

    const theirs = await signIn(h, platformAdmin);
    const invited = await inviteAndKeep(theirs, { role: 'PLATFORM_ADMIN' });
    assert.equal(invited.role, 'PLATFORM_ADMIN', 'a PLATFORM_ADMIN could not invite a PLATFORM_ADMIN');
    const promoted = await h.request('PATCH', `${USERS}/${member.id}`, {
      session: theirs,
      body: { role: 'PLATFORM_ADMIN' },
    });
    assert.equal(promoted.status, 200, `a PLATFORM_ADMIN could not make one: ${promoted.text}`);
    const demoted = await h.request('PATCH', `${USERS}/${member.id}`, {
      session: theirs,
      body: { role: 'EXECUTIVE' },
    });
    assert.equal(demoted.status, 200, `a PLATFORM_ADMIN could not change one's role: ${demoted.text}`);
    const removed = await h.request('DELETE', `${USERS}/${invited.id}`, { session: theirs });
    assert.equal(removed.status, 204, `a PLATFORM_ADMIN could not remove an invited one: ${removed.text}`);
  });
});

describe('the last person who can manage keys', () => {
  test('demoting or removing the last active one is 409; invited ones and MEMBERs do not count', async () => {
    const { tenant, user, session } = await tenantWith();
    await makeUser(h, tenant.id, { role: 'MEMBER' });
    await inviteAndKeep(session, { role: 'COMPANY_IT_ADMIN' });
    await inviteAndKeep(session, { role: 'EXECUTIVE' });
    assertProblem(
      await h.request('PATCH', `${USERS}/${user.id}`, { session, body: { role: 'MEMBER' } }),
      409,
      'conflict',
      'the last admin demoting themselves',
    );
    assertProblem(
      await h.request('DELETE', `${USERS}/${user.id}`, { session }),
      409,
      'conflict',
      'the last admin removing themselves',
    );
    const sideways = await h.request('PATCH', `${USERS}/${user.id}`, {
      session,
      body: { role: 'EXECUTIVE' },
    });
    assert.equal(
      sideways.status,
      200,
      `the last admin could not move to another managing role: ${sideways.text}`,
    );

    const second = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
    const demoted = await h.request('PATCH', `${USERS}/${user.id}`, { session, body: { role: 'MEMBER' } });
    assert.equal(demoted.status, 200, `with a second admin, demoting the first failed: ${demoted.text}`);
    const theirs = await signIn(h, second);
    assertProblem(
      await h.request('DELETE', `${USERS}/${second.id}`, { session: theirs }),
      409,
      'conflict',
      'the new last admin removing themselves',
    );
  });

  test('two managers giving up their role or leaving at once: exactly one goes through, one is left (a race)', async () => {
    const changes = [
      (id: string) => ({ method: 'PATCH', path: `${USERS}/${id}`, body: { role: 'MEMBER' } }),
      (id: string) => ({ method: 'DELETE', path: `${USERS}/${id}`, body: undefined }),
    ];
    for (let round = 0; round < 6; round++) {
      const { tenant, user: a, session: sa } = await tenantWith();
      const b = await makeUser(h, tenant.id, { role: round % 2 === 0 ? 'EXECUTIVE' : 'COMPANY_IT_ADMIN' });
      const sb = await signIn(h, b);
      const first = changes[round % 2]?.(a.id);
      const second = changes[Math.floor(round / 2) % 2]?.(b.id);
      assert.ok(first && second, 'the round has its two changes');
      const answers = await Promise.all([
        h.request(first.method, first.path, { session: sa, body: first.body }),
        h.request(second.method, second.path, { session: sb, body: second.body }),
      ]);
      const passed = answers.filter((r) => r.status === 200 || r.status === 204);
      assert.equal(
        passed.length,
        1,
        `round ${round}: ${answers.map((r) => `${r.status} ${r.text}`).join(' | ')}: not exactly one change went through`,
      );
      const refused = answers.find((r) => r !== passed[0]);
      assert.ok(
        refused && refused.status === 409,
        `round ${round}: the other change is not 409: ${refused?.text}`,
      );
      const managers = await h.database.kysely
        .selectFrom('users')
        .select('id')
        .where('tenant_id', '=', tenant.id)
        .where('status', '=', 'active')
        .where('role', 'in', ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN'])
        .execute();
      assert.equal(
        managers.length,
        1,
        `round ${round}: ${managers.length} people who can manage keys are left`,
      );
    }
  });
});

describe('removing a person', () => {
  test('ends their sessions at once, takes their passkeys, answers 204 and is audited', async () => {
    const { tenant, session } = await tenantWith();
    const colleague = await makeUser(h, tenant.id, { role: 'EXECUTIVE' });
    const one = await signIn(h, colleague);
    const two = await signIn(h, colleague);
    await registerPasskey(h, one, newAuthenticator());
    for (const s of [one, two])
      assert.equal(
        (await h.request('GET', '/api/v1/auth/session', { session: s })).status,
        200,
        'a session of the colleague does not work before',
      );

    const r = await h.request('DELETE', `${USERS}/${colleague.id}`, { session });
    assert.equal(r.status, 204, `removing a person answered ${r.status}: ${r.text}`);
    assert.equal(r.text, '', 'a 204 came with a body');
    for (const s of [one, two])
      assertProblem(
        await h.request('GET', '/api/v1/auth/session', { session: s }),
        401,
        'unauthenticated',
        "a removed person's session",
      );
    assertProblem(
      await h.request('POST', '/api/v1/auth/login', {
        body: { email: colleague.email, password: colleague.password },
      }),
      401,
      'invalid_credentials',
      'a removed person signing in',
    );
    const passkeys = await h.database.kysely
      .selectFrom('passkeys')
      .select('id')
      .where('user_id', '=', colleague.id)
      .execute();
    assert.equal(passkeys.length, 0, "a removed person's passkeys are kept");
    assert.equal(await listed(h, session, colleague.id), undefined, 'a removed person is still listed');
    assert.equal((await auditActions(h, tenant.id)).at(-1), 'user.delete', 'the removal is not audited');
    // The address is free again.
    await inviteAndKeep(session, { email: colleague.email });
  });
});

describe('security', () => {
  test("another tenant's person, or an ID that is no person, is 404 not_found and stays as it was", async () => {
    const { session } = await tenantWith();
    const other = await makeSignedInTenant(h);
    const theirs = await makeUser(h, other.tenant.id, { role: 'MEMBER' });
    const calls = (id: string) =>
      [
        ['PATCH', `${USERS}/${id}`, { role: 'EXECUTIVE' }],
        ['DELETE', `${USERS}/${id}`, undefined],
        ['POST', `${USERS}/${id}/invitation`, undefined],
      ] as const;
    for (const id of [theirs.id, other.user.id, 'usr_0000000000000000000000', 'nope'])
      for (const [method, path, body] of calls(id))
        assertProblem(
          await h.request(method, path, { session, body }),
          404,
          'not_found',
          `${method} ${path}`,
        );
    assert.equal(
      (await listed(h, other.session, theirs.id))?.role,
      'MEMBER',
      "another tenant's person changed",
    );
  });

  test('no credential is 401; a tnt_ key 403 route_not_allowed; a MEMBER 403 role_forbidden; no CSRF token 403', async () => {
    const { tenant, session } = await tenantWith();
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN', 'integration_hub:ADMIN'] });
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    const someone = await makeUser(h, tenant.id, { role: 'MEMBER' });
    const routes = [
      ['GET', USERS, undefined],
      ['POST', USERS, { email: newEmail(), role: 'MEMBER' }],
      ['PATCH', `${USERS}/${someone.id}`, { role: 'EXECUTIVE' }],
      ['DELETE', `${USERS}/${someone.id}`, undefined],
      ['POST', `${USERS}/${someone.id}/invitation`, undefined],
    ] as const;
    for (const [method, path, body] of routes) {
      const what = `${method} ${path}`;
      assertProblem(
        await h.request(method, path, { body }),
        401,
        'unauthenticated',
        `${what} without a credential`,
      );
      assertProblem(
        await h.request(method, path, { token: key.secret, body }),
        403,
        'route_not_allowed',
        `${what} with a key`,
      );
      assertProblem(
        await h.request(method, path, { token: h.platformToken, body }),
        403,
        'route_not_allowed',
        `${what} with a platform key`,
      );
      assertProblem(
        await h.request(method, path, { session: member, body }),
        403,
        'role_forbidden',
        `${what} by a MEMBER`,
      );
      if (method !== 'GET')
        assertProblem(
          await h.request(method, path, { session, body, headers: { 'x-csrf-token': 'wrong' } }),
          403,
          'csrf_failed',
          `${what} without the CSRF token`,
        );
    }
    assert.equal(
      (await listed(h, session, someone.id))?.role,
      'MEMBER',
      'a refused request changed the person',
    );
  });

  test('a new link for an invited person replaces the old one; an active person is 409', async () => {
    const { user, session } = await tenantWith();
    const invited = await inviteAndKeep(session);
    const again = await h.request('POST', `${USERS}/${invited.id}/invitation`, { session });
    assert.equal(again.status, 201, `a new link answered ${again.status}: ${again.text}`);
    assert.notEqual(again.body.invitation.url, invited.url, 'the new link is the old one');
    assert.equal(again.body.status, 'invited', 'the person is not invited any more');
    tokens.push(again.body.invitation.url.split('#token=')[1]);
    const stored = await h.database.kysely
      .selectFrom('invitations')
      .select('token_hash')
      .where('user_id', '=', invited.id)
      .execute();
    assert.equal(stored.length, 1, 'the old link is kept beside the new one');
    assertProblem(
      await h.request('POST', `${USERS}/${user.id}/invitation`, { session }),
      409,
      'conflict',
      'a new link for an active person',
    );
  });

  test('no link, password or session token appears in a log, and each link in one answer only', () => {
    assertNoLeak(h, [TEST_PASSWORD], tokens);
  });
});

describe('a tenant made by the platform', () => {
  test('its first admin sees themselves alone', async () => {
    const tenant = await makeTenant(h);
    const admin = await makeUser(h, tenant.id, { role: 'PLATFORM_ADMIN' });
    const session = await signIn(h, admin);
    const r = await h.request('GET', USERS, { session });
    assert.deepEqual(
      r.body.data.map((u: { id: string }) => u.id),
      [admin.id],
      'a new tenant lists other people than its first admin',
    );
  });
});
