import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import {
  authenticatorsFor,
  InvalidStateError,
  PASSKEYS,
  registerPasskey,
  sessionTokens,
} from '../helpers/authenticator.js';
import { assertNoLeak, makeSignedInTenant, makeUser, signIn } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';

const PUBLIC_URL = 'https://hub.example.com';
const RP_ID = 'hub.example.com';
const ENV = { PUBLIC_URL, TRUST_PROXY: '1' };
const OPTIONS = `${PASSKEYS}/registration/options`;
const VERIFY = `${PASSKEYS}/registration/verify`;
const MINUTE = 60_000;

const { made, newAuthenticator } = authenticatorsFor(PUBLIC_URL);

const offer = async (h: Harness, session: TestSession) => {
  const r = await h.request('POST', OPTIONS, { session, body: {} });
  assert.equal(r.status, 200, r.text);
  return r.body;
};

const listOf = async (h: Harness, session: TestSession) => {
  const r = await h.request('GET', PASSKEYS, { session });
  assert.equal(r.status, 200, r.text);
  return r.body.data as { id: string; name: string }[];
};

function assertProblem(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.code, code, response.text);
  assert.match(
    response.headers.get('content-type') ?? '',
    /^application\/problem\+json/,
    `a ${code} problem is not served as application/problem+json`,
  );
}

describe('passkey registration options', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test('are the bare creation options of docs/api/passkeys.md: RP ID, ES256 and RS256, resident key required, UV preferred', async () => {
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('POST', OPTIONS, { session, body: {} });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('cache-control'), 'no-store', 'registration options may be cached');
    const options = r.body;
    assert.equal(typeof options.challenge, 'string', 'the registration options carry no challenge');
    assert.ok(isoBase64URL.toBuffer(options.challenge).length >= 16, 'a challenge of at least 16 bytes');
    assert.equal(options.rp.id, RP_ID, "the registration options name another RP ID than the hub's host");
    assert.equal(typeof options.rp.name, 'string', 'the registration options carry no RP name');
    assert.deepEqual(
      options.pubKeyCredParams.map((p: { alg: number }) => p.alg).sort(),
      [-257, -7],
      'the registration options do not offer exactly ES256 and RS256',
    );
    assert.ok(
      options.pubKeyCredParams.every((p: { type: string }) => p.type === 'public-key'),
      'a registration option offers a credential type other than public-key',
    );
    assert.equal(
      options.authenticatorSelection.residentKey,
      'required',
      'the registration options do not require a discoverable credential',
    );
    assert.equal(
      options.authenticatorSelection.userVerification,
      'preferred',
      'the registration options do not prefer user verification',
    );
    assert.deepEqual(
      options.excludeCredentials ?? [],
      [],
      'a user with no passkey is told to exclude some credential',
    );
    assert.ok(options.challenge !== (await offer(h, session)).challenge, 'a new challenge every time');
  });

  test('accept no body at all, as well as {}', async () => {
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('POST', OPTIONS, { session });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.rp.id, RP_ID, 'registration options without a body name another RP ID');
  });

  test('the user handle is random, stable for one user across calls and sessions, and differs between users', async () => {
    const { tenant, user, session } = await makeSignedInTenant(h);
    const first = await offer(h, session);
    const second = await offer(h, session);
    const again = await offer(h, await signIn(h, user));
    assert.equal(first.user.id, second.user.id, 'the user handle changes between two calls');
    assert.equal(first.user.id, again.user.id, 'the user handle changes between two sessions of one user');
    const handle = isoBase64URL.toBuffer(first.user.id);
    assert.ok(handle.length >= 16 && handle.length <= 64, `a user handle of ${handle.length} bytes`);
    const decoded = Buffer.from(handle).toString('latin1');
    assert.ok(!decoded.includes(user.id) && !decoded.includes(user.email), 'the handle is not the user ID');

    const other = await makeUser(h, tenant.id);
    const theirs = await offer(h, await signIn(h, other));
    assert.notEqual(theirs.user.id, first.user.id, 'two users get the same user handle');
  });

  test("excludeCredentials lists exactly the user's own passkeys, so an authenticator will not make a second", async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const authenticator = newAuthenticator();
    const a = await registerPasskey(h, session, authenticator);
    const b = await registerPasskey(h, session, newAuthenticator());
    // Someone else's passkey in the same tenant is not listed.
    const colleague = await makeUser(h, tenant.id);
    await registerPasskey(h, await signIn(h, colleague), newAuthenticator());

    const options = await offer(h, session);
    assert.deepEqual(
      options.excludeCredentials.map((c: { id: string }) => c.id).sort(),
      [a.credentialId, b.credentialId].sort(),
      "excludeCredentials does not list exactly the user's own passkeys",
    );
    assert.ok(
      options.excludeCredentials.every((c: { type: string }) => c.type === 'public-key'),
      'excludeCredentials lists something other than public-key credentials',
    );
    assert.throws(
      () => authenticator.register(options),
      InvalidStateError,
      'the authenticator makes a second passkey though its credential is excluded',
    );
  });

  test('need a session (401) and its CSRF token (403 csrf_failed), also on verify', async () => {
    const { session } = await makeSignedInTenant(h);
    assertProblem(await h.request('POST', OPTIONS, { body: {} }), 401, 'unauthenticated');
    assertProblem(await h.request('POST', VERIFY, { body: {} }), 401, 'unauthenticated');
    const cookieOnly = { headers: { cookie: session.cookie } };
    assertProblem(await h.request('POST', OPTIONS, { ...cookieOnly, body: {} }), 403, 'csrf_failed');
    assertProblem(await h.request('POST', OPTIONS, cookieOnly), 403, 'csrf_failed');
    assertProblem(
      await h.request('POST', OPTIONS, { headers: { ...cookieOnly.headers, 'x-csrf-token': 'x' }, body: {} }),
      403,
      'csrf_failed',
    );

    // Verify: the CSRF check comes before the body is looked at (the order of docs/api/errors.md).
    const options = await offer(h, session);
    const response = newAuthenticator().register(options);
    assertProblem(await h.request('POST', VERIFY, { ...cookieOnly, body: { response } }), 403, 'csrf_failed');
    // A page of another site, even with the token, is refused too.
    assertProblem(
      await h.request('POST', VERIFY, {
        session,
        headers: { origin: 'https://evil.example' },
        body: { response },
      }),
      403,
      'csrf_failed',
    );
    assert.deepEqual(await listOf(h, session), [], 'nothing was registered');
  });
});

