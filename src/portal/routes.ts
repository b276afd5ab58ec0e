import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { addressBucket, clientAddress } from '../access/client-address.js';
import type { PortalPrincipal } from '../access/principal.js';
import { platformRule, PORTAL_ACCESS, portalRule, publicRule, tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { HttpProblem } from '../http/problem.js';
import { IdParams, NoContent, Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { platformScopeFor } from '../tenants/tenants.js';
import { MAX_LIVE_PORTAL_SESSIONS } from './caps.js';
import {
  createPortalSession,
  exchangePortalCode,
  listPortalSessions,
  portalSessionView,
  revokePortalSession,
} from './sessions.js';

const Access = Type.Enum(PORTAL_ACCESS, {
  description: 'read < operate < manage; each includes the routes of the ones before it',
});
const ConnectionIds = Nullable(
  Type.Array(Type.String(), {
    description: "The session's connections; null: every connection of the tenant",
  }),
);

const CreateBody = StrictObject({
  subject: Type.String({
    minLength: 1,
    maxLength: 200,
    description: "The person in the caller's own system, recorded in the audit log",
  }),
  access: Type.Optional(Access),
  connectionIds: Type.Optional(
    Type.Array(Type.String(), {
      minItems: 1,
      maxItems: 100,
      description: "Some of the tenant's connections; absent: every connection of the tenant, now and later",
    }),
  ),
  expiresInSeconds: Type.Optional(Type.Integer({ minimum: 300, maximum: 86_400 })),
});

const NewSessionSchema = Type.Object({
  id: Type.String(),
  url: Type.String({
    description: 'PUBLIC_URL/portal/<tenantId>#code=<code>; the code works once, 10 minutes',
  }),
  subject: Type.String(),
  access: Access,
  connectionIds: ConnectionIds,
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

const SessionRecordSchema = Type.Object({
  id: Type.String(),
  subject: Type.String(),
  access: Access,
  connectionIds: ConnectionIds,
  status: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('expired')], {
    description: 'pending: the link was not used yet; active: its token works until expiresAt',
  }),
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

const BrandingSchema = Type.Object({
  name: Nullable(Type.String()),
  logoUrl: Nullable(Type.String()),
  accentColor: Nullable(Type.String()),
});

const SessionViewFields = {
  expiresAt: Timestamp,
  session: Type.Object({
    id: Type.String(),
    subject: Type.String(),
    access: Access,
    connectionIds: ConnectionIds,
  }),
  tenant: Type.Object({ id: Type.String(), name: Type.String() }),
  branding: BrandingSchema,
};
const SessionViewSchema = Type.Object(SessionViewFields);
const ExchangeAnswerSchema = Type.Object({
  token: Type.String({ description: 'ptl_…: send it as Authorization: Bearer; it is no cookie' }),
  ...SessionViewFields,
});

const TenantSessionParams = StrictObject({
  id: Type.String({ description: 'Opaque ID of the tenant' }),
  sessionId: Type.String({ description: 'Opaque ID of the portal session' }),
});

// Upper case on purpose, as invitations' and setup's: sign-in counts failures per lower-cased e-mail
// address in the same table, so no sign-in attempt can count against a client's portal codes.
const throttleKeyOf = (request: FastifyRequest): string => `PORTAL:${addressBucket(clientAddress(request))}`;

const portalOf = (request: FastifyRequest): PortalPrincipal => {
  // The gate lets only portal tokens reach a portal route.
  if (request.principal?.kind !== 'portal') throw new HttpProblem('internal');
  return request.principal;
};

const tags = ['portal'];
const platform = platformRule();
const admin = tenantRule('integrations', 'ADMIN');
// A create may find the tenant at its most live sessions (caps.ts).
const createProblems = { openapi: { problems: ['conflict' as const] } };
const createDescription =
  `A tenant holds at most ${MAX_LIVE_PORTAL_SESSIONS} live sessions (not ended, not expired, link ` +
  'used or still usable); one more is `409 conflict`. End sessions no longer needed with DELETE.';

/** Portal sessions (docs/api/portal.md): made by the platform or the tenant, used by the portal page. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const portalRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  const forget = (sessionId: string) => services.portalTokens.forget(sessionId);

  app.post(
    '/api/v1/platform/tenants/:id/portal-sessions',
    {
      config: { ...platform, ...createProblems },
      schema: {
        tags,
        summary: 'Start a portal session for a tenant; its link is returned once',
        description: createDescription,
        params: IdParams,
        body: CreateBody,
        response: { 201: NewSessionSchema },
      },
    },
    // Crosses tenants on purpose: a platform key acts on the tenant the URL names, once found.
    async (request, reply) => {
      const scope = await platformScopeFor(ctx, request.principal, request.params.id);
      const created = await createPortalSession(ctx, scope, auditOrigin(request, ctx.now()), request.body);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/api/v1/platform/tenants/:id/portal-sessions',
    {
      config: platform,
      schema: {
        tags,
        summary: "A tenant's portal sessions that were not ended, newest first (never a code or token)",
        params: IdParams,
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(SessionRecordSchema) },
      },
    },
    async (request) =>
      listPortalSessions(
        ctx,
        await platformScopeFor(ctx, request.principal, request.params.id),
        request.query,
      ),
  );

  app.delete(
    '/api/v1/platform/tenants/:id/portal-sessions/:sessionId',
    {
      config: platform,
      schema: {
        tags,
        summary: 'End a portal session: its link and token stop working at once',
        params: TenantSessionParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      const scope = await platformScopeFor(ctx, request.principal, request.params.id);
      await revokePortalSession(ctx, scope, auditOrigin(request, ctx.now()), request.params.sessionId);
      forget(request.params.sessionId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/integrations/portal-sessions',
    {
      config: { ...admin, ...createProblems },
      schema: {
        tags,
        summary: 'Start a portal session for this tenant; its link is returned once',
        description: createDescription,
        body: CreateBody,
        response: { 201: NewSessionSchema },
      },
    },
    async (request, reply) => {
      const origin = auditOrigin(request, ctx.now());
      const created = await createPortalSession(ctx, requestScope(request), origin, request.body);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/api/v1/integrations/portal-sessions',
    {
      config: admin,
      schema: {
        tags,
        summary: "The tenant's portal sessions that were not ended, newest first (never a code or token)",
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(SessionRecordSchema) },
      },
    },
    async (request) => listPortalSessions(ctx, requestScope(request), request.query),
  );

  app.delete(
    '/api/v1/integrations/portal-sessions/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'End a portal session: its link and token stop working at once',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await revokePortalSession(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
      );
      forget(request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/portal/exchange',
    {
      config: { ...publicRule(), openapi: { problems: ['invalid_credentials', 'rate_limited'] } },
      schema: {
        tags,
        summary: "Exchange a portal link's code for the session's ptl_ token (once)",
        description:
          'No credential and no CSRF token. A wrong, used, expired or ended code is 401 ' +
          'invalid_credentials; ten of them from one address within 15 minutes, 429.',
        body: StrictObject({ code: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: ExchangeAnswerSchema },
      },
    },
    async (request) => exchangePortalCode(ctx, throttleKeyOf(request), request.body.code),
  );

  app.get(
    '/api/v1/portal/session',
    {
      config: portalRule(),
      schema: {
        tags,
        summary: 'The portal session of this ptl_ token: its access, connections, tenant and branding',
        response: { 200: SessionViewSchema },
      },
    },
    async (request) => {
      const session = portalOf(request);
      return portalSessionView(ctx, session.tenantId, {
        id: session.sessionId,
        subject: session.subject,
        access: session.access,
        connectionIds: session.connectionIds,
        expiresAt: session.expiresAt,
      });
    },
  );
};
