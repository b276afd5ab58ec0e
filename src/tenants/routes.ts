import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { MODULE_KEYS, ROLES } from '../access/catalog.js';
import { platformRule } from '../access/rules.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import {
  createTenant,
  createUser,
  getTenant,
  listTenants,
  platformScopeFor,
  setEntitlements,
} from './tenants.js';

const ModuleList = Type.Array(Type.Enum(MODULE_KEYS), {
  uniqueItems: true,
  maxItems: MODULE_KEYS.length,
});

const TenantSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  entitlements: Type.Array(Type.String()),
  createdAt: Timestamp,
});

const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.String(),
  tenantId: Type.String(),
});

/** The body of `POST /api/v1/platform/tenants/:id/users`. */
export const AddUserBody = StrictObject({
  email: Type.String({ format: 'email', maxLength: 254 }),
  role: Type.Enum(ROLES),
  password: Type.String({ minLength: 12, maxLength: 200 }),
});

const platform = platformRule();
const tags = ['platform: tenants'];

/** Tenants, their entitlements and their users: platform-operator routes of docs/api/platform.md. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const tenantRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  app.post(
    '/api/v1/platform/tenants',
    {
      config: platform,
      schema: {
        tags,
        summary: 'Create a tenant',
        body: StrictObject({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          entitlements: Type.Optional(ModuleList),
        }),
        response: { 201: TenantSchema },
      },
    },
    async (request, reply) => {
      const tenant = await createTenant(ctx, auditOrigin(request, ctx.now()), {
        name: request.body.name,
        entitlements: request.body.entitlements ?? [],
      });
      return reply.code(201).send(tenant);
    },
  );

  app.get(
    '/api/v1/platform/tenants',
    {
      config: platform,
      schema: {
        tags,
        summary: 'List tenants, newest first',
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(TenantSchema) },
      },
    },
    async (request) => listTenants(ctx, request.query),
  );

  app.get(
    '/api/v1/platform/tenants/:id',
    {
      config: platform,
      schema: { tags, summary: 'Read a tenant', params: IdParams, response: { 200: TenantSchema } },
    },
    async (request) => getTenant(ctx, request.params.id),
  );

  app.put(
    '/api/v1/platform/tenants/:id/entitlements',
    {
      config: platform,
      schema: {
        tags,
        summary: "Replace a tenant's module entitlements",
        params: IdParams,
        body: StrictObject({ entitlements: ModuleList }),
        response: { 200: TenantSchema },
      },
    },
    // Crosses tenants on purpose: a platform key manages the tenant the URL names, once found.
    async (request) =>
      setEntitlements(
        ctx,
        await platformScopeFor(ctx, request.principal, request.params.id),
        auditOrigin(request, ctx.now()),
        request.body.entitlements,
      ),
  );

  app.post(
    '/api/v1/platform/tenants/:id/users',
    {
      config: { ...platform, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Create a user in a tenant',
        params: IdParams,
        body: AddUserBody,
        response: { 201: UserSchema },
      },
    },
    async (request, reply) => {
      // Crosses tenants on purpose: a platform key adds users to the tenant the URL names, once found.
      const scope = await platformScopeFor(ctx, request.principal, request.params.id);
      const user = await createUser(ctx, scope, auditOrigin(request, ctx.now()), request.body);
      return reply.code(201).send(user);
    },
  );
};
