import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { publicRule } from '../access/rules.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { answerSignIn, SignInAnswer } from '../sign-in/answer.js';
import { openAcceptor } from './kerberos.js';
import { signInWithTicket } from './sign-in.js';

const tags = ['sign-in'];
const publicRoute = publicRule();

export const AuthMethods = Type.Object({
  password: Type.Boolean(),
  passkey: Type.Boolean(),
  sso: Type.Boolean({
    description: 'enterprise single sign-on (SPNEGO) is on: GET /api/v1/auth/sso/negotiate',
  }),
});

/**
 * Where to go after signing in: a path of this origin only. Anything else (another origin, `//host`,
 * a backslash that browsers read as a slash, control characters) is ignored, so the route can never
 * be used to send someone elsewhere. The path is checked again once parsed: removing dot segments
 * turns `/.//evil.example` into `//evil.example`, which a browser reads as another host.
 */
export function sameOriginPath(returnTo: string | undefined, origin: string): string | null {
  if (!returnTo || !returnTo.startsWith('/') || returnTo.startsWith('//') || /[\\\p{Cc}]/u.test(returnTo))
    return null;
  try {
    const url = new URL(returnTo, origin);
    const path = `${url.pathname}${url.search}${url.hash}`;
    return url.origin === origin && !path.startsWith('//') ? path : null;
  } catch {
    return null;
  }
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const wantsPage = (request: FastifyRequest): boolean => /\btext\/html\b/.test(request.headers.accept ?? '');

/**
 * A browser that navigated here and did not sign in (it has no ticket, or it was refused) gets a
 * page that goes back to sign-in with the reason, rather than a JSON body; scripts get problem details.
 */
function answerPage(
  reply: FastifyReply,
  status: number,
  reason: 'unavailable' | 'refused',
  next: string | null,
  headers = {},
) {
  // Where the person was going comes along, so a password or passkey sign-in still ends there.
  const query = new URLSearchParams({ sso: reason, ...(next && { next }) });
  const target = escapeHtml(`/sign-in?${query.toString()}`);
  const text =
    reason === 'unavailable'
      ? 'Single sign-on did not happen: this browser did not offer a Kerberos ticket.'
      : 'Single sign-on did not sign you in.';
  return reply
    .code(status)
    .headers(headers)
    .type('text/html; charset=utf-8')
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=${target}">` +
        `<title>Single sign-on</title></head><body><p>${text}</p><p><a href="${target}">Back to sign-in</a></p></body></html>`,
    );
}

/** `GET /api/v1/auth/methods` and SPNEGO sign-in (docs/operators/sso.md). */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const ssoRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  // Before the app listens: a library or keytab that single sign-on cannot use stops start-up.
  const sso = ctx.config.sso && { config: ctx.config.sso, acceptor: await openAcceptor(ctx.config.sso) };
  app.get(
    '/api/v1/auth/methods',
    {
      config: publicRoute,
      schema: {
        tags,
        summary: 'The ways to sign in here, for the sign-in page',
        querystring: StrictObject({}),
        response: { 200: AuthMethods },
      },
    },
    async () => ({ password: true, passkey: true, sso: sso !== null }),
  );

  app.get(
    '/api/v1/auth/sso/negotiate',
    {
      config: { ...publicRoute, openapi: { problems: ['invalid_credentials', 'not_found'] } },
      // Off is "no such route" (docs/operators/sso.md), before the query is even validated.
      onRequest: async () => {
        if (!sso) throw notFound('route');
      },
      schema: {
        tags,
        summary: 'Sign in with the Kerberos ticket the browser negotiates (SPNEGO)',
        description:
          'Without `Authorization: Negotiate …`: 401 with `WWW-Authenticate: Negotiate`. With a ticket ' +
          'that verifies for a known user: the session cookies and the sign-in answer, or a 303 to ' +
          '`returnTo` (a path of this origin; anything else is ignored). 404 when single sign-on is off.',
        querystring: StrictObject({ returnTo: Type.Optional(Type.String({ maxLength: 2000 })) }),
        response: {
          200: SignInAnswer,
          303: Type.Null({ description: 'Signed in (the cookies are set): on to `returnTo`' }),
          // Replaces the generated 401, which knows only Bearer challenges. A client that accepts
          // text/html gets a page back to sign-in instead, which is not described here: every error
          // of the document is problem details (test/http/openapi.test.ts).
          401: {
            description:
              'Unauthorized: `unauthenticated` (no ticket offered; `WWW-Authenticate: Negotiate`) or ' +
              '`invalid_credentials` (the ticket was refused)',
            headers: {
              'www-authenticate': { description: 'Negotiate, when no ticket was offered', type: 'string' },
            },
            content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
          },
        },
      },
    },
    async (request, reply) => {
      if (!sso) throw notFound('route');
      const next = sameOriginPath(request.query.returnTo, ctx.config.publicUrl.origin);
      const header = request.headers.authorization;
      const token = header?.match(/^Negotiate +(.*)$/i)?.[1]?.trim();
      if (token === undefined) {
        const headers = { 'www-authenticate': 'Negotiate' };
        if (wantsPage(request)) return answerPage(reply, 401, 'unavailable', next, headers);
        throw new HttpProblem(
          'unauthenticated',
          'Single sign-on needs a Kerberos ticket: Authorization: Negotiate.',
          {
            headers,
          },
        );
      }
      let result;
      try {
        result = await signInWithTicket(ctx, sso, auditOrigin(request, ctx.now()), token);
      } catch (error) {
        if (error instanceof HttpProblem && error.code === 'invalid_credentials' && wantsPage(request))
          return answerPage(reply, 401, 'refused', next);
        throw error;
      }
      if (result.mutualToken) reply.header('www-authenticate', `Negotiate ${result.mutualToken}`);
      const answer = await answerSignIn(ctx, reply, result.signedIn, 'sso');
      if (next) return reply.code(303).header('location', next).send(null);
      return answer;
    },
  );
};
