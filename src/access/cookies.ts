import type {} from '@fastify/cookie';
import type { FastifyReply } from 'fastify';
import { CSRF_COOKIE, SESSION_COOKIE } from './authenticate.js';

/**
 * The two cookies of docs/api/authentication.md: the opaque session (HttpOnly, Lax) and the CSRF token (readable by
 * the page's scripts, Strict, `__Host-` so no subdomain can set it). Both are Secure: browsers keep
 * Secure cookies on http://localhost, so local development works too.
 */
export function setSessionCookies(
  reply: FastifyReply,
  token: string,
  csrfToken: string,
  expiresAt: Date,
): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
    path: '/',
    expires: expiresAt,
  });
  setCsrfCookie(reply, csrfToken);
}

export function setCsrfCookie(reply: FastifyReply, csrfToken: string): void {
  reply.setCookie(CSRF_COOKIE, csrfToken, { secure: true, sameSite: 'strict', path: '/' });
}

export function clearSessionCookies(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { httpOnly: true, secure: true, sameSite: 'lax', path: '/' });
  reply.clearCookie(CSRF_COOKIE, { secure: true, sameSite: 'strict', path: '/' });
}
