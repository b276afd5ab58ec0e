import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { addressBucket, clientAddress } from '../access/client-address.js';
import { publicRule } from '../access/rules.js';
import { Nullable, StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { answerSignIn, refuseCrossSiteSignIn, SignInAnswer } from '../sign-in/answer.js';
import { completeSetup, isSetupRequired, setupDone } from './setup.js';

/** The sign-in answer (docs/api/authentication.md) with the platform key made by setup, its secret shown once. */
export const SetupAnswer = Type.Object({
  ...SignInAnswer.properties,
  platformKey: Type.Object(
    {
      id: Type.String(),
      prefix: Type.String(),
      secret: Type.String({ description: 'shown once: only its hash is stored' }),
      expiresAt: Nullable(Type.String({ format: 'date-time' })),
    },
    { description: 'A platform key named `setup` (`Bearer plt_…` on the platform routes)' },
  ),
});

/** The answer of `GET /api/v1/setup`. */
export const SetupStatus = Type.Object({ required: Type.Boolean() });

/** The body of `POST /api/v1/setup`. */
export const SetupBody = StrictObject({
  token: Type.String({
    maxLength: 64,
    description: 'the token of the setup URL (32 base62 characters)',
  }),
  organizationName: Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' }),
  email: Type.String({ format: 'email', maxLength: 254 }),
  password: Type.String({ minLength: 12, maxLength: 200 }),
});

// Upper case on purpose: sign-in counts failures per lower-cased e-mail address in the same
// table, so no sign-in attempt can count against (or lock) a client's setup attempts.
const throttleKeyOf = (request: FastifyRequest): string => `SETUP:${addressBucket(clientAddress(request))}`;

const publicRoute = publicRule();
const tags = ['setup'];

/** First-run setup (docs/operators/setup.md): GET and POST /api/v1/setup. */
export const setupRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  app.get(
    '/api/v1/setup',
    {
      config: publicRoute,
      schema: {
        tags,
        summary: 'Whether first-run setup is still to be done (while no user exists)',
        querystring: StrictObject({}),
        response: { 200: SetupStatus },
      },
    },
    async () => ({ required: await isSetupRequired(ctx.db) }),
  );

  app.post(
    '/api/v1/setup',
    {
      config: { ...publicRoute, openapi: { problems: ['conflict', 'invalid_credentials', 'csrf_failed'] } },
      schema: {
        tags,
        summary:
          'Set the hub up: its first tenant, administrator and platform key; signs the administrator in',
        description:
          'Needs the one-time token `hubgate serve` prints while no user exists. Answers 409 once ' +
          'setup is done, whatever the body; a wrong or expired token is 401, ten of them from one ' +
          'address within 15 minutes 429. The platform key secret is shown in this answer only.',
        body: SetupBody,
        response: { 201: SetupAnswer },
      },
      // Before validation: a cross-site post (before the body is even read), then a hub already
      // set up, whatever the body says.
      onRequest: async (request) => refuseCrossSiteSignIn(request, ctx.config.publicUrl.origin),
      preValidation: async () => {
        if (!(await isSetupRequired(ctx.db))) throw setupDone();
      },
    },
    async (request, reply) => {
      const done = await completeSetup(
        ctx,
        auditOrigin(request, ctx.now()),
        throttleKeyOf(request),
        request.body,
      );
      const answer = await answerSignIn(ctx, reply, done.signedIn, 'password');
      return reply.code(201).send({ ...answer, platformKey: done.platformKey });
    },
  );
};
