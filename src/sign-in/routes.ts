import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { clearSessionCookies, setCsrfCookie } from '../access/cookies.js';
import { issueCsrfToken } from '../access/csrf.js';
import { sessionOf } from '../access/principal.js';
import { publicRule, sessionRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { endSession } from '../access/sessions.js';
import { NoContent, StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { ownTenant } from '../tenants/tenants.js';
import { answerSignIn, refuseCrossSiteSignIn, SignInAnswer } from './answer.js';
import { signInWithPassword } from './sign-in.js';

const tags = ['sign-in'];

/** The body of `POST /api/v1/auth/login`. */
export const LoginBody = StrictObject({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
});

/** Password sign-in, the session, sign-out (docs/api/authentication.md). */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const sessionRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  app.post(
    '/api/v1/auth/login',
    {
      config: {
        ...publicRule(),
        openapi: { problems: ['invalid_credentials', 'csrf_failed'] },
      },
      // Before the body is read, so a cross-site post is 403 whatever it holds (the order of docs/api/errors.md).
      onRequest: async (request) => refuseCrossSiteSignIn(request, ctx.config.publicUrl.origin),
      schema: {
        tags,
        summary: 'Sign in with e-mail and password',
        body: LoginBody,
        response: { 200: SignInAnswer },
      },
    },
    async (request, reply) => {
      const signedIn = await signInWithPassword(ctx, auditOrigin(request, ctx.now()), request.body);
      return answerSignIn(ctx, reply, signedIn, 'password');
    },
  );

  app.get(
    '/api/v1/auth/session',
    {
      config: sessionRule(),
      schema: {
        tags,
        summary: 'The signed-in user, their tenant and a CSRF token',
        response: {
          // The sign-in answer without `expiresAt` (docs/api/authentication.md).
          200: Type.Omit(SignInAnswer, ['expiresAt']),
        },
      },
    },
    async (request, reply) => {
      const session = sessionOf(request.principal);
      const tenant = await ownTenant(ctx, requestScope(request));
      const csrfToken = issueCsrfToken(ctx.keyring, session.sessionId);
      setCsrfCookie(reply, csrfToken);
      return {
        user: { id: session.userId, email: session.email, role: session.role, tenantId: session.tenantId },
        tenant: { id: tenant.id, name: tenant.name, entitlements: tenant.entitlements },
        csrfToken,
        authMethod: session.authMethod,
      };
    },
  );

  app.post(
    '/api/v1/auth/logout',
    {
      config: sessionRule(),
      schema: { tags, summary: 'Sign out: the session ends at once', response: { 204: NoContent } },
    },
    async (request, reply) => {
      await endSession(ctx, requestScope(request), sessionOf(request.principal).sessionId, ctx.now());
      clearSessionCookies(reply);
      return reply.code(204).send(null);
    },
  );
};
