import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  authenticatorsFor,
  PASSKEYS,
  passkeySignIn,
  registerPasskey,
  sessionTokens,
} from '../helpers/authenticator.js';
import { assertNoLeak, makeSignedInTenant, makeUser, signIn } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';

const PUBLIC_URL = 'https://hub.example.com';
const ENV = { PUBLIC_URL, TRUST_PROXY: '1' };
const SWITCH = '/api/v1/auth/password-sign-in';
const ICLOUD = 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd';

let nextAddress = 1;
const newAddress = () => `192.0.2.${nextAddress++}`;

const { made, newAuthenticator } = authenticatorsFor(PUBLIC_URL);

// A well-formed passkey ID that names nothing.
const UNKNOWN_ID = 'pky_0000000000000000000000';

function assertProblem(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, code, response.text);
}

const list = async (h: Harness, session: TestSession, query = '') => {
  const r = await h.request('GET', `${PASSKEYS}${query}`, { session });
  assert.equal(r.status, 200, r.text);
  return r;
};
const ids = async (h: Harness, session: TestSession) =>
  (await list(h, session)).body.data.map((p: { id: string }) => p.id) as string[];

async function auditLog(h: Harness, session: TestSession) {
  const r = await h.request('GET', '/api/v1/company/audit-log?limit=100', { session });
  assert.equal(r.status, 200, r.text);
  return r.body.data as {
    action: string;
    targetId: string | null;
    actorId: string | null;
    metadata: Record<string, unknown>;
  }[];
}

const passwordLogin = (h: Harness, email: string, password: string) =>
  h.request('POST', '/api/v1/auth/login', {
    headers: { 'x-forwarded-for': newAddress() },
    body: { email, password },
  });

