import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { generateRegistrationOptions } from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import {
  authenticatorsFor,
  PASSKEYS,
  passkeySignIn,
  registerPasskey,
  sessionFrom,
  sessionTokens,
  type SoftAuthenticator,
} from '../helpers/authenticator.js';
import { assertNoLeak, makeSignedInTenant, makeUser, signIn } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

const PUBLIC_URL = 'https://hub.example.com';
const RP_ID = 'hub.example.com';
// A proxy in front (TRUST_PROXY=1) lets each test be a client address of its own, so the failures
// one test provokes on purpose never count against the next one's address.
const ENV = { PUBLIC_URL, TRUST_PROXY: '1' };
const LOGIN_OPTIONS = `${PASSKEYS}/login/options`;
const LOGIN_VERIFY = `${PASSKEYS}/login/verify`;
const MINUTE = 60_000;

let nextAddress = 1;
const newAddress = () => `203.0.113.${nextAddress++}`;

const { made, newAuthenticator } = authenticatorsFor(PUBLIC_URL);

/** A tenant with an admin (who may read the audit log) holding one registered passkey. */
async function userWithPasskey(h: Harness, authenticator = newAuthenticator(), role = 'COMPANY_IT_ADMIN') {
  const signedIn = await makeSignedInTenant(h, { role });
  const registered = await registerPasskey(h, signedIn.session, authenticator);
  return { ...signedIn, ...registered, authenticator };
}

const requestOptions = async (h: Harness, address: string) => {
  const r = await h.request('POST', LOGIN_OPTIONS, { headers: { 'x-forwarded-for': address }, body: {} });
  assert.equal(r.status, 200, r.text);
  return r.body;
};

const verify = (h: Harness, response: unknown, address: string, headers: Record<string, string> = {}) =>
  h.request('POST', LOGIN_VERIFY, {
    headers: { 'x-forwarded-for': address, ...headers },
    body: { response },
  });

function assertRefused(response: TestResponse, what = ''): void {
  assert.equal(response.status, 401, `${what}: ${response.text}`);
  assert.equal(response.body.code, 'invalid_credentials', what);
  assert.equal(response.headers.getSetCookie().length, 0, `${what}: a refused sign-in sets no cookie`);
}

async function auditLog(h: Harness, session: TestSession) {
  const r = await h.request('GET', '/api/v1/company/audit-log?limit=100', { session });
  assert.equal(r.status, 200, r.text);
  return r.body.data as { action: string; metadata: Record<string, unknown>; actorId: string | null }[];
}

describe('passkey sign-in options', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test('are bare, discoverable request options: a challenge, the RP ID, UV preferred, no allowCredentials', async () => {
    const address = newAddress();
    const r = await h.request('POST', LOGIN_OPTIONS, { headers: { 'x-forwarded-for': address }, body: {} });
    assert.equal(r.status, 200, r.text);
    const options = r.body;
    assert.ok(isoBase64URL.toBuffer(options.challenge).length >= 16, 'a challenge of at least 16 bytes');
    assert.equal(options.rpId, RP_ID, "the sign-in options name another RP ID than the hub's host");
    assert.equal(
      options.userVerification,
      'preferred',
      'the sign-in options do not prefer user verification',
    );
    assert.ok(
      options.allowCredentials === undefined || options.allowCredentials.length === 0,
      'no allowCredentials: any passkey of this site may answer',
    );
    assert.notEqual(
      (await requestOptions(h, address)).challenge,
      options.challenge,
      'two calls for sign-in options get the same challenge',
    );
  });

  test('need no credential, and ignore a session', async () => {
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('POST', LOGIN_OPTIONS, {
      headers: { cookie: session.cookie, 'x-forwarded-for': newAddress() },
      body: {},
    });
    assert.equal(r.status, 200, r.text);
  });
});

