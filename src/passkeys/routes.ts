import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { FastifyRequest } from 'fastify';
import { auditOrigin } from '../access/audit.js';
import { sessionOf } from '../access/principal.js';
import { publicRule, sessionRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, NoContent, PageOf, StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { answerSignIn, refuseCrossSiteSignIn, SignInAnswer } from '../sign-in/answer.js';
import {
  getPasswordSignIn,
  listPasskeys,
  registerPasskey,
  registrationOptions,
  removePasskey,
  switchPasswordSignIn,
} from './passkeys.js';
import {
  CreationOptions,
  LoginVerifyBody,
  PasskeyRecord,
  PasswordSignIn,
  RegistrationVerifyBody,
  RequestOptions,
} from './schemas.js';
import { signInOptions, signInWithPasskey } from './sign-in.js';

const tags = ['passkeys'];
const signedIn = sessionRule();
const publicRoute = publicRule();

/** Passkeys (docs/api/passkeys.md): registration from a session, sign-in without one, the password switch. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const passkeyRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  // Before the body is read, so a cross-site post is 403 whatever it holds (the order of docs/api/errors.md).
  const refuseCrossSite = async (request: FastifyRequest) =>
    refuseCrossSiteSignIn(request, ctx.config.publicUrl.origin);
  app.post(
    '/api/v1/auth/passkeys/registration/options',
    {
      config: signedIn,
      schema: {
        tags,
        summary: 'Options for navigator.credentials.create(): start adding a passkey',
        description:
          'Bare WebAuthn creation options (SimpleWebAuthn JSON). The challenge is single-use, ' +
          'bound to this session and valid for 5 minutes.',
        response: { 200: CreationOptions },
      },
    },
    async (request) => registrationOptions(ctx, requestScope(request), sessionOf(request.principal)),
  );

  app.post(
    '/api/v1/auth/passkeys/registration/verify',
    {
      config: { ...signedIn, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Keep the passkey the authenticator made',
        description:
          'A refused answer (wrong origin or RP ID, an unknown, used or expired challenge) is 400; ' +
          'a passkey registered already is 409.',
        body: RegistrationVerifyBody,
        response: { 201: PasskeyRecord },
      },
    },
    async (request, reply) => {
      const passkey = await registerPasskey(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        sessionOf(request.principal),
        request.body as { response: RegistrationResponseJSON; name?: string },
      );
      return reply.code(201).send(passkey);
    },
  );

  app.get(
    '/api/v1/auth/passkeys',
    {
      config: signedIn,
      schema: {
        tags,
        summary: "The signed-in user's passkeys, newest first",
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(PasskeyRecord) },
      },
    },
    async (request) => listPasskeys(ctx, requestScope(request), sessionOf(request.principal), request.query),
  );

  app.delete(
    '/api/v1/auth/passkeys/:id',
    {
      config: { ...signedIn, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Remove a passkey',
        description: 'The last passkey cannot be removed while password sign-in is off (409).',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await removePasskey(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        sessionOf(request.principal),
        request.params.id,
      );
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/auth/passkeys/login/options',
    {
      config: { ...publicRoute, openapi: { problems: ['csrf_failed'] } },
      onRequest: refuseCrossSite,
      schema: {
        tags,
        summary: 'Options for navigator.credentials.get(): start signing in with a passkey',
        description:
          'Discoverable: no allowCredentials. The challenge is single-use and valid for 5 minutes.',
        response: { 200: RequestOptions },
      },
    },
    async () => signInOptions(ctx),
  );

  app.post(
    '/api/v1/auth/passkeys/login/verify',
    {
      config: { ...publicRoute, openapi: { problems: ['invalid_credentials', 'csrf_failed'] } },
      onRequest: refuseCrossSite,
      schema: {
        tags,
        summary: 'Sign in with a passkey',
        description:
          'An unknown passkey, a bad signature, another origin or RP ID, an unknown, used or expired ' +
          'challenge, or a signature counter that went backwards: 401 invalid_credentials.',
        body: LoginVerifyBody,
        response: { 200: SignInAnswer },
      },
    },
    async (request, reply) => {
      const signedIn = await signInWithPasskey(
        ctx,
        auditOrigin(request, ctx.now()),
        request.body.response as AuthenticationResponseJSON,
      );
      return answerSignIn(ctx, reply, signedIn, 'passkey');
    },
  );

  app.get(
    '/api/v1/auth/password-sign-in',
    {
      config: signedIn,
      schema: {
        tags,
        summary: 'Whether the signed-in user may sign in with a password',
        response: { 200: PasswordSignIn },
      },
    },
    async (request) => getPasswordSignIn(ctx, requestScope(request), sessionOf(request.principal)),
  );

  app.put(
    '/api/v1/auth/password-sign-in',
    {
      config: { ...signedIn, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Turn password sign-in off (passkeys only) or back on',
        description: 'Off only while the user has a passkey (else 409).',
        body: PasswordSignIn,
        response: { 200: PasswordSignIn },
      },
    },
    async (request) =>
      switchPasswordSignIn(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        sessionOf(request.principal),
        request.body.enabled,
      ),
  );
};
