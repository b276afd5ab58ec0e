import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { KEY_MANAGING_ROLES, SCOPES } from '../access/catalog.js';
import { sessionOf } from '../access/principal.js';
import { keyManagementRule, sessionRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { IdParams, NoContent, Nullable, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { ownTenant } from '../tenants/tenants.js';
import { consentView, decideConsent, endGrant, tenantGrants, type Approver } from './authorization.js';

// The person's side of OAuth for MCP clients (docs/api/mcp.md): the consent page's two routes, and
// the grants on the API keys page. A grant reaches as far as a key, so only the key-managing roles
// approve, list and revoke them.

const Scope = Type.Unsafe<string>(Type.Enum(SCOPES, { description: '<moduleKey>:<READER|OPERATOR|ADMIN>' }));

export const ConsentAnswer = Type.Object({
  client: Type.Object({ name: Type.String(), redirectUri: Type.String() }),
  tenant: Type.Object({ id: Type.String(), name: Type.String() }),
  scopes: Type.Array(Scope, {
    description: 'The scopes asked that the person may grant: offer each as a choice.',
  }),
});

export const ConsentBody = StrictObject({
  request: Type.String({ minLength: 1, maxLength: 100 }),
  approve: Type.Boolean(),
  scopes: Type.Optional(
    Type.Array(Scope, {
      maxItems: 30,
      uniqueItems: true,
      description: 'A subset of the offered scopes; all of them when left out.',
    }),
  ),
});

export const ConsentDecision = Type.Object({
  redirectUri: Type.String({
    description: "The application's redirect URI with code and state, or error=access_denied.",
  }),
});

export const McpGrantRecord = Type.Object({
  id: Type.String(),
  client: Type.Object({ id: Type.String(), name: Type.String() }),
  scopes: Type.Array(Scope),
  approvedBy: Type.String({ description: 'The e-mail address of the person who approved it.' }),
  createdAt: Timestamp,
  lastUsedAt: Nullable(Timestamp),
});

export const McpGrantList = Type.Object({
  data: Type.Array(McpGrantRecord, { description: 'The grants in force, newest first (at most 200).' }),
});

const approvers = sessionRule(KEY_MANAGING_ROLES);
const tags = ['mcp'];

// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const mcpConsentRoutes: RoutePlugin = async (app, services) => {
  const { ctx, mcpAccessTokens } = services;
  const publicUrl = ctx.config.publicUrl;

  const approverOf = async (
    principal: unknown,
    scope: ReturnType<typeof requestScope>,
  ): Promise<Approver> => {
    const session = sessionOf(principal);
    const tenant = await ownTenant(ctx, scope);
    return { userId: session.userId, role: session.role, tenant: { id: tenant.id, name: tenant.name } };
  };

  app.get(
    '/api/v1/oauth/consent/:request',
    {
      config: approvers,
      schema: {
        tags,
        summary: "An MCP client's authorization request, as the consent page shows it",
        params: StrictObject({ request: Type.String({ maxLength: 100 }) }),
        response: { 200: ConsentAnswer },
      },
    },
    async (request) => {
      const scope = requestScope(request);
      return consentView(ctx, scope, await approverOf(request.principal, scope), request.params.request);
    },
  );

  app.post(
    '/api/v1/oauth/consent',
    {
      config: { ...approvers, openapi: { problems: ['not_found'] } },
      schema: {
        tags,
        summary: "Approve or deny an MCP client's authorization request",
        body: ConsentBody,
        response: { 200: ConsentDecision },
      },
    },
    async (request) => {
      const scope = requestScope(request);
      const approver = await approverOf(request.principal, scope);
      return decideConsent(ctx, scope, approver, auditOrigin(request, ctx.now()), publicUrl, request.body);
    },
  );

  app.get(
    '/api/v1/company/oauth-grants',
    {
      config: keyManagementRule(),
      schema: {
        tags: ['api keys'],
        summary: 'The MCP clients given access to the tenant, with their scopes and last use',
        response: { 200: McpGrantList },
      },
    },
    async (request) => ({ data: await tenantGrants(ctx, requestScope(request)) }),
  );

  app.delete(
    '/api/v1/company/oauth-grants/:id',
    {
      config: keyManagementRule(),
      schema: {
        tags: ['api keys'],
        summary: "Revoke an MCP client's access",
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await endGrant(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
        (grantId) => mcpAccessTokens.forget(grantId),
      );
      return reply.code(204).send(null);
    },
  );
};
