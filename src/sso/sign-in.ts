import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { signInScopeOf } from '../access/scope.js';
import type { SsoConfig } from '../config.js';
import type { AppContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { startSignedInSession, type SignedIn } from '../sign-in/sign-in.js';
import { findUserForSignIn } from '../tenants/tenants.js';
import { TokenRefused, type Acceptor } from './kerberos.js';

// A SPNEGO token is base64; a Kerberos ticket with a large PAC (many groups) runs to about 12 KB of
// it, which is also what Node lets a header line hold before this is reached.
const TOKEN = /^[A-Za-z0-9+/]{1,16000}={0,2}$/;

const PRINCIPAL_NAME = /^[A-Za-z0-9._+-]{1,64}$/;

type Refusal = 'token' | 'realm' | 'no_user';

/**
 * Sign-in with the Kerberos ticket the browser sent (docs/operators/sso.md). The principal `name@REALM` is
 * the user `name@SSO_SPNEGO_EMAIL_DOMAIN`; anything that does not verify, another realm, or no such
 * user is the one `401 invalid_credentials`, audited with the principal when there is one.
 */
export async function signInWithTicket(
  ctx: AppContext,
  sso: { config: SsoConfig; acceptor: Acceptor },
  origin: AuditOrigin,
  token: string,
): Promise<{ signedIn: SignedIn; mutualToken: string | null }> {
  const refuse = async (reason: Refusal, principal?: string, user?: { id: string; tenantId: string }) => {
    await recordAudit(ctx.db, origin, {
      action: 'sign_in.failure',
      tenantId: user?.tenantId ?? null,
      targetType: user ? 'user' : undefined,
      targetId: user?.id,
      metadata: { method: 'sso', reason, ...(principal && { principal }) },
    });
    return new HttpProblem('invalid_credentials', 'Single sign-on did not sign you in.');
  };

  if (!TOKEN.test(token)) throw await refuse('token');
  let accepted;
  try {
    accepted = await sso.acceptor.accept(token);
  } catch (error) {
    if (error instanceof TokenRefused) throw await refuse('token');
    throw error;
  }

  const at = accepted.principal.lastIndexOf('@');
  const name = accepted.principal.slice(0, at);
  const realm = accepted.principal.slice(at + 1);
  if (at <= 0 || (sso.config.realm !== null && realm !== sso.config.realm))
    throw await refuse('realm', accepted.principal);
  // One principal, one account: only a one-part ASCII name maps to an address. Trimming or Unicode
  // case folding would let other principals (" kate", "\u212Aate") reach kate@…; ASCII case does
  // not count, as in Active Directory and in the addresses themselves.
  if (!PRINCIPAL_NAME.test(name)) throw await refuse('no_user', accepted.principal);
  const user = await findUserForSignIn(ctx, `${name.toLowerCase()}@${sso.config.emailDomain}`);
  if (!user) throw await refuse('no_user', accepted.principal);

  // The ticket verified and names this user: their tenant is the one this sign-in acts for.
  const scope = signInScopeOf(user);
  const signedIn = await ctx.db
    .transaction()
    .execute((trx) =>
      startSignedInSession(trx, ctx, scope, origin, user, 'sso', { principal: accepted.principal }),
    );
  return { signedIn, mutualToken: accepted.response };
}
