import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { setSessionCookies } from '../access/cookies.js';
import { issueCsrfToken } from '../access/csrf.js';
import type { AppContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { ownTenant } from '../tenants/tenants.js';
import type { SignedIn } from './sign-in.js';

const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.String(),
  tenantId: Type.String(),
});

const TenantSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  entitlements: Type.Array(Type.String()),
});

/**
 * "The sign-in answer" of docs/api/authentication.md: what every way of signing in returns with its cookies
 * (password sign-in, first-run setup docs/operators/setup.md).
 */
export const SignInAnswer = Type.Object({
  user: UserSchema,
  tenant: TenantSchema,
  csrfToken: Type.String(),
  expiresAt: Type.String({ format: 'date-time' }),
  authMethod: Type.String(),
});
export type SignInAnswer = Static<typeof SignInAnswer>;

/**
 * A sign-in form posted from another site would sign the victim in as the attacker (login CSRF):
 * a browser names the page's origin on every cross-site POST, so a foreign Origin is refused.
 * These routes need no session and thus no CSRF token; this is their CSRF check.
 */
export function refuseCrossSiteSignIn(request: FastifyRequest, publicOrigin: string): void {
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== publicOrigin) {
    throw new HttpProblem('csrf_failed', 'Sign-in is accepted only from this service’s own pages.');
  }
}

/** Sets the session and CSRF cookies of a new session and builds the sign-in answer that goes with them. */
export async function answerSignIn(
  ctx: AppContext,
  reply: FastifyReply,
  signedIn: SignedIn,
  authMethod: string,
): Promise<SignInAnswer> {
  const tenant = await ownTenant(ctx, signedIn.scope);
  const csrfToken = issueCsrfToken(ctx.keyring, signedIn.sessionId);
  setSessionCookies(reply, signedIn.token, csrfToken, signedIn.expiresAt);
  return {
    user: signedIn.user,
    tenant: { id: tenant.id, name: tenant.name, entitlements: tenant.entitlements },
    csrfToken,
    expiresAt: signedIn.expiresAt.toISOString(),
    authMethod,
  };
}
