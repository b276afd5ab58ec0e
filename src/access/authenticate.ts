import type {} from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import { HttpProblem } from '../http/problem.js';
import type { PortalPrincipal, Principal, SessionPrincipal, TenantKeyPrincipal } from './principal.js';

export const SESSION_COOKIE = 'svc_access';
export const CSRF_COOKIE = '__Host-svc_csrf';

export interface CredentialVerifiers {
  /** The platform key's ID for a valid, active `plt_` secret; null otherwise. */
  platformKey(token: string, now: Date): Promise<string | null>;
  /** A promise only when the answer is not in memory (docs/api/authentication.md: cached for 0.5 s). */
  tenantKey(token: string, now: Date): Promise<TenantKeyPrincipal | null> | TenantKeyPrincipal | null;
  session(token: string, now: Date): Promise<SessionPrincipal | null>;
  /** A portal session's `ptl_` token (docs/api/portal.md), cached as tenant keys are. */
  portal(token: string, now: Date): Promise<PortalPrincipal | null> | PortalPrincipal | null;
  /** An MCP client's OAuth access token `oat_` (docs/api/mcp.md): a key-like principal with `grant`. */
  mcpAccess(token: string, now: Date): Promise<TenantKeyPrincipal | null> | TenantKeyPrincipal | null;
}

/** One answer for every kind of bad credential, so a caller learns nothing from the difference. */
export function unauthenticated(): HttpProblem {
  return new HttpProblem('unauthenticated', 'A valid credential is required.', {
    headers: { 'www-authenticate': 'Bearer' },
  });
}

const BEARER = /^Bearer +([^\s]+) *$/i;

/**
 * The caller of a request: null when it presents no credential, a 401 when it presents a bad one
 * (thrown, or the promise rejected). An Authorization header wins; cookies are then not even
 * looked at (docs/api/authentication.md). A promise only when a verifier must wait: a tenant key
 * whose answer is cached is checked without one (docs/benchmarks.md).
 */
export function authenticate(
  request: FastifyRequest,
  verifiers: CredentialVerifiers,
  now: Date,
): Promise<Principal | null> | Principal | null {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const token = BEARER.exec(header)?.[1];
    if (token?.startsWith('tnt_')) {
      const principal = verifiers.tenantKey(token, now);
      return principal instanceof Promise ? principal.then(orRefuse) : orRefuse(principal);
    } else if (token?.startsWith('ptl_')) {
      const principal = verifiers.portal(token, now);
      return principal instanceof Promise ? principal.then(orRefuse) : orRefuse(principal);
    } else if (token?.startsWith('oat_')) {
      const principal = verifiers.mcpAccess(token, now);
      return principal instanceof Promise ? principal.then(orRefuse) : orRefuse(principal);
    } else if (token?.startsWith('plt_')) {
      return verifiers
        .platformKey(token, now)
        .then((keyId) => orRefuse(keyId ? { kind: 'platform_key' as const, keyId } : null));
    }
    throw unauthenticated();
  }
  const cookie = request.cookies[SESSION_COOKIE];
  if (cookie === undefined) return null;
  return verifiers.session(cookie, now).then(orRefuse);
}

/** A credential that was presented and verified to nothing is refused, never taken for none. */
function orRefuse<T extends Principal>(principal: T | null): T {
  if (!principal) throw unauthenticated();
  return principal;
}
