import type { FastifyRequest } from 'fastify';
import { auditOrigin } from '../access/audit.js';
import { addressBucket, clientAddress } from '../access/client-address.js';
import { publicRule } from '../access/rules.js';
import { InvitationAcceptBody, InvitationLookup, InvitationLookupBody } from '../people/schemas.js';
import type { RoutePlugin } from '../services.js';
import { answerSignIn, refuseCrossSiteSignIn, SignInAnswer } from './answer.js';
import { lookUpInvitation, signInWithInvitation } from './sign-in.js';

// Upper case on purpose, as setup's: sign-in counts failures per lower-cased e-mail address in the
// same table, so no sign-in attempt can count against (or lock) a client's invitation attempts.
const throttleKeyOf = (request: FastifyRequest): string => `INVITE:${addressBucket(clientAddress(request))}`;

const tags = ['people'];
const invitationRoute = {
  ...publicRule(),
  openapi: { problems: ['invalid_credentials', 'csrf_failed'] },
} as const;

/**
 * The invitation link's two requests (docs/api/people.md): no credential and no CSRF token, the
 * token in the body only (the link carries it in the fragment, which no server sees).
 */
export const invitationRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  // Before the body is read: accepting signs in, and a foreign page must not sign a browser in.
  const refuseCrossSite = async (request: FastifyRequest) =>
    refuseCrossSiteSignIn(request, ctx.config.publicUrl.origin);
  app.post(
    '/api/v1/invitations/lookup',
    {
      config: invitationRoute,
      onRequest: refuseCrossSite,
      schema: {
        tags,
        summary: 'What an invitation link is for: the e-mail address, the tenant and its expiry',
        description:
          'An unknown, used or expired token is 401 invalid_credentials; ten of them from one address ' +
          'within 15 minutes, 429.',
        body: InvitationLookupBody,
        response: { 200: InvitationLookup },
      },
    },
    async (request) => lookUpInvitation(ctx, ctx.now(), throttleKeyOf(request), request.body.token),
  );

  app.post(
    '/api/v1/invitations/accept',
    {
      config: invitationRoute,
      onRequest: refuseCrossSite,
      schema: {
        tags,
        summary: 'Accept an invitation: choose a password and sign in',
        description:
          'The person becomes active with this password (12 to 200 characters) and is signed in: the ' +
          'sign-in answer and cookies of a password sign-in. The link works once; an unknown, used or ' +
          'expired token is 401 invalid_credentials, throttled per address as sign-in is.',
        body: InvitationAcceptBody,
        response: { 200: SignInAnswer },
      },
    },
    async (request, reply) => {
      const signedIn = await signInWithInvitation(
        ctx,
        auditOrigin(request, ctx.now()),
        throttleKeyOf(request),
        request.body,
      );
      return answerSignIn(ctx, reply, signedIn, 'password');
    },
  );
};
