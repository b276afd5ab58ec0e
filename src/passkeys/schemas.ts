import { Type, type Static } from 'typebox';
import { Nullable, StrictObject, Timestamp } from '../http/schemas.js';

/**
 * A passkey as the API shows it to its owner (docs/api/passkeys.md, plus `credentialId` and `userHandle`,
 * which are not secret: registration options hand both to the same user). A page needs them for the
 * WebAuthn Signal API, to tell the authenticator which passkeys still work here. Never the public key.
 */
export const PasskeyRecord = Type.Object({
  id: Type.String({ description: '`pky_…`' }),
  name: Type.String(),
  credentialId: Type.String({
    description: 'the WebAuthn credential ID, base64url, as `PublicKeyCredential.id`',
  }),
  userHandle: Type.String({ description: "the owner's WebAuthn user handle, base64url (one per user)" }),
  createdAt: Timestamp,
  lastUsedAt: Nullable(Timestamp),
  backupEligible: Type.Boolean({
    description: 'a synced (multi-device) passkey: its authenticator may copy it to the user’s other devices',
  }),
  backedUp: Type.Boolean({ description: 'the authenticator said it is backed up (synced) now' }),
  transports: Type.Array(Type.String(), { description: 'how the browser may reach the authenticator' }),
});
export type PasskeyRecord = Static<typeof PasskeyRecord>;

// What a browser's credential looks like (`PublicKeyCredential.toJSON()`, SimpleWebAuthn's
// `start…()`); browsers add fields over time, so only the parts read here are described, and the
// rest is let through to the verifier, which decides. Sizes bound what reaches it.
const B64 = (maxLength: number) => Type.String({ maxLength, pattern: '^[A-Za-z0-9_-]*={0,2}$' });
// WebAuthn caps a credential ID at 1023 bytes: 1364 base64url characters.
const credentialFields = {
  id: B64(1364),
  rawId: B64(1364),
  type: Type.Literal('public-key'),
  clientExtensionResults: Type.Object({}, { additionalProperties: true }),
  authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
};

export const RegistrationCredential = Type.Object(
  {
    ...credentialFields,
    response: Type.Object(
      {
        clientDataJSON: B64(8192),
        attestationObject: B64(65536),
        transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
      },
      { additionalProperties: true },
    ),
  },
  {
    additionalProperties: true,
    description: 'the credential `navigator.credentials.create()` made, as JSON',
  },
);

export const AuthenticationCredential = Type.Object(
  {
    ...credentialFields,
    response: Type.Object(
      {
        clientDataJSON: B64(8192),
        authenticatorData: B64(8192),
        signature: B64(2048),
        userHandle: Type.Optional(B64(128)),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true, description: 'the assertion `navigator.credentials.get()` made, as JSON' },
);

export const RegistrationVerifyBody = StrictObject({
  response: RegistrationCredential,
  // Shown in lists and the audit log: no control characters, and no bidirectional overrides that
  // would make a name read differently from what it is ("\u202egnp.exe").
  name: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      // Linear time whatever the length: one class repeated, and one look-ahead for a non-space.
      pattern: '^(?=[\\s\\S]*\\S)[^\\p{Cc}\\u202a-\\u202e\\u2066-\\u2069]+$',
      description: '1–100 characters, no control characters',
    }),
  ),
});

export const LoginVerifyBody = StrictObject({ response: AuthenticationCredential });

export const PasswordSignIn = StrictObject({ enabled: Type.Boolean() });
export type PasswordSignIn = Static<typeof PasswordSignIn>;

// The options are SimpleWebAuthn's JSON, passed to the browser as they are (docs/api/passkeys.md: "bare").
export const CreationOptions = Type.Object(
  {
    challenge: Type.String(),
    rp: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()) }),
    user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }),
    pubKeyCredParams: Type.Array(Type.Object({ type: Type.String(), alg: Type.Number() })),
  },
  { additionalProperties: true, description: 'PublicKeyCredentialCreationOptionsJSON' },
);
export const RequestOptions = Type.Object(
  { challenge: Type.String(), rpId: Type.Optional(Type.String()) },
  { additionalProperties: true, description: 'PublicKeyCredentialRequestOptionsJSON' },
);
