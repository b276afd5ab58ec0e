import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { addressBucket, clientAddress } from '../access/client-address.js';
import { platformRule, publicRule, tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, NoContent, Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import { BrokerSchema } from '../hub/schemas.js';
import type { RoutePlugin } from '../services.js';
import { platformScopeFor } from '../tenants/tenants.js';
import {
  completeConnectSession,
  connectSessionView,
  createConnectSession,
  getConnectSession,
  listConnectSessions,
  revokeConnectSession,
} from './connect-links.js';

const Subject = Type.String({
  minLength: 1,
  maxLength: 200,
  description: "The person in the caller's own system, recorded in the audit log",
});
const DisplayName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Config = Type.Record(Type.String(), Type.Unknown(), {
  maxProperties: 50,
  description: "Some of the connector's config fields, as the create body takes them",
});

const CreateBody = StrictObject({
  connectorKey: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'The connector of the connection to make (GET /api/v1/integration-hub/connectors)',
  }),
  subject: Subject,
  displayName: Type.Optional({ ...DisplayName, description: 'Proposed; the person may give another' }),
  config: Type.Optional({
    ...Config,
    description:
      "Connector config fields fixed in advance: the person cannot change them, the link's page hides them",
  }),
  expiresInSeconds: Type.Optional(Type.Integer({ minimum: 300, maximum: 604_800, default: 86_400 })),
});

const Status = Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('expired')], {
  description: 'pending: the link works; completed: it made its connection; expired: it was not used in time',
});

const SessionFields = {
  id: Type.String(),
  status: Status,
  connectorKey: Type.String(),
  subject: Type.String(),
  connectionId: Nullable(Type.String({ description: 'the connection the link made, once completed' })),
  expiresAt: Timestamp,
  createdAt: Timestamp,
};
const ConnectSessionSchema = Type.Object(SessionFields);
const NewConnectSessionSchema = Type.Object({
  id: SessionFields.id,
  url: Type.String({
    description: 'PUBLIC_URL/connect/<tenantId>#code=<code>; shown in this answer only',
  }),
  status: Status,
  connectorKey: SessionFields.connectorKey,
  subject: SessionFields.subject,
  connectionId: SessionFields.connectionId,
  expiresAt: Timestamp,
  createdAt: Timestamp,
});

const Field = Type.Object({
  name: Type.String(),
  kind: Type.Union([Type.Literal('config'), Type.Literal('credentials')], {
    description: 'config: shown on the connection; credentials: a secret, bound and never shown again',
  }),
  type: Type.String(),
  required: Type.Boolean(),
  description: Nullable(Type.String()),
  format: Nullable(Type.String({ description: 'e.g. uri' })),
  options: Nullable(Type.Array(Type.String(), { description: 'the values allowed, when they are few' })),
  default: Nullable(Type.String({ description: 'what an optional field means when left out' })),
  generated: Type.Boolean({ description: 'hubgate makes it when left out' }),
});

const ConnectView = Type.Object({
  tenant: Type.Object({ name: Type.String() }),
  connector: Type.Object({
    key: Type.String(),
    name: Type.String(),
    fields: Type.Array(Field, { description: "the connector's fields the link did not fix" }),
    broker: Type.Optional(BrokerSchema),
  }),
  displayName: Nullable(Type.String({ description: 'as the link proposes it' })),
  expiresAt: Timestamp,
  branding: Type.Object({
    name: Nullable(Type.String()),
    logoUrl: Nullable(Type.String()),
    accentColor: Nullable(Type.String()),
  }),
});

const Code = Type.String({ minLength: 1, maxLength: 200, description: 'the code of the link’s fragment' });

// A field is a string, or an object of strings (the webhook and http `oauth2ClientCredentials`).
const Credentials = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Record(Type.String(), Type.String(), { maxProperties: 10 })]),
  { maxProperties: 20, description: "the connector's credential fields, as PUT …/credentials takes them" },
);

const CompleteBody = StrictObject({
  code: Code,
  displayName: Type.Optional(DisplayName),
  config: Type.Optional({ ...Config, description: 'the config fields the link did not fix' }),
  credentials: Type.Optional(Credentials),
});

const TenantLinkParams = StrictObject({
  id: Type.String({ description: 'Opaque ID of the tenant' }),
  sessionId: Type.String({ description: 'Opaque ID of the connect link' }),
});

// Upper case on purpose, as invitations' and setup's: sign-in counts failures per lower-cased e-mail
// address in the same table, so no sign-in attempt can count against a client's connect codes.
const throttleKeyOf = (request: FastifyRequest): string => `CONNECT:${addressBucket(clientAddress(request))}`;

const tags = ['connect-links'];
const platform = platformRule();
const admin = tenantRule('integrations', 'ADMIN');
const withProblems = { openapi: { problems: ['destination_forbidden' as const, 'conflict' as const] } };
const linkRoute = {
  ...publicRule(),
  openapi: { problems: ['invalid_credentials' as const, 'rate_limited' as const, 'conflict' as const] },
};

