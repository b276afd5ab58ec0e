import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type WebAuthnCredential,
} from '@simplewebauthn/server';
import { InvalidStateError, SoftAuthenticator } from '../helpers/authenticator.js';

// The software authenticator checked against SimpleWebAuthn itself, with no server in between:
// if these pass, a failure in the API tests is the server's, not the test authenticator's.

const ORIGIN = 'https://hub.example.com';
const RP_ID = 'hub.example.com';
const ICLOUD = 'fbfc3007-154e-4ecc-8c0b-6e020557d7bd';

const creationOptions = (excludeCredentials: { id: string }[] = []) =>
  generateRegistrationOptions({
    rpName: 'hubgate',
    rpID: RP_ID,
    userName: 'someone@example.com',
    attestationType: 'none',
    excludeCredentials,
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    supportedAlgorithmIDs: [-7, -257],
  });

async function registerAndVerify(authenticator: SoftAuthenticator) {
  const options = await creationOptions();
  const response = authenticator.register(options);
  const verified = await verifyRegistrationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: RP_ID,
  });
  assert.ok(verified.verified && verified.registrationInfo);
  return { options, response, info: verified.registrationInfo };
}

async function verifyLogin(
  authenticator: SoftAuthenticator,
  credential: WebAuthnCredential,
  overrides: Parameters<SoftAuthenticator['authenticate']>[1] = {},
) {
  const options = await generateAuthenticationOptions({ rpID: RP_ID, userVerification: 'preferred' });
  const response = authenticator.authenticate(options, overrides);
  const result = await verifyAuthenticationResponse({
    response,
    expectedChallenge: options.challenge,
    expectedOrigin: ORIGIN,
    expectedRPID: RP_ID,
    credential,
  });
  return { response, result };
}

describe('the software authenticator, checked by @simplewebauthn/server', () => {
  test('registers an ES256 credential with attestation "none" that verifies, carrying its AAGUID and flags', async () => {
    const authenticator = new SoftAuthenticator({
      origin: ORIGIN,
      aaguid: ICLOUD,
      backupEligible: true,
      backedUp: true,
    });
    const { options, response, info } = await registerAndVerify(authenticator);
    assert.equal(info.fmt, 'none');
    assert.equal(info.aaguid, ICLOUD);
    assert.equal(info.credential.id, response.id);
    assert.equal(info.credential.counter, 0);
    assert.equal(info.credentialDeviceType, 'multiDevice');
    assert.equal(info.credentialBackedUp, true);
    assert.equal(info.userVerified, true);
    assert.equal(info.rpID, RP_ID);
    assert.deepEqual(response.response.transports, ['internal']);
    assert.equal(authenticator.credentials[0]?.userHandle, options.user.id);
  });

  test('a single-device credential says so', async () => {
    const { info } = await registerAndVerify(new SoftAuthenticator({ origin: ORIGIN }));
    assert.equal(info.credentialDeviceType, 'singleDevice');
    assert.equal(info.credentialBackedUp, false);
    assert.equal(info.aaguid, '00000000-0000-0000-0000-000000000000');
  });

  test('"packed" self-attestation verifies, and a flipped bit in its signature does not', async () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const options = await creationOptions();
    const packed = await verifyRegistrationResponse({
      response: authenticator.register(options, { fmt: 'packed' }),
      expectedChallenge: options.challenge,
      expectedOrigin: ORIGIN,
      expectedRPID: RP_ID,
    });
    assert.equal(packed.verified, true);
    const tampered = authenticator.register(await creationOptions(), { tamper: true });
    await assert.rejects(
      verifyRegistrationResponse({
        response: tampered,
        expectedChallenge: () => true,
        expectedOrigin: ORIGIN,
        expectedRPID: RP_ID,
      }).then((r) => assert.ok(r.verified, 'not verified')),
    );
  });

  test('registration overrides of origin, RP ID and challenge are what a verifier sees', async () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    for (const overrides of [
      { origin: 'https://evil.example' },
      { rpId: 'evil.example' },
      { challenge: 'AAAA' },
    ]) {
      const options = await creationOptions();
      await assert.rejects(
        verifyRegistrationResponse({
          response: authenticator.register(options, overrides),
          expectedChallenge: options.challenge,
          expectedOrigin: ORIGIN,
          expectedRPID: RP_ID,
        }),
        Error,
        JSON.stringify(overrides),
      );
    }
  });

  test('refuses a second credential for one in excludeCredentials, unless told to reuse an ID', async () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const { response } = await registerAndVerify(authenticator);
    const options = await creationOptions([{ id: response.id }]);
    assert.throws(() => authenticator.register(options), InvalidStateError);
    const again = authenticator.register(options, { credentialId: response.id });
    assert.equal(again.id, response.id);
    assert.equal(authenticator.credentials.length, 1);
  });

  test('signs assertions that verify, with the user handle and a counter that goes up', async () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const { options: creation, info } = await registerAndVerify(authenticator);
    const credential = { ...info.credential };
    for (const expected of [1, 2, 3]) {
      const { response, result } = await verifyLogin(authenticator, credential);
      assert.equal(result.verified, true);
      assert.equal(result.authenticationInfo.newCounter, expected);
      assert.equal(result.authenticationInfo.userVerified, true);
      assert.equal(response.response.userHandle, creation.user.id);
      assert.equal(response.id, info.credential.id);
      credential.counter = result.authenticationInfo.newCounter;
    }
  });

  test('a synced passkey (no counter) answers 0 every time, which verifies repeatedly', async () => {
    const authenticator = new SoftAuthenticator({
      origin: ORIGIN,
      keepsCounter: false,
      backupEligible: true,
    });
    const { info } = await registerAndVerify(authenticator);
    for (let i = 0; i < 3; i++) {
      const { result } = await verifyLogin(authenticator, info.credential);
      assert.equal(result.verified, true);
      assert.equal(result.authenticationInfo.newCounter, 0);
    }
  });

  test('each hostile override makes the assertion fail verification', async () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const { info } = await registerAndVerify(authenticator);
    const credential = { ...info.credential, counter: 5 };
    const hostile = [
      { tamper: true, counter: 10 },
      { origin: 'https://evil.example', counter: 11 },
      { rpId: 'evil.example', counter: 12 },
      { challenge: 'AAAA', counter: 13 },
      { type: 'webauthn.create', counter: 14 },
      { counter: 5 },
      { counter: 4 },
    ];
    for (const overrides of hostile) {
      await assert.rejects(
        verifyLogin(authenticator, credential, overrides).then(({ result }) => assert.ok(result.verified)),
        Error,
        JSON.stringify(overrides),
      );
    }
    const { result } = await verifyLogin(authenticator, credential, { counter: 6 });
    assert.equal(result.verified, true);
  });

  test('picks the credential asked for, else the newest one; can change or drop the user handle', async () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const first = await registerAndVerify(authenticator);
    const second = await registerAndVerify(authenticator);
    const options = await generateAuthenticationOptions({ rpID: RP_ID });
    assert.equal(authenticator.authenticate(options).id, second.response.id);
    const chosen = authenticator.authenticate(options, { credentialId: first.response.id });
    assert.equal(chosen.id, first.response.id);
    assert.equal(chosen.response.userHandle, first.options.user.id);
    assert.equal(
      authenticator.authenticate(options, { userHandle: 'bm9ib2R5' }).response.userHandle,
      'bm9ib2R5',
    );
    assert.equal(authenticator.authenticate(options, { userHandle: null }).response.userHandle, undefined);
    assert.ok(authenticator.privateKeyMaterial().length >= 2);
  });
});