describe('listing passkeys', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test("lists the user's own passkeys newest first, in pages, with no one else's and no public key", async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const authenticators = [newAuthenticator(), newAuthenticator(), newAuthenticator()];
    const registered = [];
    const start = Date.now();
    try {
      // One second apart, so "newest first" has one answer.
      for (const [i, authenticator] of authenticators.entries()) {
        h.setNow(new Date(start + i * 1000));
        registered.push(await registerPasskey(h, session, authenticator, { name: `key ${i}` }));
      }
    } finally {
      h.setNow(null);
    }
    const colleague = await signIn(h, await makeUser(h, tenant.id));
    const theirs = await registerPasskey(h, colleague, newAuthenticator());

    const all = await list(h, session);
    assert.deepEqual(
      Object.keys(all.body).sort(),
      ['data', 'nextCursor'],
      'the passkey list has missing or extra top-level fields',
    );
    assert.equal(all.body.nextCursor, null, 'a list that fits one page offers a next page');
    assert.deepEqual(
      all.body.data.map((p: { name: string }) => p.name),
      ['key 2', 'key 1', 'key 0'],
      "the user's passkeys are not listed newest first",
    );
    assert.deepEqual(
      all.body.data,
      registered.map((r) => r.record).reverse(),
      'the listed passkeys differ from the records answered at registration',
    );

    const first = await list(h, session, '?limit=2');
    assert.equal(first.body.data.length, 2, 'a page of 2 does not hold 2 passkeys');
    assert.equal(typeof first.body.nextCursor, 'string', 'a first page of 2 out of 3 offers no next page');
    const second = await list(h, session, `?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    assert.deepEqual(
      [...first.body.data, ...second.body.data].map((p: { name: string }) => p.name),
      ['key 2', 'key 1', 'key 0'],
      'paging through the list loses, repeats or reorders passkeys',
    );
    assert.equal(second.body.nextCursor, null, 'the last page offers yet another page');
    assertProblem(await h.request('GET', `${PASSKEYS}?limit=0`, { session }), 400, 'validation_failed');
    assertProblem(await h.request('GET', `${PASSKEYS}?cursor=nope`, { session }), 400, 'validation_failed');

    // The owner sees each passkey's credential ID and their user handle (for the WebAuthn Signal API).
    assert.deepEqual(
      all.body.data.map((p: { credentialId: string }) => p.credentialId),
      registered.map((r) => r.credentialId).reverse(),
      "the owner does not see their passkeys' credential IDs, newest first",
    );
    for (const record of all.body.data)
      assert.equal(
        record.userHandle,
        registered[0]?.creationOptions.user.id,
        'the owner does not see their user handle on a passkey',
      );
    for (const answer of [all, first, second]) {
      assert.ok(!answer.text.includes(theirs.credentialId), "no colleague's credential ID");
      assert.ok(!answer.text.includes(theirs.creationOptions.user.id), "no colleague's user handle");
      for (const authenticator of authenticators) {
        for (const material of [...authenticator.publicKeyMaterial(), ...authenticator.privateKeyMaterial()])
          assert.ok(!answer.text.includes(material), 'no key material in a list');
      }
    }
  });

  test('needs a session', async () => {
    assertProblem(await h.request('GET', PASSKEYS), 401, 'unauthenticated');
  });
});

describe('removing passkeys', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test('answers 204, the passkey no longer signs in, and passkey.delete is audited', async () => {
    const { user, session } = await makeSignedInTenant(h);
    const authenticator = newAuthenticator({ aaguid: ICLOUD });
    const { record } = await registerPasskey(h, session, authenticator);
    const kept = await registerPasskey(h, session, newAuthenticator());

    const r = await h.request('DELETE', `${PASSKEYS}/${record.id}`, { session });
    assert.equal(r.status, 204, r.text);
    assert.equal(r.text, '', 'removing a passkey answers with a body');
    assert.deepEqual(
      await ids(h, session),
      [kept.record.id],
      'removing one passkey removed another too, or none',
    );
    const { answer } = await passkeySignIn(h, authenticator, { address: newAddress() });
    assert.equal(answer.status, 401, answer.text);
    assert.equal(
      answer.body.code,
      'invalid_credentials',
      'a removed passkey is refused for another reason than invalid credentials',
    );

    assertProblem(await h.request('DELETE', `${PASSKEYS}/${record.id}`, { session }), 404, 'not_found');

    const entries = await auditLog(h, session);
    const created = entries.find((e) => e.action === 'passkey.create' && e.targetId === record.id);
    const deleted = entries.find((e) => e.action === 'passkey.delete' && e.targetId === record.id);
    assert.ok(created && deleted, JSON.stringify(entries.map((e) => e.action)));
    for (const entry of [created, deleted]) {
      assert.equal(
        entry.metadata.name,
        'iCloud Keychain',
        'the passkey audit row does not name the provider from the AAGUID',
      );
      assert.equal(entry.metadata.aaguid, ICLOUD, 'the passkey audit row lost the AAGUID');
      assert.equal(entry.actorId, user.id, 'the passkey audit row is not by the owner');
    }
  });

  test('an unknown or malformed ID is 404', async () => {
    const { session } = await makeSignedInTenant(h);
    await registerPasskey(h, session, newAuthenticator());
    for (const id of [UNKNOWN_ID, 'pky_x', 'key_0000000000000000000000', 'nothing']) {
      assertProblem(await h.request('DELETE', `${PASSKEYS}/${id}`, { session }), 404, 'not_found');
    }
    assert.equal((await ids(h, session)).length, 1, "a 404 removal removed the user's passkey anyway");
  });

  test("another user's passkey is 404 and invisible, in the same tenant (even to an admin) or another", async () => {
    const owner = await makeSignedInTenant(h, { role: 'MEMBER' });
    const { record } = await registerPasskey(h, owner.session, newAuthenticator());
    const admin = await signIn(h, await makeUser(h, owner.tenant.id, { role: 'COMPANY_IT_ADMIN' }));
    const otherTenant = await makeSignedInTenant(h);
    await registerPasskey(h, otherTenant.session, newAuthenticator());

    for (const session of [admin, otherTenant.session]) {
      assert.ok(
        !(await ids(h, session)).includes(record.id),
        'another user sees the passkey in their own list',
      );
      assertProblem(await h.request('DELETE', `${PASSKEYS}/${record.id}`, { session }), 404, 'not_found');
    }
    assert.deepEqual(await ids(h, owner.session), [record.id], 'the passkey is still there');
  });

  test('needs a session and its CSRF token', async () => {
    const { session } = await makeSignedInTenant(h);
    const { record } = await registerPasskey(h, session, newAuthenticator());
    assertProblem(await h.request('DELETE', `${PASSKEYS}/${record.id}`), 401, 'unauthenticated');
    assertProblem(
      await h.request('DELETE', `${PASSKEYS}/${record.id}`, { headers: { cookie: session.cookie } }),
      403,
      'csrf_failed',
    );
    assert.deepEqual(
      await ids(h, session),
      [record.id],
      'a removal without a session or CSRF token removed the passkey',
    );
  });

  test('a MEMBER manages their own passkeys: add, list, remove', async () => {
    const { session } = await makeSignedInTenant(h, { role: 'MEMBER' });
    const a = await registerPasskey(h, session, newAuthenticator(), { name: 'phone' });
    const b = await registerPasskey(h, session, newAuthenticator(), { name: 'laptop' });
    assert.deepEqual(
      (await ids(h, session)).sort(),
      [a.record.id, b.record.id].sort(),
      "the member's two passkeys are not both listed",
    );
    assert.equal(
      (await h.request('DELETE', `${PASSKEYS}/${a.record.id}`, { session })).status,
      204,
      'a member cannot remove their first passkey',
    );
    assert.equal(
      (await h.request('DELETE', `${PASSKEYS}/${b.record.id}`, { session })).status,
      204,
      'a member cannot remove their second passkey',
    );
    assert.deepEqual(await ids(h, session), [], "the member's passkeys are still listed after removal");
  });
});

describe('the password sign-in switch', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test('is on by default, and cannot be turned off without a passkey (409 conflict)', async () => {
    const { user, session } = await makeSignedInTenant(h);
    const r = await h.request('GET', SWITCH, { session });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { enabled: true }, 'password sign-in is not on by default');
    assertProblem(await h.request('PUT', SWITCH, { session, body: { enabled: false } }), 409, 'conflict');
    assert.deepEqual(
      (await h.request('GET', SWITCH, { session })).body,
      { enabled: true },
      'password sign-in went off though the user has no passkey',
    );
    assert.equal(
      (await passwordLogin(h, user.email, user.password)).status,
      200,
      'the user cannot sign in with the password while it is on',
    );
    // Turning it on while on is harmless.
    const on = await h.request('PUT', SWITCH, { session, body: { enabled: true } });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(on.body, { enabled: true }, 'turning password sign-in on while on does not answer on');
  });

  test('off: a correct password is 403 password_sign_in_disabled, a wrong one 401; passkeys still sign in', async () => {
    const { user, session } = await makeSignedInTenant(h);
    const authenticator = newAuthenticator();
    await registerPasskey(h, session, authenticator);

    const off = await h.request('PUT', SWITCH, { session, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(off.body, { enabled: false }, 'turning password sign-in off does not answer off');
    assert.deepEqual(
      (await h.request('GET', SWITCH, { session })).body,
      { enabled: false },
      'password sign-in still reads as on after it was turned off',
    );

    const correct = await passwordLogin(h, user.email, user.password);
    assertProblem(correct, 403, 'password_sign_in_disabled');
    assert.equal(correct.headers.getSetCookie().length, 0, 'a refused password sign-in sets cookies');
    const wrong = await passwordLogin(h, user.email, 'not the password');
    assertProblem(wrong, 401, 'invalid_credentials');
    assert.equal(
      wrong.headers.getSetCookie().length,
      0,
      'a wrong password with password sign-in off sets cookies',
    );

    const { answer } = await passkeySignIn(h, authenticator, { address: newAddress() });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.authMethod, 'passkey', 'the passkey sign-in does not say it was a passkey');
    // The session that turned it off keeps working.
    assert.equal(
      (await h.request('GET', PASSKEYS, { session })).status,
      200,
      'the session that turned password sign-in off stops working',
    );

    const on = await h.request('PUT', SWITCH, { session, body: { enabled: true } });
    assert.equal(on.status, 200, on.text);
    assert.deepEqual(on.body, { enabled: true }, 'turning password sign-in back on does not answer on');
    const again = await passwordLogin(h, user.email, user.password);
    assert.equal(again.status, 200, again.text);
    assert.equal(
      again.body.authMethod,
      'password',
      'the password sign-in after turning it back on does not say it was a password',
    );
  });

  test('the last passkey cannot be removed while it is off (409); the others can', async () => {
    const { session } = await makeSignedInTenant(h);
    const first = await registerPasskey(h, session, newAuthenticator());
    const second = await registerPasskey(h, session, newAuthenticator());
    assert.equal(
      (await h.request('PUT', SWITCH, { session, body: { enabled: false } })).status,
      200,
      'password sign-in cannot be turned off by a user with two passkeys',
    );

    assert.equal(
      (await h.request('DELETE', `${PASSKEYS}/${first.record.id}`, { session })).status,
      204,
      'the first of two passkeys cannot be removed while password sign-in is off',
    );
    assertProblem(await h.request('DELETE', `${PASSKEYS}/${second.record.id}`, { session }), 409, 'conflict');
    assert.deepEqual(
      await ids(h, session),
      [second.record.id],
      'the remaining passkey is not the last one left',
    );

    assert.equal(
      (await h.request('PUT', SWITCH, { session, body: { enabled: true } })).status,
      200,
      'password sign-in cannot be turned back on',
    );
    assert.equal(
      (await h.request('DELETE', `${PASSKEYS}/${second.record.id}`, { session })).status,
      204,
      'the last passkey cannot be removed once password sign-in is on again',
    );
    assert.deepEqual(await ids(h, session), [], 'the user still has a passkey after removing both');
    // Without a passkey it cannot go off again.
    assertProblem(await h.request('PUT', SWITCH, { session, body: { enabled: false } }), 409, 'conflict');
  });

  test('turning it off and removing the last passkey at once never leave the user with neither', async () => {
    const { user, session } = await makeSignedInTenant(h);
    for (let round = 0; round < 5; round++) {
      const { record } = await registerPasskey(h, session, newAuthenticator());
      const [off, removed] = await Promise.all([
        h.request('PUT', SWITCH, { session, body: { enabled: false } }),
        h.request('DELETE', `${PASSKEYS}/${record.id}`, { session }),
      ]);
      const enabled = (await h.request('GET', SWITCH, { session })).body.enabled as boolean;
      const left = await ids(h, session);
      assert.ok(enabled || left.length > 0, `round ${round}: password off and no passkey left`);
      // Exactly one of the two won; the other was refused with 409.
      assert.deepEqual(
        [off.status, removed.status].sort(),
        enabled ? [204, 409] : [200, 409],
        `round ${round}: ${off.text} / ${removed.text}`,
      );
      if (!enabled) {
        assert.equal(
          (await h.request('PUT', SWITCH, { session, body: { enabled: true } })).status,
          200,
          `round ${round}: password sign-in cannot be turned back on`,
        );
        assert.equal(
          (await h.request('DELETE', `${PASSKEYS}/${record.id}`, { session })).status,
          204,
          `round ${round}: the passkey cannot be removed once password sign-in is on`,
        );
      }
    }
    assert.equal(
      (await passwordLogin(h, user.email, user.password)).status,
      200,
      'the user cannot sign in with the password after the races',
    );
  });

  test('each change is audited as user.password_sign_in.update with the new value', async () => {
    const { user, session } = await makeSignedInTenant(h);
    await registerPasskey(h, session, newAuthenticator());
    assert.equal(
      (await h.request('PUT', SWITCH, { session, body: { enabled: false } })).status,
      200,
      'password sign-in cannot be turned off',
    );
    assert.equal(
      (await h.request('PUT', SWITCH, { session, body: { enabled: true } })).status,
      200,
      'password sign-in cannot be turned back on',
    );
    const updates = (await auditLog(h, session)).filter((e) => e.action === 'user.password_sign_in.update');
    // Newest first.
    assert.deepEqual(
      updates.map((e) => e.metadata.enabled),
      [true, false],
      'the password sign-in changes are not audited newest first with their new value',
    );
    for (const entry of updates)
      assert.equal(entry.actorId, user.id, 'a password sign-in change is audited as by someone else');
  });

  test('applies to the user who set it only', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    await registerPasskey(h, session, newAuthenticator());
    assert.equal(
      (await h.request('PUT', SWITCH, { session, body: { enabled: false } })).status,
      200,
      'password sign-in cannot be turned off',
    );
    const colleague = await makeUser(h, tenant.id);
    assert.equal(
      (await passwordLogin(h, colleague.email, colleague.password)).status,
      200,
      'turning password sign-in off also locked out a colleague',
    );
  });

  test('a MEMBER may turn it off and on for themselves', async () => {
    const { user, session } = await makeSignedInTenant(h, { role: 'MEMBER' });
    await registerPasskey(h, session, newAuthenticator());
    const off = await h.request('PUT', SWITCH, { session, body: { enabled: false } });
    assert.equal(off.status, 200, off.text);
    assertProblem(await passwordLogin(h, user.email, user.password), 403, 'password_sign_in_disabled');
    assert.equal(
      (await h.request('PUT', SWITCH, { session, body: { enabled: true } })).status,
      200,
      'a member cannot turn password sign-in back on',
    );
  });

  test('needs a session and its CSRF token, and a boolean', async () => {
    const { session } = await makeSignedInTenant(h);
    await registerPasskey(h, session, newAuthenticator());
    assertProblem(await h.request('GET', SWITCH), 401, 'unauthenticated');
    assertProblem(await h.request('PUT', SWITCH, { body: { enabled: false } }), 401, 'unauthenticated');
    assertProblem(
      await h.request('PUT', SWITCH, { headers: { cookie: session.cookie }, body: { enabled: false } }),
      403,
      'csrf_failed',
    );
    for (const body of [{}, { enabled: 'false' }, { enabled: false, extra: 1 }]) {
      assertProblem(await h.request('PUT', SWITCH, { session, body }), 400, 'validation_failed');
    }
    assert.deepEqual(
      (await h.request('GET', SWITCH, { session })).body,
      { enabled: true },
      'a refused change turned password sign-in off',
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
