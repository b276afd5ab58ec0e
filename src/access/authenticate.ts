import type {} from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import { HttpProblem } from '../http/problem.js';
import type { Principal, SessionPrincipal, TenantKeyPrincipal } from './principal.js';

export const SESSION_COOKIE = 'svc_access';
export const CSRF_COOKIE = '__Host-svc_csrf';

export interface CredentialVerifiers {
  /** The platform key's ID for a valid, active `plt_` secret; null otherwise. */
  platformKey(token: string, now: Date): Promise<string | null>;
  tenantKey(token: string, now: Date): Promise<TenantKeyPrincipal | null>;
  session(token: string, now: Date): Promise<SessionPrincipal | null>;
}

/** One answer for every kind of bad credential, so a caller learns nothing from the difference. */
export function unauthenticated(): HttpProblem {
  return new HttpProblem('unauthenticated', 'A valid credential is required.', {
    headers: { 'www-authenticate': 'Bearer' },
  });
}

const BEARER = /^Bearer +([^\s]+) *$/i;

/**
 * The caller of a request: null when it presents no credential, a 401 when it presents a bad one.
 * An Authorization header wins; cookies are then not even looked at (docs/api/authentication.md).
 */
export async function authenticate(
  request: FastifyRequest,
  verifiers: CredentialVerifiers,
  now: Date,
): Promise<Principal | null> {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const token = BEARER.exec(header)?.[1];
    if (token?.startsWith('tnt_')) {
      const principal = await verifiers.tenantKey(token, now);
      if (principal) return principal;
    } else if (token?.startsWith('plt_')) {
      const keyId = await verifiers.platformKey(token, now);
      if (keyId) return { kind: 'platform_key', keyId };
    }
    throw unauthenticated();
  }
  const cookie = request.cookies[SESSION_COOKIE];
  if (cookie === undefined) return null;
  const session = await verifiers.session(cookie, now);
  if (!session) throw unauthenticated();
  return session;
}