describe('passkey sign-in', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test('answers the sign-in answer of docs/api/authentication.md with authMethod "passkey" and sets the session cookies', async () => {
    const { tenant, user, session: adminSession, authenticator } = await userWithPasskey(h);
    const { answer } = await passkeySignIn(h, authenticator, {
      address: newAddress(),
      headers: { origin: PUBLIC_URL },
    });
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(
      answer.body.user,
      {
        id: user.id,
        email: user.email,
        role: 'COMPANY_IT_ADMIN',
        tenantId: tenant.id,
      },
      'the passkey signs in someone else, or shows the wrong role or tenant',
    );
    assert.equal(answer.body.tenant.id, tenant.id, 'the passkey sign-in answer names another tenant');
    assert.equal(answer.body.authMethod, 'passkey', 'the passkey sign-in does not say it was a passkey');
    assert.match(
      answer.body.csrfToken,
      /^[0-9A-Za-z]{22}\.[0-9a-f]{64}$/,
      "the passkey sign-in answer's CSRF token is malformed",
    );
    const expiresIn = Date.parse(answer.body.expiresAt) - Date.now();
    assert.ok(expiresIn > 11.9 * 3600_000 && expiresIn <= 12 * 3600_000, answer.body.expiresAt);
    assert.equal(answer.headers.get('cache-control'), 'no-store', 'the passkey sign-in answer may be cached');

    const cookies = answer.headers.getSetCookie();
    const access = cookies.find((c) => c.startsWith('svc_access='));
    const csrf = cookies.find((c) => c.startsWith('__Host-svc_csrf='));
    assert.ok(access && csrf, cookies.join(' | '));
    assert.match(access, /; HttpOnly/, 'the access cookie can be read by page scripts');
    assert.match(access, /; Secure/, 'the access cookie is sent over plain http');
    assert.match(access, /; SameSite=Lax/, 'the access cookie is not SameSite=Lax');
    assert.match(csrf, /; SameSite=Strict/, 'the CSRF cookie is not SameSite=Strict');
    assert.equal(
      csrf.split(';')[0],
      `__Host-svc_csrf=${answer.body.csrfToken}`,
      'the CSRF cookie does not hold the CSRF token of the answer',
    );

    // The session works, says how it began, and takes its CSRF token on unsafe methods.
    const session = sessionFrom(answer);
    const current = await h.request('GET', '/api/v1/auth/session', { session });
    assert.equal(current.status, 200, current.text);
    assert.equal(current.body.authMethod, 'passkey', 'the session does not say it began with a passkey');
    assert.equal(current.body.user.id, user.id, "the session belongs to another user than the passkey's");
    const offered = await h.request('POST', `${PASSKEYS}/registration/options`, { session, body: {} });
    assert.equal(offered.status, 200, offered.text);

    const actions = await auditLog(h, adminSession);
    const success = actions.find((e) => e.action === 'sign_in.success' && e.metadata.method === 'passkey');
    assert.ok(success, JSON.stringify(actions.map((e) => e.action)));
    assert.equal(success.actorId, user.id, 'the sign-in audit row is not by the user who signed in');

    const token = access.split(';')[0]?.split('=')[1] ?? '';
    assert.ok(token.length > 0, 'the access cookie carries no token to look for in the logs');
    assertNoLeak(h, authenticator.privateKeyMaterial(), [token]);
  });

  test('sets lastUsedAt on the passkey used', async () => {
    const { session, authenticator, record } = await userWithPasskey(h);
    assert.equal(record.lastUsedAt, null, 'a new passkey says it was already used');
    const before = Date.now();
    const { answer } = await passkeySignIn(h, authenticator, { address: newAddress() });
    assert.equal(answer.status, 200, answer.text);
    const lastUsedAt = await waitUntil(
      async () => {
        const list = await h.request('GET', PASSKEYS, { session });
        assert.equal(list.status, 200, list.text);
        const listed = list.body.data.find((p: { id: string }) => p.id === record.id);
        return (listed as { lastUsedAt: string | null } | undefined)?.lastUsedAt;
      },
      { message: 'lastUsedAt set after a sign-in', timeoutMs: 10_000, intervalMs: 20 },
    );
    assert.ok(Date.parse(lastUsedAt) >= before - 1000, lastUsedAt);
  });

  test('the user whose passkey answered is signed in, whoever else has passkeys', async () => {
    const one = await userWithPasskey(h);
    const two = await userWithPasskey(h, newAuthenticator(), 'MEMBER');
    for (const who of [one, two, one]) {
      const { answer } = await passkeySignIn(h, who.authenticator, { address: newAddress() });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.user.id, who.user.id, 'a passkey signs in someone other than its owner');
      assert.equal(
        answer.body.user.role,
        who === two ? 'MEMBER' : 'COMPANY_IT_ADMIN',
        'a passkey sign-in shows the wrong role',
      );
    }
  });

  test('a replayed answer is refused: the challenge is single-use', async () => {
    const { authenticator } = await userWithPasskey(h);
    const address = newAddress();
    const { response, requestOptions: used, answer } = await passkeySignIn(h, authenticator, { address });
    assert.equal(answer.status, 200, answer.text);
    assertRefused(await verify(h, response, address), 'the same answer again');
    // A fresh, valid signature (and a higher counter) over the used challenge is refused too.
    assertRefused(
      await verify(h, authenticator.authenticate(used), address),
      'a new signature over a used challenge',
    );
  });

  test('a replayed answer of a synced passkey (counter always 0) is refused: only the challenge stops it', async () => {
    const { authenticator } = await userWithPasskey(h, newAuthenticator({ keepsCounter: false }));
    const address = newAddress();
    const { response, answer } = await passkeySignIn(h, authenticator, { address });
    assert.equal(answer.status, 200, answer.text);
    assertRefused(await verify(h, response, address), 'the same answer again');
  });

  for (const keepsCounter of [true, false]) {
    test(`the same answer posted 10 times at once signs in exactly once (${keepsCounter ? 'counting' : 'synced'} passkey)`, async () => {
      const { authenticator } = await userWithPasskey(h, newAuthenticator({ keepsCounter }));
      const address = newAddress();
      const response = authenticator.authenticate(await requestOptions(h, address));
      const answers = await Promise.all(Array.from({ length: 10 }, () => verify(h, response, address)));
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(
        statuses,
        [200, 401, 401, 401, 401, 401, 401, 401, 401, 401],
        `the same ${keepsCounter ? 'counting' : 'synced'} passkey answer signed in more or less than once`,
      );
      for (const refused of answers.filter((a) => a.status !== 200)) assertRefused(refused);
    });
  }

  test('each forged, misdirected or stale answer is 401 invalid_credentials with no cookie', async () => {
    const { session: adminSession, authenticator } = await userWithPasskey(h);
    const address = newAddress();
    const attempt = async (what: string, overrides: Parameters<SoftAuthenticator['authenticate']>[1]) => {
      const response = authenticator.authenticate(await requestOptions(h, address), overrides);
      assertRefused(await verify(h, response, address), what);
    };

    await attempt('a flipped signature bit', { tamper: true });
    await attempt('another origin', { origin: 'https://evil.example' });
    await attempt('another scheme', { origin: 'http://hub.example.com' });
    await attempt('another port', { origin: 'https://hub.example.com:8443' });
    await attempt('another RP ID', { rpId: 'evil.example' });
    await attempt('a parent domain as RP ID', { rpId: 'example.com' });
    await attempt('a registration ceremony', { type: 'webauthn.create' });
    await attempt('an unknown challenge', {
      challenge: isoBase64URL.fromBuffer(new Uint8Array(randomBytes(32))),
    });
    const registration = await h.request('POST', `${PASSKEYS}/registration/options`, {
      session: adminSession,
      body: {},
    });
    assert.equal(registration.status, 200, registration.text);
    await attempt('a challenge offered for registration', { challenge: registration.body.challenge });

    // Fields a browser would never send wrong: refused, never a 500.
    const options = await requestOptions(h, address);
    const good = authenticator.authenticate(options);
    assertRefused(
      await verify(h, { ...good, response: { ...good.response, authenticatorData: 'AAAA' } }, address),
      'truncated authenticator data',
    );
    assertRefused(
      await verify(h, { ...good, response: { ...good.response, clientDataJSON: 'e30' } }, address),
      'empty client data',
    );

    // The passkey itself still works, and the failures were audited as passkey sign-in failures.
    const { answer } = await passkeySignIn(h, authenticator, { address });
    assert.equal(answer.status, 200, answer.text);
    const failures = (await auditLog(h, adminSession)).filter(
      (e) => e.action === 'sign_in.failure' && e.metadata.method === 'passkey',
    );
    assert.ok(
      failures.length >= 1,
      'a failed passkey sign-in of a known passkey is in its tenant’s audit log',
    );
  });

  test('an unknown passkey is refused', async () => {
    const stranger = newAuthenticator();
    // A credential this service never saw, for the right RP ID, made with options from elsewhere.
    stranger.register(
      await generateRegistrationOptions({ rpName: 'elsewhere', rpID: RP_ID, userName: 'nobody@example.com' }),
    );
    const { answer } = await passkeySignIn(h, stranger, { address: newAddress() });
    assertRefused(answer, 'an unknown credential');
  });

  test("a user handle missing or not the passkey owner's is refused", async () => {
    const mine = await userWithPasskey(h);
    const theirs = await userWithPasskey(h);
    const address = newAddress();
    // Sign-in names no user first, so the authenticator must say whose credential it is (WebAuthn §7.2).
    for (const userHandle of [
      null,
      theirs.creationOptions.user.id,
      isoBase64URL.fromBuffer(new Uint8Array(randomBytes(32))),
    ]) {
      const response = mine.authenticator.authenticate(await requestOptions(h, address), { userHandle });
      assertRefused(await verify(h, response, address), `user handle ${userHandle}`);
    }
    const { answer } = await passkeySignIn(h, mine.authenticator, { address });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(
      answer.body.user.id,
      mine.user.id,
      'after the refused user handles, the passkey signs in someone other than its owner',
    );
  });

  test('a challenge is good for 5 minutes and no longer', async () => {
    const { authenticator } = await userWithPasskey(h);
    const address = newAddress();
    const issuedAfter = Date.now();
    const fresh = await requestOptions(h, address);
    const stale = await requestOptions(h, address);
    const issuedBefore = Date.now();
    try {
      h.setNow(new Date(issuedAfter + 4 * MINUTE + 50_000));
      const inTime = await verify(h, authenticator.authenticate(fresh), address);
      assert.equal(inTime.status, 200, inTime.text);
      h.setNow(new Date(issuedBefore + 5 * MINUTE + 1000));
      assertRefused(await verify(h, authenticator.authenticate(stale), address), 'a challenge 5 minutes old');
    } finally {
      h.setNow(null);
    }
  });

  test('a signature counter that went backwards, or stayed put above 0, is refused', async () => {
    const { authenticator } = await userWithPasskey(h, newAuthenticator({ keepsCounter: true }));
    const address = newAddress();
    const signInWith = async (counter: number) =>
      verify(h, authenticator.authenticate(await requestOptions(h, address), { counter }), address);

    assert.equal((await signInWith(1)).status, 200, 'a first sign-in with counter 1 is refused');
    assertRefused(await signInWith(1), 'the same counter again');
    assertRefused(await signInWith(0), 'counter back to 0');
    assert.equal((await signInWith(5)).status, 200, 'a sign-in with a higher counter is refused');
    assertRefused(await signInWith(3), 'counter lower than the last one');
    assert.equal(
      (await signInWith(6)).status,
      200,
      'a sign-in with the next counter is refused after a refusal',
    );
  });

  test('a synced passkey that keeps no counter (0 every time) signs in repeatedly', async () => {
    const authenticator = newAuthenticator({ keepsCounter: false, backupEligible: true, backedUp: true });
    const { record } = await userWithPasskey(h, authenticator);
    assert.equal(record.backupEligible, true, 'a synced passkey is not recorded as backup eligible');
    assert.equal(record.backedUp, true, 'a synced passkey is not recorded as backed up');
    const address = newAddress();
    for (let i = 0; i < 3; i++) {
      const { answer } = await passkeySignIn(h, authenticator, { address });
      assert.equal(answer.status, 200, `sign-in ${i + 1}: ${answer.text}`);
    }
  });

  test('an Origin of another site on verify is 403 csrf_failed (login CSRF), with no cookie', async () => {
    const { authenticator } = await userWithPasskey(h);
    const address = newAddress();
    const response = authenticator.authenticate(await requestOptions(h, address));
    const r = await verify(h, response, address, { origin: 'https://evil.example' });
    assert.equal(r.status, 403, r.text);
    assert.equal(
      r.body.code,
      'csrf_failed',
      'a cross-site passkey sign-in is refused for another reason than CSRF',
    );
    assert.equal(r.headers.getSetCookie().length, 0, 'a cross-site passkey sign-in sets cookies');

    // CSRF is checked before validation (docs/api/errors.md): a cross-site post is 403 whatever its body,
    // here and on password sign-in.
    for (const path of [`${PASSKEYS}/login/verify`, `${PASSKEYS}/login/options`, '/api/v1/auth/login']) {
      const junk = await h.request('POST', path, {
        body: { x: 1 },
        headers: { origin: 'https://evil.example', 'x-forwarded-for': address },
      });
      assert.equal(junk.status, 403, `${path}: ${junk.text}`);
      assert.equal(
        junk.body.code,
        'csrf_failed',
        `${path}: a cross-site post is refused for another reason than CSRF`,
      );
    }
  });

  test('a body that is not a credential is 400 validation_failed', async () => {
    const address = newAddress();
    for (const body of [{}, { response: {} }, { response: 'x' }, { response: { id: 'a' }, extra: 1 }]) {
      const r = await h.request('POST', LOGIN_VERIFY, { headers: { 'x-forwarded-for': address }, body });
      assert.equal(r.status, 400, r.text);
      assert.equal(
        r.body.code,
        'validation_failed',
        'a body that is not a credential is refused for another reason than validation',
      );
    }
  });

  test('a user with a passkey may still sign in with the password while it is on', async () => {
    const { user } = await userWithPasskey(h);
    const session = await signIn(h, user);
    const current = await h.request('GET', '/api/v1/auth/session', { session });
    assert.equal(
      current.body.authMethod,
      'password',
      'a password sign-in by a user with a passkey does not say it was a password',
    );
  });

  test('a MEMBER signs in with a passkey as a MEMBER', async () => {
    const { tenant, session: adminSession } = await makeSignedInTenant(h);
    const member = await makeUser(h, tenant.id, { role: 'MEMBER' });
    const authenticator = newAuthenticator();
    await registerPasskey(h, await signIn(h, member), authenticator);
    const { answer } = await passkeySignIn(h, authenticator, { address: newAddress() });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.user.id, member.id, "a member's passkey signs in someone else");
    assert.equal(answer.body.user.role, 'MEMBER', "a member's passkey signs in with another role");
    const actions = await auditLog(h, adminSession);
    assert.ok(
      actions.some(
        (e) => e.action === 'sign_in.success' && e.metadata.method === 'passkey' && e.actorId === member.id,
      ),
      "a member's passkey sign-in is not audited as theirs",
    );
  });

  test('no key material and no session token appeared in a response or log where it should not', () => {
    const keys = made.flatMap((a) => [...a.privateKeyMaterial(), ...a.publicKeyMaterial()]);
    const tokens = sessionTokens(h);
    assert.ok(
      keys.length > 0 && tokens.length > 0,
      'the leak check has no key material or session token to look for',
    );
    assertNoLeak(h, keys, tokens);
  });
});
