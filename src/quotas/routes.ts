import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { platformRule } from '../access/rules.js';
import { IdParams, Nullable, StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { getQuotas, setQuotas } from './quotas.js';

/** The body of `PUT /api/v1/platform/tenants/:id/quotas`: all four, null for no limit. */
export const QuotasBody = StrictObject({
  eventsPerDay: Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  connections: Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  requestsPerMinute: Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  retentionDays: Nullable(Type.Integer({ minimum: 1, maximum: 365 })),
});

/** The answer of both routes: the quotas and the tenant's usage of those that count. */
export const QuotasSchema = Type.Object({
  eventsPerDay: Nullable(Type.Integer()),
  connections: Nullable(Type.Integer()),
  requestsPerMinute: Nullable(Type.Integer()),
  retentionDays: Nullable(Type.Integer()),
  usage: Type.Object({ eventsToday: Type.Integer(), connections: Type.Integer() }),
});

const platform = platformRule();
const tags = ['platform: tenants'];

/** A tenant's quotas: platform-operator routes of docs/api/quotas.md. */
export const quotaRoutes: RoutePlugin = async (app, { ctx }) => {
  app.get(
    '/api/v1/platform/tenants/:id/quotas',
    {
      config: platform,
      schema: {
        tags,
        summary: "Read a tenant's quotas and its usage of them",
        params: IdParams,
        response: { 200: QuotasSchema },
      },
    },
    // Crosses tenants on purpose: a platform key manages the tenant the URL names.
    async (request) => getQuotas(ctx, request.params.id),
  );

  app.put(
    '/api/v1/platform/tenants/:id/quotas',
    {
      config: platform,
      schema: {
        tags,
        summary: "Replace a tenant's quotas",
        params: IdParams,
        body: QuotasBody,
        response: { 200: QuotasSchema },
      },
    },
    async (request) => setQuotas(ctx, auditOrigin(request, ctx.now()), request.params.id, request.body),
  );
};
