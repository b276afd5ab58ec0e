import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  type PublicKeyCredentialRequestOptionsJSON,
  verifyAuthenticationResponse,
} from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import { type AuditOrigin, recordAudit } from '../access/audit.js';
import { type SignedIn, startSignedInSession } from '../sign-in/sign-in.js';
import type { AppContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { findUserById } from '../tenants/tenants.js';
import { rememberChallenge, useChallenge } from './challenges.js';
import { CEREMONY_TIMEOUT_MS, relyingPartyOf } from './relying-party.js';
import { findPasskeyByCredential, handleOfUser, type PasskeyRow, recordPasskeyUse } from './store.js';

/**
 * The options for `navigator.credentials.get()` (contract §10): no `allowCredentials`, so the
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

/**
 * Sign-in with a passkey. Every refusal is the one `401 invalid_credentials` of contract §10, so
 * an answer says nothing about which check failed; the audit entry says it, for the tenant's admins.
 */
export async function signInWithPasskey(
  ctx: AppContext,
  origin: AuditOrigin,
  response: AuthenticationResponseJSON,
): Promise<SignedIn> {
  const rp = relyingPartyOf(ctx.config);
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
  const owner = await handleOfUser(ctx.db, passkey.user_id);
  if (owner === null || response.response.userHandle !== owner) return refuse('user_handle', passkey);

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
    return refuse(counterWentBack ? 'counter' : 'verification', passkey);
  }
  if (!verified.verified) return refuse('verification', passkey);

  const info = verified.authenticationInfo;
  const signedIn = await ctx.db.transaction().execute(async (trx) => {
    const used = await recordPasskeyUse(trx, passkey.id, {
      counter: info.newCounter,
      backedUp: info.credentialBackedUp,
      at: now,
    });
    // Another sign-in with this passkey moved the counter past this one since it was read.
    if (!used) return null;
    return startSignedInSession(trx, ctx, origin, user, 'passkey', { passkey: passkey.name });
  });
  return signedIn ?? refuse('counter', passkey);
}
