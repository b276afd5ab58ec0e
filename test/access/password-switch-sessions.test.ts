import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { authenticatorsFor, passkeySignIn, registerPasskey, sessionFrom } from '../helpers/authenticator.js';
import { makeSignedInTenant, signIn } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';

// Turning password sign-in off ends the user's other sessions that began with a password, at once
// (docs/api/authentication.md): whoever knew the password is signed out with it.

const PUBLIC_URL = 'https://hub.example.com';
const SWITCH = '/api/v1/auth/password-sign-in';

let h: Harness;
before(async () => {
  h = await startHarness({ env: { PUBLIC_URL, TRUST_PROXY: '1' } });
});
after(() => h.close());

const { newAuthenticator } = authenticatorsFor(PUBLIC_URL);

const sessionStatus = async (session: TestSession) =>
  (await h.request('GET', '/api/v1/auth/session', { session })).status;

test('turned off from a passkey session: the password sessions get 401 at once, the passkey session stays', async () => {
  const { user, session: first } = await makeSignedInTenant(h);
  const second = await signIn(h, user);
  const authenticator = newAuthenticator();
  await registerPasskey(h, first, authenticator);
  const signedIn = await passkeySignIn(h, authenticator, { address: '192.0.2.10' });
  assert.equal(signedIn.answer.status, 200, `the passkey sign-in failed: ${signedIn.answer.text}`);
  const passkey = sessionFrom(signedIn.answer);
  for (const s of [first, second, passkey])
    assert.equal(await sessionStatus(s), 200, 'a session does not work before');

  const off = await h.request('PUT', SWITCH, { session: passkey, body: { enabled: false } });
  assert.equal(off.status, 200, `turning password sign-in off answered ${off.status}: ${off.text}`);
  assert.equal(
    await sessionStatus(first),
    401,
    'a password session survived password sign-in being turned off',
  );
  assert.equal(await sessionStatus(second), 401, 'the other password session survived too');
  assert.equal(await sessionStatus(passkey), 200, 'the session that turned password sign-in off was ended');
  const [row] = await h.database.kysely
    .selectFrom('audit_log')
    .select('metadata')
    .where('target_id', '=', user.id)
    .where('action', '=', 'user.password_sign_in.update')
    .execute();
  assert.deepEqual(
    row?.metadata,
    { enabled: false, passwordSessionsEnded: 2 },
    'the switch is not audited with the password sessions it ended',
  );

  // Back on, a password signs in again, and that session is not ended by turning it on.
  const on = await h.request('PUT', SWITCH, { session: passkey, body: { enabled: true } });
  assert.equal(on.status, 200, `turning password sign-in on answered ${on.status}`);
  const third = await signIn(h, user);
  assert.equal(await sessionStatus(third), 200, 'a password session made after turning it on does not work');
});

test('turned off from a password session: that session stays, the other password sessions end, passkey ones stay', async () => {
  const { user, session: current } = await makeSignedInTenant(h);
  const other = await signIn(h, user);
  const authenticator = newAuthenticator();
  await registerPasskey(h, current, authenticator);
  const signedIn = await passkeySignIn(h, authenticator, { address: '192.0.2.11' });
  const passkey = sessionFrom(signedIn.answer);
  const colleague = await makeSignedInTenant(h);

  const off = await h.request('PUT', SWITCH, { session: current, body: { enabled: false } });
  assert.equal(off.status, 200, `turning password sign-in off answered ${off.status}: ${off.text}`);
  assert.equal(await sessionStatus(current), 200, 'the password session that turned it off was ended');
  assert.equal(await sessionStatus(other), 401, 'another password session survived');
  assert.equal(await sessionStatus(passkey), 200, 'a passkey session was ended');
  assert.equal(await sessionStatus(colleague.session), 200, "another user's password session was ended");
});
