import {
  generateAuthenticationOptions,
  verifyAuthenticationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialRequestOptionsJSON,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { signInScopeOf } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { startSignedInSession, type SignedIn } from '../sign-in/sign-in.js';
import { findUserById } from '../tenants/tenants.js';
import { rememberChallenge, useChallenge } from './challenges.js';
import { CEREMONY_TIMEOUT_MS, relyingPartyOf } from './relying-party.js';
import { findPasskeyByCredential, recordPasskeyUse, type PasskeyRow } from './store.js';

/**
 * The options for `navigator.credentials.get()` (docs/api/passkeys.md): no `allowCredentials`, so the
 * browser offers the passkeys it holds for this site and no e-mail address is asked first.
 */
export async function signInOptions(ctx: AppContext): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const options = await generateAuthenticationOptions({
    rpID: relyingPartyOf(ctx.config).id,
    userVerification: 'preferred',
    timeout: CEREMONY_TIMEOUT_MS,
  });
  await rememberChallenge(ctx.db, options.challenge, 'authentication', null, ctx.now());
  return options;
}

type Refusal = 'challenge' | 'unknown_credential' | 'user_handle' | 'verification' | 'counter';

/** Checks the assertion against the passkey: its new counter state, or why it was refused. */
async function verifyAssertion(
  ctx: AppContext,
  response: AuthenticationResponseJSON,
  challenge: string,
  passkey: PasskeyRow,
): Promise<{ newCounter: number; credentialBackedUp: boolean } | Refusal> {
  const rp = relyingPartyOf(ctx.config);
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: {
        id: passkey.credential_id,
        publicKey: isoBase64URL.toBuffer(passkey.public_key),
        counter: Number(passkey.counter),
        transports: passkey.transports as never,
      },
      requireUserVerification: false,
    });
  } catch (error) {
    const counterWentBack = error instanceof Error && error.message.includes('counter');
    return counterWentBack ? 'counter' : 'verification';
  }
  return verified.verified ? verified.authenticationInfo : 'verification';
}

/**
 * Sign-in with a passkey. Every refusal is the one `401 invalid_credentials` of docs/api/passkeys.md, so
 * an answer says nothing about which check failed; the audit entry says it, for the tenant's admins.
 */
export async function signInWithPasskey(
  ctx: AppContext,
  origin: AuditOrigin,
  response: AuthenticationResponseJSON,
): Promise<SignedIn> {
  const now = origin.at;
  const refuse = async (reason: Refusal, passkey?: PasskeyRow): Promise<never> => {
    await recordAudit(ctx.db, origin, {
      action: 'sign_in.failure',
      tenantId: passkey?.tenant_id ?? null,
      targetType: passkey ? 'user' : undefined,
      targetId: passkey?.user_id,
      metadata: { method: 'passkey', reason, ...(passkey && { passkey: passkey.name }) },
    });
    throw new HttpProblem('invalid_credentials', 'This passkey cannot sign in here.');
  };

  const challenge = await useChallenge(ctx.db, response.response.clientDataJSON, 'authentication', null, now);
  if (!challenge) return refuse('challenge');
  const passkey = await findPasskeyByCredential(ctx.db, response.id);
  if (!passkey) return refuse('unknown_credential');
  const user = await findUserById(ctx.db, passkey.user_id);
  if (!user) return refuse('unknown_credential');
  // Sign-in names no user before the ceremony, so the authenticator must say whose credential it
  // is, and that must be the passkey's owner (WebAuthn §7.2, steps 6 and 7).
  const owner = user.webauthnUserId;
  if (owner === null || response.response.userHandle !== owner) return refuse('user_handle', passkey);

  const info = await verifyAssertion(ctx, response, challenge, passkey);
  if (typeof info === 'string') return refuse(info, passkey);
  // The passkey's signature verified: its owner's tenant is the one this sign-in acts for.
  const scope = signInScopeOf(user);
  const signedIn = await ctx.db.transaction().execute(async (trx) => {
    const used = await recordPasskeyUse(trx, scope, passkey.id, {
      counter: info.newCounter,
      backedUp: info.credentialBackedUp,
      at: now,
    });
    // Another sign-in with this passkey moved the counter past this one since it was read.
    if (!used) return null;
    return startSignedInSession(trx, ctx, scope, origin, user, 'passkey', { passkey: passkey.name });
  });
  return signedIn ?? refuse('counter', passkey);
}
