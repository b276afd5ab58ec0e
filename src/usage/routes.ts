import { Type } from 'typebox';
import { platformRule, tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { StrictObject } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { platformCsv, tenantCsv, usageBuckets, usageRange, wantsCsv } from './usage.js';

// A tenant's usage and the platform's view of every tenant's (docs/api/usage.md).

const Count = Type.Integer({ minimum: 0 });

const BucketFields = {
  start: Type.String({ format: 'date-time', description: 'the UTC start of the hour or day' }),
  eventsPublished: Count,
  deliveries: Type.Object({ delivered: Count, failed: Count, skipped: Count }),
  attempts: Count,
  proxyCalls: Count,
  ingested: Count,
};

export const UsageBucketSchema = Type.Object(BucketFields);
export const UsageList = Type.Object({ data: Type.Array(UsageBucketSchema) });
export const PlatformUsageList = Type.Object({
  data: Type.Array(Type.Object({ tenantId: Type.String(), ...BucketFields })),
});

const RangeFields = {
  from: Type.Optional(
    Type.String({
      description:
        'ISO 8601 date or date-time; the first bucket is the one holding it (default: to − 30 days by day, − 24 hours by hour)',
    }),
  ),
  to: Type.Optional(
    Type.String({
      description: 'ISO 8601 date or date-time; the last bucket is the one holding it (default: now)',
    }),
  ),
  granularity: Type.Optional(
    Type.Union([Type.Literal('hour'), Type.Literal('day')], {
      description: 'UTC hours or days (default day)',
    }),
  ),
};

export const UsageQuerySchema = StrictObject(RangeFields);
export const PlatformUsageQuerySchema = StrictObject({
  ...RangeFields,
  tenantId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
});

/** The 200 answer as JSON, or as CSV for `Accept: text/csv`. */
const answers = (json: object, csvHeader: string) => ({
  200: {
    description: `The buckets; with Accept: text/csv the same as CSV (header: ${csvHeader})`,
    content: {
      'application/json': { schema: json },
      'text/csv': { schema: Type.String() },
    },
  },
});

const CSV_HEADER = 'start,eventsPublished,delivered,failed,skipped,attempts,proxyCalls,ingested';

export const usageRoutes: RoutePlugin = async (app, { ctx }) => {
  app.get(
    '/api/v1/integrations/usage',
    {
      config: tenantRule('integrations', 'READER'),
      schema: {
        tags: ['usage'],
        summary:
          "The tenant's usage per hour or day: events, deliveries by outcome, attempts, proxy calls, ingested",
        description:
          'Every bucket of the range, zeros included; the range is at most 400 days. Counts are exact and ' +
          'appear within about a second of what they count.',
        querystring: UsageQuerySchema,
        response: answers(UsageList, CSV_HEADER),
      },
    },
    async (request, reply) => {
      const range = usageRange(request.query, ctx.now());
      const { tenantId } = requestScope(request);
      const [tenant] = await usageBuckets(ctx.db, tenantId, range);
      const buckets = tenant?.buckets ?? [];
      if (wantsCsv(request.headers.accept))
        return reply.type('text/csv; charset=utf-8').send(tenantCsv(buckets));
      return reply.type('application/json; charset=utf-8').send({ data: buckets });
    },
  );

  app.get(
    '/api/v1/platform/usage',
    {
      config: platformRule(),
      schema: {
        tags: ['platform: usage'],
        summary: "Every tenant's usage per hour or day, or one tenant's",
        description:
          'With tenantId, every bucket of that tenant (zeros included); without, every bucket of each tenant ' +
          'with any usage in the range, ordered by tenant then start. The range is at most 400 days.',
        querystring: PlatformUsageQuerySchema,
        response: answers(PlatformUsageList, `tenantId,${CSV_HEADER}`),
      },
    },
    async (request, reply) => {
      const { tenantId, ...query } = request.query;
      const range = usageRange(query, ctx.now());
      const tenants = await usageBuckets(ctx.db, tenantId, range);
      if (wantsCsv(request.headers.accept))
        return reply.type('text/csv; charset=utf-8').send(platformCsv(tenants));
      const data = tenants.flatMap((t) => t.buckets.map((b) => ({ tenantId: t.tenantId, ...b })));
      return reply.type('application/json; charset=utf-8').send({ data });
    },
  );
};
