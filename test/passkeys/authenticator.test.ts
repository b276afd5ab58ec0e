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
  assert.ok(
    verified.verified && verified.registrationInfo,
    'a fresh registration from the software authenticator does not verify',
  );
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
    assert.equal(info.fmt, 'none', 'the registration is not attestation "none"');
    assert.equal(info.aaguid, ICLOUD, 'the registered credential lost its AAGUID');
    assert.equal(
      info.credential.id,
      response.id,
      'the verified credential ID is not the one the authenticator sent',
    );
    assert.equal(info.credential.counter, 0, 'a new credential does not start at counter 0');
    assert.equal(
      info.credentialDeviceType,
      'multiDevice',
      'a backup-eligible credential is not reported as multi-device',
    );
    assert.equal(info.credentialBackedUp, true, 'a backed-up credential is reported as not backed up');
    assert.equal(info.userVerified, true, 'the registration does not report user verification');
    assert.equal(info.rpID, RP_ID, 'the registration is verified for another RP ID');
    assert.deepEqual(
      response.response.transports,
      ['internal'],
      'the authenticator does not report the internal transport',
    );
    assert.equal(
      authenticator.credentials[0]?.userHandle,
      options.user.id,
      'the authenticator did not keep the user handle it was given',
    );
  });

  test('a single-device credential says so', async () => {
    const { info } = await registerAndVerify(new SoftAuthenticator({ origin: ORIGIN }));
    assert.equal(
      info.credentialDeviceType,
      'singleDevice',
      'a single-device credential is reported as multi-device',
    );
    assert.equal(info.credentialBackedUp, false, 'a single-device credential is reported as backed up');
    assert.equal(
      info.aaguid,
      '00000000-0000-0000-0000-000000000000',
      'an authenticator with no AAGUID reports one',
    );
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
    assert.equal(packed.verified, true, 'a "packed" self-attested registration does not verify');
    const tampered = authenticator.register(await creationOptions(), { tamper: true });
    await assert.rejects(
      verifyRegistrationResponse({
        response: tampered,
        expectedChallenge: () => true,
        expectedOrigin: ORIGIN,
        expectedRPID: RP_ID,
      }).then((r) => assert.ok(r.verified, 'not verified')),
      'a packed attestation with a flipped signature bit verifies',
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
    assert.throws(
      () => authenticator.register(options),
      InvalidStateError,
      'the authenticator makes a second credential for an excluded one',
    );
    const again = authenticator.register(options, { credentialId: response.id });
    assert.equal(again.id, response.id, 'the reused credential ID is not the one asked for');
    assert.equal(authenticator.credentials.length, 1, 'reusing a credential ID added a second credential');
  });

  test('signs assertions that verify, with the user handle and a counter that goes up', async () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const { options: creation, info } = await registerAndVerify(authenticator);
    const credential = { ...info.credential };
    for (const expected of [1, 2, 3]) {
      const { response, result } = await verifyLogin(authenticator, credential);
      assert.equal(result.verified, true, `sign-in ${expected}: the assertion does not verify`);
      assert.equal(
        result.authenticationInfo.newCounter,
        expected,
        `sign-in ${expected}: the signature counter did not go up by one`,
      );
      assert.equal(
        result.authenticationInfo.userVerified,
        true,
        `sign-in ${expected}: the assertion does not report user verification`,
      );
      assert.equal(
        response.response.userHandle,
        creation.user.id,
        `sign-in ${expected}: the assertion carries another user handle`,
      );
      assert.equal(
        response.id,
        info.credential.id,
        `sign-in ${expected}: the assertion names another credential`,
      );
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
      assert.equal(result.verified, true, `sign-in ${i + 1} of a synced passkey does not verify`);
      assert.equal(
        result.authenticationInfo.newCounter,
        0,
        `sign-in ${i + 1} of a synced passkey reports a counter other than 0`,
      );
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
        verifyLogin(authenticator, credential, overrides).then(({ result }) =>
          assert.ok(result.verified, 'the hostile assertion verifies'),
        ),
        Error,
        JSON.stringify(overrides),
      );
    }
    const { result } = await verifyLogin(authenticator, credential, { counter: 6 });
    assert.equal(
      result.verified,
      true,
      'an assertion with the next counter no longer verifies after the hostile ones',
    );
  });

  test('picks the credential asked for, else the newest one; can change or drop the user handle', async () => {
    const authenticator = new SoftAuthenticator({ origin: ORIGIN });
    const first = await registerAndVerify(authenticator);
    const second = await registerAndVerify(authenticator);
    const options = await generateAuthenticationOptions({ rpID: RP_ID });
    assert.equal(
      authenticator.authenticate(options).id,
      second.response.id,
      'without a choice, the authenticator does not answer with its newest credential',
    );
    const chosen = authenticator.authenticate(options, { credentialId: first.response.id });
    assert.equal(
      chosen.id,
      first.response.id,
      'the authenticator answers with another credential than the one asked for',
    );
    assert.equal(
      chosen.response.userHandle,
      first.options.user.id,
      "the chosen credential answers with another user's handle",
    );
    assert.equal(
      authenticator.authenticate(options, { userHandle: 'bm9ib2R5' }).response.userHandle,
      'bm9ib2R5',
      'the authenticator ignores the user handle it is told to send',
    );
    assert.equal(
      authenticator.authenticate(options, { userHandle: null }).response.userHandle,
      undefined,
      'the authenticator sends a user handle when told to drop it',
    );
    assert.ok(
      authenticator.privateKeyMaterial().length >= 2,
      'the authenticator exposes no private key material to check leaks against',
    );
  });
});
