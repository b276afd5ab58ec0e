import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { LEVELS, MODULE_KEYS, SCOPES } from '../access/catalog.js';
import { sessionOf } from '../access/principal.js';
import { keyManagementRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, NoContent, Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { allowedScopes, createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from './tenant-keys.js';

// Typed as any string: stored keys' scopes are read back as text.
const Scope = Type.Unsafe<string>(Type.Enum(SCOPES, { description: '<moduleKey>:<READER|OPERATOR|ADMIN>' }));

export const KeyRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  scopes: Type.Array(Scope),
  status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]),
  createdAt: Timestamp,
  createdBy: Nullable(Type.String()),
  expiresAt: Timestamp,
  lastUsedAt: Nullable(Timestamp),
  revokedAt: Nullable(Timestamp),
  rotatedAt: Nullable(Timestamp),
  rateLimitPerMinute: Nullable(
    Type.Integer({ description: 'Requests per minute of this key; null: the global RATE_LIMIT_PER_MINUTE' }),
  ),
});

/** A key's own limit: 1–100,000 requests per minute, null for the global `RATE_LIMIT_PER_MINUTE`. */
const RateLimitPerMinute = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: 100_000,
    description:
      'Requests per minute of this key (429 rate_limited beyond); null: the global RATE_LIMIT_PER_MINUTE',
  }),
);
export const KeyWithSecret = Type.Intersect([
  KeyRecord,
  Type.Object({ secret: Type.String({ description: 'Shown once; store it in a secret manager.' }) }),
]);

export const AllowedScopes = Type.Object({
  modules: Type.Array(
    Type.Object({
      moduleKey: Type.Enum(MODULE_KEYS),
      levels: Type.Array(Type.Enum(LEVELS)),
      entitled: Type.Boolean(),
    }),
  ),
  scopes: Type.Array(Scope),
});

/** The body of `POST /api/v1/company/api-keys/:id/rotate`. */
export const RotateKeyBody = StrictObject({
  expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
  previousSecretValidForSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
  /** Absent: the key keeps its limit; given: replaces it. */
  rateLimitPerMinute: Type.Optional(RateLimitPerMinute),
});

const keyManagement = keyManagementRule();
const tags = ['api keys'];

/** Tenant automation key management: interactive sessions of the key-managing roles (docs/api/keys.md). */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const keyRoutes: RoutePlugin = async (app, services) => {
  const { ctx, tenantKeys } = services;
  app.get(
    '/api/v1/company/api-keys',
    {
      config: keyManagement,
      schema: {
        tags,
        summary: "List the tenant's keys (prefix and metadata, never a secret)",
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(KeyRecord) },
      },
    },
    async (request) => listApiKeys(ctx, requestScope(request), request.query),
  );

  app.post(
    '/api/v1/company/api-keys',
    {
      config: { ...keyManagement, openapi: { problems: ['entitlement_missing'] } },
      schema: {
        tags,
        summary: 'Create a key; the secret is returned once',
        body: StrictObject({
          name: Type.String({ minLength: 1, maxLength: 100 }),
          scopes: Type.Array(Scope, {
            minItems: 1,
            maxItems: 20,
            uniqueItems: true,
          }),
          expiresAt: Type.String({
            format: 'date-time',
            description: 'At least 1 minute, at most 366 days ahead',
          }),
          rateLimitPerMinute: Type.Optional(RateLimitPerMinute),
        }),
        response: { 201: KeyWithSecret },
      },
    },
    async (request, reply) => {
      const key = await createApiKey(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        sessionOf(request.principal),
        request.body,
      );
      return reply.code(201).send(key);
    },
  );

  app.post(
    '/api/v1/company/api-keys/:id/rotate',
    {
      config: { ...keyManagement, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Rotate: a new secret for the same key, returned once',
        params: IdParams,
        body: RotateKeyBody,
        response: { 200: KeyWithSecret },
      },
    },
    async (request) => {
      const key = await rotateApiKey(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
        request.body,
      );
      tenantKeys.forget(key.id);
      return key;
    },
  );

  app.delete(
    '/api/v1/company/api-keys/:id',
    {
      config: keyManagement,
      schema: { tags, summary: 'Revoke a key', params: IdParams, response: { 204: NoContent } },
    },
    async (request, reply) => {
      await revokeApiKey(ctx, requestScope(request), auditOrigin(request, ctx.now()), request.params.id);
      tenantKeys.forget(request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/api/v1/company/api-keys/allowed-scopes',
    {
      config: keyManagement,
      schema: {
        tags,
        summary: 'Modules and levels a key can be given',
        response: {
          200: AllowedScopes,
        },
      },
    },
    async (request) => allowedScopes(requestScope(request).entitlements),
  );
};
