import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNoLeak, makeSignedInTenant, signIn } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import {
  accept,
  ACCEPT,
  assertProblem,
  auditActions,
  invite,
  listed,
  lookup,
  LOOKUP,
  sessionOf,
  USERS,
} from './people.js';

const PUBLIC_URL = 'https://hub.example.com';
const DAY = 24 * 60 * 60 * 1000;

let h: Harness;
const tokens: string[] = [];
const passwords: string[] = [];
before(async () => {
  h = await startHarness({ env: { PUBLIC_URL, TRUST_PROXY: '1' } });
});
after(() => h.close());

let nextAddress = 1;
const newAddress = () => `203.0.113.${nextAddress++}`;
let nextPassword = 1;
const newPassword = () => {
  const password = `a chosen passphrase no. ${nextPassword++}`;
  passwords.push(password);
  return password;
};

/** A tenant whose admin has invited one person (of `role`). */
async function invitedPerson(role = 'EXECUTIVE') {
  const admin = await makeSignedInTenant(h);
  const invited = await invite(h, admin.session, { role });
  tokens.push(invited.token);
  return { admin, invited };
}

describe('the invitation link', () => {
  test('lookup names the address, the tenant and the expiry; accept signs in as a password sign-in does', async () => {
    const { admin, invited } = await invitedPerson();
    const address = newAddress();
    const found = await lookup(h, invited.token, address);
    assert.equal(found.status, 200, `looking the invitation up answered ${found.status}: ${found.text}`);
    const tenantName = (await h.request('GET', '/api/v1/auth/session', { session: admin.session })).body
      .tenant.name;
    assert.deepEqual(
      found.body,
      { email: invited.email, tenant: { name: tenantName }, expiresAt: invited.expiresAt },
      'the lookup does not say what the invitation is for',
    );

    const password = newPassword();
    const r = await accept(h, invited.token, password, address);
    assert.equal(r.status, 200, `accepting answered ${r.status}: ${r.text}`);
    assert.deepEqual(
      r.body.user,
      { id: invited.id, email: invited.email, role: 'EXECUTIVE', tenantId: admin.tenant.id },
      'the sign-in answer shows another person',
    );
    assert.equal(r.body.authMethod, 'password', 'accepting is not a password sign-in');
    assert.equal(r.body.tenant.id, admin.tenant.id, 'the sign-in answer shows another tenant');
    const expiresIn = Date.parse(r.body.expiresAt) - Date.now();
    assert.ok(
      expiresIn > 11.9 * 3600_000 && expiresIn <= 12 * 3600_000,
      `the session does not last 12 h: ${r.body.expiresAt}`,
    );
    const cookies = r.headers.getSetCookie();
    assert.ok(
      cookies.some((c) => /^svc_access=.+; .*HttpOnly/.test(c)) &&
        cookies.some((c) => c.startsWith('__Host-svc_csrf=')),
      `accepting does not set the session and CSRF cookies: ${cookies.join(' | ')}`,
    );
    const session = sessionOf(r);
    const keys = await h.request('GET', '/api/v1/company/api-keys', { session });
    assert.equal(keys.status, 200, `the new EXECUTIVE's session cannot list keys: ${keys.text}`);

    const shown = await listed(h, admin.session, invited.id);
    assert.equal(shown?.status, 'active', 'the person is not active after accepting');
    assert.ok(shown?.lastSignInAt, 'accepting is not their last sign-in');
    await signIn(h, { email: invited.email, password });
    const actions = await auditActions(h, admin.tenant.id);
    assert.ok(
      actions.includes('user.activate') && actions.includes('sign_in.success'),
      `accepting is not audited: ${actions.join(', ')}`,
    );
  });

  test('works once: a second accept, and a lookup after it, are 401 invalid_credentials', async () => {
    const { invited } = await invitedPerson();
    const password = newPassword();
    assert.equal(
      (await accept(h, invited.token, password, newAddress())).status,
      200,
      'the first accept failed',
    );
    assertProblem(
      await accept(h, invited.token, newPassword(), newAddress()),
      401,
      'invalid_credentials',
      'a second accept',
    );
    assertProblem(
      await lookup(h, invited.token, newAddress()),
      401,
      'invalid_credentials',
      'a lookup after accepting',
    );
    await signIn(h, { email: invited.email, password });
  });

  test('two accepts of one link at once: exactly one signs in, with its password', async () => {
    for (let round = 0; round < 3; round++) {
      const { invited } = await invitedPerson('MEMBER');
      const [p1, p2] = [newPassword(), newPassword()];
      const answers = await Promise.all([
        accept(h, invited.token, p1, newAddress()),
        accept(h, invited.token, p2, newAddress()),
      ]);
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(
        statuses,
        [200, 401],
        `round ${round}: two accepts of one link answered ${statuses.join(', ')}`,
      );
      const winner = answers[0]?.status === 200 ? p1 : p2;
      await signIn(h, { email: invited.email, password: winner });
      assertProblem(
        await h.request('POST', '/api/v1/auth/login', {
          headers: { 'x-forwarded-for': newAddress() },
          body: { email: invited.email, password: winner === p1 ? p2 : p1 },
        }),
        401,
        'invalid_credentials',
        `round ${round}: the losing accept's password`,
      );
    }
  });

  test('expires after 7 days', async () => {
    const { invited } = await invitedPerson();
    try {
      h.setNow(new Date(Date.now() + 7 * DAY + 1000));
      assertProblem(
        await lookup(h, invited.token, newAddress()),
        401,
        'invalid_credentials',
        'looking up an expired link',
      );
      assertProblem(
        await accept(h, invited.token, newPassword(), newAddress()),
        401,
        'invalid_credentials',
        'accepting an expired link',
      );
    } finally {
      h.setNow(null);
    }
  });

  test('a new link replaces the old one, and a removed person’s link stops working', async () => {
    const { admin, invited } = await invitedPerson();
    const again = await h.request('POST', `${USERS}/${invited.id}/invitation`, { session: admin.session });
    assert.equal(again.status, 201, `a new link answered ${again.status}: ${again.text}`);
    const fresh = again.body.invitation.url.split('#token=')[1] as string;
    tokens.push(fresh);
    assertProblem(
      await lookup(h, invited.token, newAddress()),
      401,
      'invalid_credentials',
      'the replaced link',
    );
    assert.equal((await lookup(h, fresh, newAddress())).status, 200, 'the new link does not work');

    const removed = await h.request('DELETE', `${USERS}/${invited.id}`, { session: admin.session });
    assert.equal(removed.status, 204, `removing the invited person answered ${removed.status}`);
    assertProblem(
      await accept(h, fresh, newPassword(), newAddress()),
      401,
      'invalid_credentials',
      "a removed person's link",
    );
  });

  test('an invited person cannot sign in with a password before accepting', async () => {
    const { invited } = await invitedPerson();
    assertProblem(
      await h.request('POST', '/api/v1/auth/login', {
        headers: { 'x-forwarded-for': newAddress() },
        body: { email: invited.email, password: 'any password at all' },
      }),
      401,
      'invalid_credentials',
      'an invited person signing in with a password',
    );
  });

  test('unknown, malformed and empty tokens are 401; missing fields and short passwords are 400', async () => {
    const address = newAddress();
    for (const token of ['A'.repeat(32), 'short', '', 'x'.repeat(64)]) {
      assertProblem(
        await lookup(h, token, address),
        401,
        'invalid_credentials',
        `looking up ${JSON.stringify(token)}`,
      );
    }
    const { invited } = await invitedPerson();
    for (const body of [
      {},
      { token: invited.token },
      { password: newPassword() },
      { token: invited.token, password: 'too short' },
    ]) {
      assertProblem(
        await h.request('POST', ACCEPT, { headers: { 'x-forwarded-for': newAddress() }, body }),
        400,
        'validation_failed',
        `accepting with ${Object.keys(body).join(', ') || 'nothing'}`,
      );
    }
    assertProblem(
      await h.request('POST', LOOKUP, {
        headers: { 'x-forwarded-for': newAddress() },
        body: { token: invited.token, email: 'x' },
      }),
      400,
      'validation_failed',
      'a lookup with an unknown field',
    );
    assert.equal(
      (await lookup(h, invited.token, newAddress())).status,
      200,
      'refused requests used the link up',
    );
  });

  test('ten wrong tokens from one address: 429 with Retry-After, the right one too; other addresses are not held', async () => {
    const { invited } = await invitedPerson();
    const address = newAddress();
    // A lookup that works is not counted.
    for (let i = 0; i < 3; i++)
      assert.equal((await lookup(h, invited.token, address)).status, 200, 'a lookup failed');
    for (let i = 0; i < 10; i++) {
      const wrong =
        i % 2 === 0 ? lookup(h, 'B'.repeat(32), address) : accept(h, 'C'.repeat(32), newPassword(), address);
      assertProblem(await wrong, 401, 'invalid_credentials', `wrong token ${i + 1}`);
    }
    for (const r of [
      await lookup(h, invited.token, address),
      await accept(h, invited.token, newPassword(), address),
    ]) {
      assertProblem(r, 429, 'rate_limited', 'the right token from a throttled address');
      assert.ok(Number(r.headers.get('retry-after')) > 0, 'the throttled answer has no Retry-After');
    }
    assert.equal(
      (await accept(h, invited.token, newPassword(), newAddress())).status,
      200,
      'another address is held too',
    );
    // Sign-in's throttle is per account, this one per address: neither counts against the other.
    assert.equal(
      (
        await h.request('POST', '/api/v1/auth/login', {
          headers: { 'x-forwarded-for': address },
          body: { email: invited.email, password: passwords.at(-1) },
        })
      ).status,
      200,
      'a throttled address cannot sign in with a password',
    );
  });

  test('a foreign Origin is 403 csrf_failed, whatever the body', async () => {
    const { invited } = await invitedPerson();
    for (const path of [LOOKUP, ACCEPT]) {
      assertProblem(
        await h.request('POST', path, {
          headers: { origin: 'https://evil.example', 'x-forwarded-for': newAddress() },
          body: { token: invited.token, password: newPassword() },
        }),
        403,
        'csrf_failed',
        `${path} from another site`,
      );
    }
    assert.equal(
      (await lookup(h, invited.token, newAddress())).status,
      200,
      'a refused cross-site accept used the link',
    );
  });

  test('no token or password appears in a log, and each token in the one answer that showed it', () => {
    assertNoLeak(h, passwords, tokens);
  });
});