describe('passkey registration', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: ENV });
  });
  after(() => h.close());

  test('answers 201 with the record of docs/api/passkeys.md, named "Passkey" when the AAGUID says nothing', async () => {
    const { session } = await makeSignedInTenant(h);
    const startedAt = Date.now();
    const options = await offer(h, session);
    const authenticator = newAuthenticator();
    const response = authenticator.register(options);
    const r = await h.request('POST', VERIFY, { session, body: { response } });
    assert.equal(r.status, 201, r.text);
    const record = r.body;
    assert.deepEqual(
      Object.keys(record).sort(),
      [
        'backedUp',
        'backupEligible',
        'createdAt',
        'credentialId',
        'id',
        'lastUsedAt',
        'name',
        'transports',
        'userHandle',
      ],
      'the new passkey record has missing or extra fields',
    );
    assert.equal(
      record.credentialId,
      response.id,
      "the record's credential ID is not the one the authenticator made",
    );
    assert.equal(record.userHandle, options.user.id, "the record's user handle is not the one offered");
    assert.match(record.id, /^pky_[0-9A-Za-z]+$/, "the record's ID is not a pky_ ID");
    assert.equal(record.name, 'Passkey', 'a passkey with an unknown AAGUID is not named "Passkey"');
    assert.equal(record.lastUsedAt, null, 'a new passkey says it was already used');
    assert.equal(record.backupEligible, false, 'a single-device passkey is recorded as backup eligible');
    assert.equal(record.backedUp, false, 'a single-device passkey is recorded as backed up');
    assert.deepEqual(
      record.transports,
      ['internal'],
      'the passkey lost the transport its authenticator reported',
    );
    const createdAt = Date.parse(record.createdAt);
    assert.ok(createdAt >= startedAt - 1000 && createdAt <= Date.now() + 1000, record.createdAt);
    // The answer never shows the public key.
    for (const material of authenticator.publicKeyMaterial())
      assert.ok(!r.text.includes(material), 'the registration answer shows the public key');

    const listed = await listOf(h, session);
    assert.deepEqual(listed, [record], 'the list does not show exactly the passkey just registered');
  });

  test('keeps the name given (1–100 characters) and refuses an empty or longer one with 400', async () => {
    const { session } = await makeSignedInTenant(h);
    const named = await registerPasskey(h, session, newAuthenticator(), { name: 'Work laptop' });
    assert.equal(named.record.name, 'Work laptop', 'the name given to a passkey was not kept');
    const longest = 'x'.repeat(100);
    assert.equal(
      (await registerPasskey(h, session, newAuthenticator(), { name: longest })).record.name,
      longest,
      'a 100-character passkey name was not kept',
    );

    // Empty, too long, not text, blank, or with characters that make a name read as something
    // else in a list or the audit log (controls, bidirectional overrides).
    for (const name of [
      '',
      'y'.repeat(101),
      42,
      '   ',
      'a\u0007b',
      'line\nbreak',
      '\u202egnp.exe',
      'x\u2066y',
    ]) {
      const options = await offer(h, session);
      const response = newAuthenticator().register(options);
      const r = await h.request('POST', VERIFY, { session, body: { response, name } });
      assertProblem(r, 400, 'validation_failed');
    }
    // An unknown field is refused too (docs/api/errors.md).
    const response = newAuthenticator().register(await offer(h, session));
    assertProblem(
      await h.request('POST', VERIFY, { session, body: { response, nickname: 'x' } }),
      400,
      'validation_failed',
    );
    assert.equal((await listOf(h, session)).length, 2, 'a refused name still registered a passkey');
  });

  test('names a passkey after its provider where the AAGUID tells', async () => {
    const { session } = await makeSignedInTenant(h);
    const table: [string, string][] = [
      ['fbfc3007-154e-4ecc-8c0b-6e020557d7bd', 'iCloud Keychain'],
      ['ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4', 'Google Password Manager'],
      ['08987058-cadc-4b81-b6e1-30de50dcbe96', 'Windows Hello'],
      ['bada5566-a7aa-401f-bd96-45619a55120d', '1Password'],
      ['d548826e-79b4-db40-a3d8-11116f7e8349', 'Bitwarden'],
      ['adce0002-35bc-c60a-648b-0b25f1f05503', 'Chrome on Mac'],
      ['0b1d3a6f-8c5e-4f2a-9d7b-1e2f3a4b5c6d', 'Passkey'],
    ];
    for (const [aaguid, name] of table) {
      const { record } = await registerPasskey(h, session, newAuthenticator({ aaguid }));
      assert.equal(record.name, name, aaguid);
    }
    // A name given wins over the provider's.
    const named = await registerPasskey(h, session, newAuthenticator({ aaguid: table[0]?.[0] }), {
      name: 'My iPhone',
    });
    assert.equal(named.record.name, 'My iPhone', "the provider's name replaced the name given");
  });

  test('records backup eligibility and state as the authenticator reports them', async () => {
    const { session } = await makeSignedInTenant(h);
    const synced = await registerPasskey(
      h,
      session,
      newAuthenticator({ backupEligible: true, backedUp: true, transports: ['hybrid', 'internal'] }),
    );
    assert.equal(synced.record.backupEligible, true, 'a synced passkey is not recorded as backup eligible');
    assert.equal(synced.record.backedUp, true, 'a backed-up passkey is not recorded as backed up');
    assert.deepEqual(
      [...synced.record.transports].sort(),
      ['hybrid', 'internal'],
      'the passkey lost the transports its authenticator reported',
    );
    const notYet = await registerPasskey(h, session, newAuthenticator({ backupEligible: true }));
    assert.equal(notYet.record.backupEligible, true, 'a backup-eligible passkey is not recorded as such');
    assert.equal(notYet.record.backedUp, false, 'a passkey not yet backed up is recorded as backed up');
  });

  test('stores nothing that could sign', async () => {
    const { user, session } = await makeSignedInTenant(h);
    const authenticator = newAuthenticator();
    await registerPasskey(h, session, authenticator);
    const rows = await h.database.kysely
      .selectFrom('passkeys')
      .selectAll()
      .where('user_id', '=', user.id)
      .execute();
    assert.equal(rows.length, 1, 'registering one passkey did not store exactly one row');
    const stored = JSON.stringify(rows);
    for (const secret of authenticator.privateKeyMaterial())
      assert.ok(!stored.includes(secret), 'a stored passkey row holds private key material');
  });

  test('a refused registration answers 400 validation_failed and keeps nothing', async () => {
    const { tenant, user, session } = await makeSignedInTenant(h);
    const secondSession = await signIn(h, user);
    const colleagueSession = await signIn(h, await makeUser(h, tenant.id));
    const authenticator = newAuthenticator();

    const attempt = async (name: string, makeResponse: () => Promise<unknown>) => {
      const r = await h.request('POST', VERIFY, { session, body: { response: await makeResponse() } });
      assert.equal(r.status, 400, `${name}: ${r.text}`);
      assert.equal(r.body.code, 'validation_failed', name);
    };

    await attempt('bad attestation signature', async () =>
      authenticator.register(await offer(h, session), { tamper: true }),
    );
    await attempt('another origin', async () =>
      authenticator.register(await offer(h, session), { origin: 'https://evil.example' }),
    );
    await attempt('another scheme', async () =>
      authenticator.register(await offer(h, session), { origin: 'http://hub.example.com' }),
    );
    await attempt('another RP ID', async () =>
      authenticator.register(await offer(h, session), { rpId: 'evil.example' }),
    );
    await attempt('a sign-in ceremony', async () =>
      authenticator.register(await offer(h, session), { type: 'webauthn.get' }),
    );
    await attempt('an unknown challenge', async () =>
      authenticator.register(await offer(h, session), {
        challenge: isoBase64URL.fromBuffer(new Uint8Array(randomBytes(32))),
      }),
    );
    await attempt('a challenge offered to another session of the same user', async () =>
      authenticator.register(await offer(h, secondSession)),
    );
    await attempt('a challenge offered to another user', async () =>
      authenticator.register(await offer(h, colleagueSession)),
    );
    await attempt('a sign-in challenge', async () => {
      const login = await h.request('POST', `${PASSKEYS}/login/options`, { body: {} });
      assert.equal(login.status, 200, login.text);
      return authenticator.register(await offer(h, session), { challenge: login.body.challenge });
    });
    await attempt('an attestation object that is not one', async () => {
      const response = authenticator.register(await offer(h, session));
      return {
        ...response,
        response: { ...response.response, attestationObject: isoBase64URL.fromBuffer(new Uint8Array(64)) },
      };
    });

    assert.deepEqual(await listOf(h, session), [], 'none of them was kept');
    assert.deepEqual(
      await listOf(h, secondSession),
      [],
      'a refused registration appears in another session of the same user',
    );
    assert.deepEqual(await listOf(h, colleagueSession), [], 'a refused registration appears for a colleague');
  });

  test('a challenge is single-use: a second credential made for the same options is refused', async () => {
    const { session } = await makeSignedInTenant(h);
    const options = await offer(h, session);
    const first = await h.request('POST', VERIFY, {
      session,
      body: { response: newAuthenticator().register(options) },
    });
    assert.equal(first.status, 201, first.text);
    const second = await h.request('POST', VERIFY, {
      session,
      body: { response: newAuthenticator().register(options) },
    });
    assertProblem(second, 400, 'validation_failed');
    assert.equal((await listOf(h, session)).length, 1, 'a second credential for one challenge was kept');
  });

  test('a challenge is good for 5 minutes', async () => {
    const { session } = await makeSignedInTenant(h);
    const issuedAfter = Date.now();
    const fresh = await offer(h, session);
    const stale = await offer(h, session);
    const issuedBefore = Date.now();
    try {
      h.setNow(new Date(issuedAfter + 4 * MINUTE + 50_000));
      const inTime = await h.request('POST', VERIFY, {
        session,
        body: { response: newAuthenticator().register(fresh) },
      });
      assert.equal(inTime.status, 201, inTime.text);
      h.setNow(new Date(issuedBefore + 5 * MINUTE + 1000));
      const late = await h.request('POST', VERIFY, {
        session,
        body: { response: newAuthenticator().register(stale) },
      });
      assertProblem(late, 400, 'validation_failed');
    } finally {
      h.setNow(null);
    }
    assert.equal((await listOf(h, session)).length, 1, 'a credential made for a stale challenge was kept');
  });

  test('the same credential ID registered again answers 409 conflict, for the same user or anyone else', async () => {
    const { session } = await makeSignedInTenant(h);
    const authenticator = newAuthenticator();
    const { credentialId } = await registerPasskey(h, session, authenticator);

    const again = await h.request('POST', VERIFY, {
      session,
      body: { response: authenticator.register(await offer(h, session), { credentialId }) },
    });
    assertProblem(again, 409, 'conflict');

    const stranger = await makeSignedInTenant(h);
    const theirs = await h.request('POST', VERIFY, {
      session: stranger.session,
      body: {
        response: newAuthenticator().register(await offer(h, stranger.session), { credentialId }),
      },
    });
    assertProblem(theirs, 409, 'conflict');
    assert.equal(
      (await listOf(h, session)).length,
      1,
      "a refused duplicate credential changed the owner's passkeys",
    );
    assert.deepEqual(
      await listOf(h, stranger.session),
      [],
      "another user's duplicate credential ID was kept for them",
    );
  });

  test('a credential ID over 1023 bytes, or not the one the authenticator signed, is refused with 400', async () => {
    const { session } = await makeSignedInTenant(h);
    // 3,000 bytes once made the unique index fail (a 500); 1,024 was kept and could never sign in.
    for (const bytes of [1024, 3000]) {
      const credentialId = isoBase64URL.fromBuffer(new Uint8Array(randomBytes(bytes)));
      const response = newAuthenticator().register(await offer(h, session), { credentialId });
      assertProblem(
        await h.request('POST', VERIFY, { session, body: { response } }),
        400,
        'validation_failed',
      );
      // The same with the browser's copy of the ID short enough to pass the schema.
      const short = { ...response, id: 'AAAA', rawId: 'AAAA' };
      assertProblem(
        await h.request('POST', VERIFY, { session, body: { response: short } }),
        400,
        'validation_failed',
      );
    }
    // 1023 bytes is the most WebAuthn allows, and it is kept.
    const longest = isoBase64URL.fromBuffer(new Uint8Array(randomBytes(1023)));
    const { record } = await registerPasskey(h, session, newAuthenticator(), {
      overrides: { credentialId: longest },
    });
    assert.equal(record.credentialId, longest, 'a 1023-byte credential ID was not kept whole');
    assert.equal((await listOf(h, session)).length, 1, 'a refused credential ID was kept');
  });

  test('keeps only the transports WebAuthn defines', async () => {
    const { session } = await makeSignedInTenant(h);
    const authenticator = newAuthenticator({ transports: ['hybrid', '<img src=x>', 'internal', 'hybrid'] });
    const { record } = await registerPasskey(h, session, authenticator);
    assert.deepEqual(record.transports, ['hybrid', 'internal'], 'unknown or repeated transports were kept');
  });

  test('an account holds at most 50 passkeys: the 51st is 409 conflict', async () => {
    const { session } = await makeSignedInTenant(h);
    for (let i = 0; i < 50; i++) await registerPasskey(h, session, newAuthenticator());
    const response = newAuthenticator().register(await offer(h, session));
    assertProblem(await h.request('POST', VERIFY, { session, body: { response } }), 409, 'conflict');
    const all = await h.request('GET', `${PASSKEYS}?limit=100`, { session });
    assert.equal(all.body.data.length, 50, 'a 51st passkey was kept, or one of the 50 lost');
  });

  test('a MEMBER may add passkeys of their own', async () => {
    const { session } = await makeSignedInTenant(h, { role: 'MEMBER' });
    const { record } = await registerPasskey(h, session, newAuthenticator(), { name: 'Member key' });
    assert.equal(record.name, 'Member key', "a member's passkey lost the name given");
    assert.deepEqual(
      await listOf(h, session),
      [record],
      "a member's list does not show exactly their passkey",
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
