import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';
import type { Harness, TestResponse, TestSession } from './harness.js';

/**
 * A software authenticator and the browser around it, for API tests of passkeys (docs/api/passkeys.md).
 *
 * It does what `navigator.credentials.create()` / `.get()` and a platform authenticator do
 * together: P-256 (ES256) keys from node:crypto, attestation "none" (or "packed" self-attestation),
 * discoverable credentials that remember their user handle, and a signature counter. Its answers
 * are the JSON a browser's `PublicKeyCredential.toJSON()` gives. The overrides let a test play the
 * hostile or broken client: another origin, another RP ID, a challenge of its choosing, a forced
 * counter, a flipped signature bit.
 *
 * The private keys never leave this object except through `privateKeyMaterial()`, which exists only
 * so a test can check that none of it reached the server's answers or logs.
 */

export interface SoftAuthenticatorOptions {
  /** The origin the "browser" is on, e.g. `https://hub.example.com`. */
  origin: string;
  /** The RP ID used when the options name none (defaults to the origin's hostname). */
  rpId?: string;
  /** The authenticator model, as a UUID; all zeros (unknown model) by default. */
  aaguid?: string;
  /** BE flag: the credential may be synced to other devices. */
  backupEligible?: boolean;
  /** BS flag: the credential is synced now (only meaningful with `backupEligible`). */
  backedUp?: boolean;
  /** false: the signature counter stays 0, as synced passkeys do. */
  keepsCounter?: boolean;
  /** What `response.transports` says. */
  transports?: string[];
}

export interface StoredCredential {
  /** base64url credential ID */
  id: string;
  rpId: string;
  /** base64url user handle, as `options.user.id` gave it */
  userHandle: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  counter: number;
}

interface CommonOverrides {
  /** The origin put into clientDataJSON. */
  origin?: string;
  /** The RP ID whose hash goes into authenticatorData. */
  rpId?: string;
  /** The challenge put into clientDataJSON (base64url), instead of the options' one. */
  challenge?: string;
  /** `clientDataJSON.type`, instead of `webauthn.create` / `webauthn.get`. */
  type?: string;
  /** Flip a bit of the signature (the attestation statement's, for registration). */
  tamper?: boolean;
  /** Force the signature counter in authenticatorData to this value (and remember it). */
  counter?: number;
}

export interface RegisterOverrides extends CommonOverrides {
  /**
   * Reuse this credential ID (base64url) for the new key pair, as no honest authenticator would;
   * also skips the `excludeCredentials` check. A test uses it to register one ID twice.
   */
  credentialId?: string;
  /** Attestation format: "none" (default) or "packed" self-attestation (`tamper` implies "packed"). */
  fmt?: 'none' | 'packed';
  /** Ignore `excludeCredentials` (a real authenticator refuses to make a second credential). */
  ignoreExclude?: boolean;
}

export interface AuthenticateOverrides extends CommonOverrides {
  /** Which stored credential signs (base64url ID); otherwise the newest one for the RP ID. */
  credentialId?: string;
  /** The userHandle in the response (base64url); null leaves it out. */
  userHandle?: string | null;
}