/**
 * Connect links (docs/api/connect-links.md): made by the platform or the tenant, used by the connect
 * page with no account.
 */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const connectRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  const summaries = {
    create: 'Make a connect link for one new connection; its URL is returned once',
    list: "The tenant's connect links that were not deleted, newest first (never a code)",
    get: 'One connect link: pending, completed (with its connection) or expired',
    delete: 'Delete a connect link: it stops working at once',
  };

  app.post(
    '/api/v1/platform/tenants/:id/connect-sessions',
    {
      config: { ...platform, ...withProblems },
      schema: {
        tags,
        summary: summaries.create,
        params: IdParams,
        body: CreateBody,
        response: { 201: NewConnectSessionSchema },
      },
    },
    // Crosses tenants on purpose: a platform key acts on the tenant the URL names, once found.
    async (request, reply) => {
      const scope = await platformScopeFor(ctx, request.principal, request.params.id);
      const origin = auditOrigin(request, ctx.now());
      return reply.code(201).send(await createConnectSession(services, scope, origin, request.body));
    },
  );

  app.get(
    '/api/v1/platform/tenants/:id/connect-sessions',
    {
      config: platform,
      schema: {
        tags,
        summary: summaries.list,
        params: IdParams,
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(ConnectSessionSchema) },
      },
    },
    async (request) =>
      listConnectSessions(
        services,
        await platformScopeFor(ctx, request.principal, request.params.id),
        request.query,
      ),
  );

  app.get(
    '/api/v1/platform/tenants/:id/connect-sessions/:sessionId',
    {
      config: platform,
      schema: {
        tags,
        summary: summaries.get,
        params: TenantLinkParams,
        response: { 200: ConnectSessionSchema },
      },
    },
    async (request) =>
      getConnectSession(
        services,
        await platformScopeFor(ctx, request.principal, request.params.id),
        request.params.sessionId,
      ),
  );

  app.delete(
    '/api/v1/platform/tenants/:id/connect-sessions/:sessionId',
    {
      config: platform,
      schema: { tags, summary: summaries.delete, params: TenantLinkParams, response: { 204: NoContent } },
    },
    async (request, reply) => {
      const scope = await platformScopeFor(ctx, request.principal, request.params.id);
      const origin = auditOrigin(request, ctx.now());
      await revokeConnectSession(services, scope, origin, request.params.sessionId);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/integrations/connect-sessions',
    {
      config: { ...admin, ...withProblems },
      schema: {
        tags,
        summary: summaries.create,
        body: CreateBody,
        response: { 201: NewConnectSessionSchema },
      },
    },
    async (request, reply) => {
      const origin = auditOrigin(request, ctx.now());
      const created = await createConnectSession(services, requestScope(request), origin, request.body);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/api/v1/integrations/connect-sessions',
    {
      config: admin,
      schema: {
        tags,
        summary: summaries.list,
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(ConnectSessionSchema) },
      },
    },
    async (request) => listConnectSessions(services, requestScope(request), request.query),
  );

  app.get(
    '/api/v1/integrations/connect-sessions/:id',
    {
      config: admin,
      schema: { tags, summary: summaries.get, params: IdParams, response: { 200: ConnectSessionSchema } },
    },
    async (request) => getConnectSession(services, requestScope(request), request.params.id),
  );

  app.delete(
    '/api/v1/integrations/connect-sessions/:id',
    {
      config: admin,
      schema: { tags, summary: summaries.delete, params: IdParams, response: { 204: NoContent } },
    },
    async (request, reply) => {
      const origin = auditOrigin(request, ctx.now());
      await revokeConnectSession(services, requestScope(request), origin, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/api/v1/connect/session',
    {
      config: linkRoute,
      schema: {
        tags,
        summary: "What a connect link's page shows: the tenant, the connector's open fields, the branding",
        description:
          'No credential and no CSRF token. A wrong, completed, deleted or expired code is 401 ' +
          'invalid_credentials; ten of them from one address within 15 minutes, 429.',
        body: StrictObject({ code: Code }),
        response: { 200: ConnectView },
      },
    },
    async (request) => connectSessionView(services, throttleKeyOf(request), request.body.code),
  );

  app.post(
    '/api/v1/connect/complete',
    {
      config: {
        ...linkRoute,
        openapi: {
          problems: [
            ...linkRoute.openapi.problems,
            'destination_forbidden',
            'entitlement_missing',
            ['quota_exceeded', 409],
          ],
        },
      },
      schema: {
        tags,
        summary:
          "Complete a connect link: create its connection in the link's tenant and bind the credentials",
        description:
          'No credential and no CSRF token. The config is merged under the fields the link fixed (giving ' +
          'one of those is 400); URLs pass the SSRF policy. A link makes one connection: a wrong, ' +
          'completed, deleted or expired code is 401 invalid_credentials, throttled per address as ' +
          'sign-in is. An OAuth2 connector of the authorization-code grant answers 200 with the ' +
          "provider's URL to send the browser to (the connection is made, or the one an earlier try of the " +
          'link made is reused, pending authorization); the link completes when the callback binds the ' +
          'tokens, which returns to PUBLIC_URL/connect/<tenantId> with status=completed or ' +
          'authorizationError, and the person may try again while the link is pending.',
        body: CompleteBody,
        response: {
          200: Type.Object({ authorizationUrl: Type.String({ format: 'uri' }) }),
          201: Type.Object({ status: Type.Literal('completed'), connectionId: Type.String() }),
        },
      },
    },
    async (request, reply) => {
      const origin = auditOrigin(request, ctx.now());
      const done = await completeConnectSession(services, origin, throttleKeyOf(request), request.body);
      return 'authorizationUrl' in done ? reply.code(200).send(done) : reply.code(201).send(done);
    },
  );
};
