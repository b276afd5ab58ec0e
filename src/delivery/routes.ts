import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import type { AccessRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { EVENT_TYPE_PATTERN } from '../connections/event-types.js';
import { DELIVERY_STATUSES } from '../db/schema.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import { itemValidator, MAX_BATCH_EVENTS, publishBatch } from './batch.js';
import { connectionEventLog } from './event-log.js';
import { createEventWriter } from './group-commit.js';
import { retryDelivery } from './manual-retry.js';
import { publishEvent } from './publish.js';
import type { Dispatch } from './worker.js';

export const STATUSES = DELIVERY_STATUSES;

export const DeliverySchema = Type.Object({
  id: Type.String(),
  eventId: Type.String(),
  eventType: Type.String(),
  status: Type.Enum(STATUSES),
  attemptCount: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  nextAttemptAt: Nullable(Timestamp),
  deliveredAt: Nullable(Timestamp),
  attempts: Type.Array(
    Type.Object({
      number: Type.Integer(),
      startedAt: Timestamp,
      durationMs: Type.Integer(),
      remoteAddress: Nullable(Type.String()),
      responseStatus: Nullable(Type.Integer()),
      error: Nullable(Type.String()),
      errorDetail: Nullable(Type.String()),
    }),
  ),
});

const EventFields = {
  type: Type.String({ pattern: EVENT_TYPE_PATTERN }),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'a JSON object of at most 256 KiB' }),
};
const EventBody = StrictObject(EventFields);
const BatchEventSchema = StrictObject({
  ...EventFields,
  idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
});

const PublishedSchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  createdAt: Timestamp,
  deliveries: Type.Integer({ description: 'how many deliveries were enqueued' }),
});

const rule = (level: 'READER' | 'OPERATOR'): { access: AccessRule } => ({
  access: { class: 'tenant', automation: true, anyOf: [{ module: 'integrations', level }] },
});
const tags = ['events'];

/** Publishing events and reading a connection's delivery log (contract §7). */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export function deliveryRoutes(
  deps: ConnectionDeps,
  announce: () => void,
  local: { dispatch?: Dispatch } = {},
): FastifyPluginAsyncTypebox {
  // eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
  return async (app) => {
    const writer = createEventWriter(deps, local);
    app.post(
      '/api/v1/integrations/events',
      {
        config: { ...rule('OPERATOR'), openapi: { problems: ['conflict'] } },
        schema: {
          tags,
          summary: 'Publish an event: one delivery per matching active connection with credentials',
          headers: Type.Object({
            'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
          }),
          body: EventBody,
          response: { 202: PublishedSchema },
        },
      },
      async (request, reply) => {
        const published = await publishEvent(
          deps,
          writer,
          requestScope(request),
          auditOrigin(request, deps.ctx.now()),
          request.body,
          request.headers['idempotency-key'],
        );
        if (published.deliveries > 0) announce();
        return reply.code(202).send(published);
      },
    );

    const checkItem = itemValidator(BatchEventSchema);
    app.post(
      '/api/v1/integrations/events/batch',
      {
        config: rule('OPERATOR'),
        schema: {
          tags,
          summary: 'Publish up to 100 events, each as if published alone',
          description:
            'One answer per event, in order: what publishing it alone answers, or `{"error":{…}}` for ' +
            'an event refused on its own (its fields, an idempotency conflict, its size). A malformed ' +
            'envelope is 400 for the whole batch. Body at most 1 MiB.',
          body: StrictObject({
            events: Type.Array(Type.Unknown({ description: '`{"type","data","idempotencyKey"?}`' }), {
              minItems: 1,
              maxItems: MAX_BATCH_EVENTS,
            }),
          }),
          response: {
            202: Type.Object({
              data: Type.Array(
                Type.Union([
                  PublishedSchema,
                  Type.Object({
                    error: Type.Object({
                      status: Type.Integer(),
                      code: Type.String(),
                      detail: Nullable(Type.String()),
                    }),
                  }),
                ]),
              ),
            }),
          },
        },
      },
      async (request, reply) => {
        const data = await publishBatch(
          deps,
          writer,
          requestScope(request),
          auditOrigin(request, deps.ctx.now()),
          request.body.events,
          checkItem,
        );
        if (data.some((item) => 'deliveries' in item && item.deliveries > 0)) announce();
        return reply.code(202).send({ data });
      },
    );

    app.get(
      '/api/v1/integrations/connections/:id/events',
      {
        config: rule('READER'),
        schema: {
          tags,
          summary: "The connection's deliveries, newest first, with every attempt",
          params: IdParams,
          querystring: StrictObject({ ...PageQueryFields, status: Type.Optional(Type.Enum(STATUSES)) }),
          response: { 200: PageOf(DeliverySchema) },
        },
      },
      async (request) => connectionEventLog(deps, requestScope(request), request.params.id, request.query),
    );

    app.post(
      '/api/v1/integrations/connections/:id/events/:deliveryId/retry',
      {
        config: { ...rule('OPERATOR'), openapi: { problems: ['conflict'] } },
        schema: {
          tags,
          summary: 'Send a failed delivery again (active connections only)',
          params: StrictObject({ id: Type.String(), deliveryId: Type.String() }),
          response: { 202: Type.Object({ id: Type.String(), status: Type.Literal('pending') }) },
        },
      },
      async (request, reply) => {
        const { id, deliveryId } = request.params;
        await retryDelivery(deps, requestScope(request), id, deliveryId);
        announce();
        return reply.code(202).send({ id: deliveryId, status: 'pending' as const });
      },
    );
  };
}