/** What a browser throws when the authenticator already holds a credential in `excludeCredentials`. */
export class InvalidStateError extends Error {
  override name = 'InvalidStateError';
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

const b64url = (bytes: Uint8Array): string => isoBase64URL.fromBuffer(new Uint8Array(bytes));

function aaguidBytes(aaguid: string): Buffer {
  const hex = aaguid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not an AAGUID: ${aaguid}`);
  return Buffer.from(hex, 'hex');
}

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value >>> 0);
  return buffer;
}

/** The credential's public key as a COSE_Key (EC2, ES256, P-256), CBOR-encoded. */
function coseKey(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  if (!jwk.x || !jwk.y) throw new Error('not an EC public key');
  const key = new Map<number, number | Uint8Array>([
    [1, 2], // kty: EC2
    [3, -7], // alg: ES256
    [-1, 1], // crv: P-256
    [-2, new Uint8Array(Buffer.from(jwk.x, 'base64url'))],
    [-3, new Uint8Array(Buffer.from(jwk.y, 'base64url'))],
  ]);
  return isoCBOR.encode(key);
}

/** An ECDSA (DER) signature over `data`, with the low bit of its last byte flipped when asked. */
function signature(privateKey: KeyObject, data: Buffer, tamper: boolean | undefined): Buffer {
  const der = sign('sha256', data, privateKey);
  if (tamper) der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 0x01;
  return der;
}

export class SoftAuthenticator {
  readonly origin: string;
  readonly aaguid: string;
  readonly backupEligible: boolean;
  readonly backedUp: boolean;
  readonly keepsCounter: boolean;
  readonly transports: string[];
  private readonly defaultRpId: string;
  private readonly stored: StoredCredential[] = [];

  constructor(options: SoftAuthenticatorOptions) {
    this.origin = options.origin;
    this.defaultRpId = options.rpId ?? new URL(options.origin).hostname;
    this.aaguid = options.aaguid ?? '00000000-0000-0000-0000-000000000000';
    this.backupEligible = options.backupEligible ?? false;
    this.backedUp = this.backupEligible && (options.backedUp ?? false);
    this.keepsCounter = options.keepsCounter ?? true;
    this.transports = options.transports ?? ['internal'];
  }

  /** The credentials this authenticator holds, oldest first. */
  get credentials(): readonly StoredCredential[] {
    return this.stored;
  }

  /** Every form of every private key held, so a test can assert none of it leaked. */
  privateKeyMaterial(): string[] {
    return this.stored.flatMap((c) => {
      const jwk = c.privateKey.export({ format: 'jwk' });
      const pkcs8 = c.privateKey.export({ format: 'der', type: 'pkcs8' });
      return [
        jwk.d ?? '',
        pkcs8.toString('base64'),
        pkcs8.toString('base64url'),
        pkcs8.toString('hex'),
      ].filter(Boolean);
    });
  }

  /** Every form of every public key held (COSE, SPKI, the coordinates): what a list must not show. */
  publicKeyMaterial(): string[] {
    return this.stored.flatMap((c) => {
      const jwk = c.publicKey.export({ format: 'jwk' });
      const spki = c.publicKey.export({ format: 'der', type: 'spki' });
      return [
        b64url(coseKey(c.publicKey)),
        Buffer.from(coseKey(c.publicKey)).toString('base64'),
        spki.toString('base64'),
        spki.toString('base64url'),
        jwk.x ?? '',
        jwk.y ?? '',
      ].filter(Boolean);
    });
  }

  /** `navigator.credentials.create({ publicKey: options })`, then `.toJSON()`. */
  register(
    options: PublicKeyCredentialCreationOptionsJSON,
    overrides: RegisterOverrides = {},
  ): RegistrationResponseJSON {
    const rpId = options.rp.id ?? this.defaultRpId;
    if (!overrides.credentialId && !overrides.ignoreExclude) {
      const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
      if (this.stored.some((c) => c.rpId === rpId && excluded.has(c.id))) {
        throw new InvalidStateError('the authenticator already holds a credential in excludeCredentials');
      }
    }
    if (!options.pubKeyCredParams.some((p) => p.type === 'public-key' && p.alg === -7)) {
      throw new Error('the options do not allow ES256, the only algorithm this authenticator has');
    }

    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credentialId = overrides.credentialId
      ? Buffer.from(overrides.credentialId, 'base64url')
      : randomBytes(32);
    const counter = overrides.counter ?? 0;
    const credential: StoredCredential = {
      id: b64url(credentialId),
      rpId,
      userHandle: options.user.id,
      privateKey,
      publicKey,
      counter,
    };

    const clientDataJSON = Buffer.from(
      JSON.stringify({
        type: overrides.type ?? 'webauthn.create',
        challenge: overrides.challenge ?? options.challenge,
        origin: overrides.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
    const credentialIdLength = Buffer.alloc(2);
    credentialIdLength.writeUInt16BE(credentialId.length);
    const authData = Buffer.concat([
      sha256(overrides.rpId ?? rpId),
      Buffer.from([this.flags() | FLAG_AT]),
      uint32(counter),
      aaguidBytes(this.aaguid),
      credentialIdLength,
      credentialId,
      coseKey(publicKey),
    ]);

    const fmt = overrides.tamper ? 'packed' : (overrides.fmt ?? 'none');
    const attStmt = new Map<string, number | Uint8Array>();
    if (fmt === 'packed') {
      const sig = signature(privateKey, Buffer.concat([authData, sha256(clientDataJSON)]), overrides.tamper);
      attStmt.set('alg', -7);
      attStmt.set('sig', new Uint8Array(sig));
    }
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, number | Uint8Array>>([
        ['fmt', fmt],
        ['attStmt', attStmt],
        ['authData', new Uint8Array(authData)],
      ]),
    );

    // A second key pair under a reused ID replaces the first, as a real authenticator would.
    const existing = this.stored.findIndex((c) => c.id === credential.id);
    if (existing >= 0) this.stored.splice(existing, 1);
    this.stored.push(credential);

    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        attestationObject: b64url(attestationObject),
        transports: this.transports as RegistrationResponseJSON['response']['transports'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  /** `navigator.credentials.get({ publicKey: options })`, then `.toJSON()`. */
  authenticate(
    options: PublicKeyCredentialRequestOptionsJSON,
    overrides: AuthenticateOverrides = {},
  ): AuthenticationResponseJSON {
    const rpId = options.rpId ?? this.defaultRpId;
    const credential = this.pick(rpId, options, overrides.credentialId);

    const counter = overrides.counter ?? (this.keepsCounter ? credential.counter + 1 : 0);
    credential.counter = counter;

    const clientDataJSON = Buffer.from(
      JSON.stringify({
        type: overrides.type ?? 'webauthn.get',
        challenge: overrides.challenge ?? options.challenge,
        origin: overrides.origin ?? this.origin,
        crossOrigin: false,
      }),
    );
    const authData = Buffer.concat([
      sha256(overrides.rpId ?? rpId),
      Buffer.from([this.flags()]),
      uint32(counter),
    ]);
    const sig = signature(
      credential.privateKey,
      Buffer.concat([authData, sha256(clientDataJSON)]),
      overrides.tamper,
    );
    const userHandle = overrides.userHandle === undefined ? credential.userHandle : overrides.userHandle;

    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(sig),
        ...(userHandle === null ? {} : { userHandle }),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }

  private flags(): number {
    return FLAG_UP | FLAG_UV | (this.backupEligible ? FLAG_BE : 0) | (this.backedUp ? FLAG_BS : 0);
  }

  private pick(
    rpId: string,
    options: PublicKeyCredentialRequestOptionsJSON,
    credentialId: string | undefined,
  ): StoredCredential {
    if (credentialId) {
      const chosen = this.stored.find((c) => c.id === credentialId);
      if (!chosen) throw new Error(`no credential ${credentialId} in this authenticator`);
      return chosen;
    }
    const allowed = options.allowCredentials?.length
      ? new Set(options.allowCredentials.map((c) => c.id))
      : undefined;
    const candidates = this.stored.filter((c) => c.rpId === rpId && (!allowed || allowed.has(c.id)));
    const newest = candidates[candidates.length - 1];
    if (!newest) throw new Error(`NotAllowedError: no credential for ${rpId}`);
    return newest;
  }
}

// Through the API, as the web UI does it (docs/api/passkeys.md): options from the server, the
// authenticator in between, the answer posted back.

export const PASSKEYS = '/api/v1/auth/passkeys';

/** The session a sign-in answer started, as a browser keeps it (its cookies and CSRF token). */
export function sessionFrom(response: TestResponse): TestSession {
  return {
    cookie: response.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; '),
    csrfToken: response.body.csrfToken,
  };
}

/** Registers a passkey for the session's user; asserts 201 and returns the record and what went in. */
export async function registerPasskey(
  h: Harness,
  session: TestSession,
  authenticator: SoftAuthenticator,
  options: { name?: string; overrides?: RegisterOverrides } = {},
): Promise<{
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the record as the API answered it
  record: any;
  credentialId: string;
  creationOptions: PublicKeyCredentialCreationOptionsJSON;
}> {
  const offered = await h.request('POST', `${PASSKEYS}/registration/options`, { session, body: {} });
  assert.equal(
    offered.status,
    200,
    `asking for passkey registration options answered ${offered.status}: ${offered.text}`,
  );
  const response = authenticator.register(offered.body, options.overrides);
  const verified = await h.request('POST', `${PASSKEYS}/registration/verify`, {
    session,
    body: { response, ...(options.name === undefined ? {} : { name: options.name }) },
  });
  assert.equal(
    verified.status,
    201,
    `verifying a passkey registration answered ${verified.status}: ${verified.text}`,
  );
  return { record: verified.body, credentialId: response.id, creationOptions: offered.body };
}

/**
 * A passkey sign-in from `address` (via X-Forwarded-For, the harness trusting one proxy): request
 * options, the authenticator's assertion, the verify answer — which the caller checks.
 */
export async function passkeySignIn(
  h: Harness,
  authenticator: SoftAuthenticator,
  options: { address?: string; overrides?: AuthenticateOverrides; headers?: Record<string, string> } = {},
): Promise<{
  requestOptions: PublicKeyCredentialRequestOptionsJSON;
  response: AuthenticationResponseJSON;
  answer: TestResponse;
}> {
  const headers = { ...(options.address ? { 'x-forwarded-for': options.address } : {}), ...options.headers };
  const offered = await h.request('POST', `${PASSKEYS}/login/options`, { headers, body: {} });
  assert.equal(
    offered.status,
    200,
    `asking for passkey sign-in options answered ${offered.status}: ${offered.text}`,
  );
  const response = authenticator.authenticate(offered.body, options.overrides);
  const answer = await h.request('POST', `${PASSKEYS}/login/verify`, { headers, body: { response } });
  return { requestOptions: offered.body, response, answer };
}

/**
 * Authenticators for one origin, each remembered, so the last test of a suite can look for every
 * key it made in every response and log.
 */
export function authenticatorsFor(origin: string) {
  const made: SoftAuthenticator[] = [];
  const newAuthenticator = (extra: Partial<ConstructorParameters<typeof SoftAuthenticator>[0]> = {}) => {
    const authenticator = new SoftAuthenticator({ origin, ...extra });
    made.push(authenticator);
    return authenticator;
  };
  return { made, newAuthenticator };
}

/** Every session token a response set: each must appear in that one response only, and in no log. */
export const sessionTokens = (h: Harness): string[] =>
  [
    ...new Set(h.responses().flatMap((r) => [...r.matchAll(/svc_access=([^;\s]+)/g)].map((m) => m[1] ?? ''))),
  ].filter(Boolean);
