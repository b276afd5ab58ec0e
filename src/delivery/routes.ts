import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { EVENT_TYPE_PATTERN, EventTypePatterns } from '../connections/event-types.js';
import { ID_PATTERN } from '../crypto/ids.js';
import { DELIVERY_STATUSES } from '../db/schema.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import { RFC3339_PATTERN } from '../http/time.js';
import type { RoutePlugin } from '../services.js';
import { itemValidator, MAX_BATCH_EVENTS } from './batch.js';
import { connectionEventLog, deliveryDetail } from './event-log.js';
import { retryDelivery } from './manual-retry.js';
import { publishBatch, publishEvent } from './publish.js';

export const STATUSES = DELIVERY_STATUSES;

const StringMap = Type.Record(Type.String(), Type.String());

const AttemptRequestSchema = Type.Object(
  { method: Type.String(), url: Type.String(), headers: StringMap },
  { description: "what was sent; the value of a credential header (the http connector's) is `[redacted]`" },
);

const AttemptResponseSchema = Type.Object(
  {
    headers: Type.Record(Type.String(), Type.String(), { description: 'at most 20, in the order they came' }),
    body: Nullable(
      Type.String({
        description: 'the first DELIVERY_RESPONSE_BODY_BYTES of the body as UTF-8; null when none are kept',
      }),
    ),
    bodyTruncated: Type.Boolean({ description: 'the body had more bytes than were kept' }),
  },
  { description: 'what the receiver answered' },
);

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
  test: Type.Boolean({ description: 'made by `POST …/connections/:id/test`' }),
  orderingKey: Nullable(
    Type.String({
      description:
        "the event's `orderingKey` when the connection orders per key (`ordering: per-key`); else null",
    }),
  ),
  waitingFor: Nullable(
    Type.String({ description: 'the delivery this one waits for under per-key ordering; else null' }),
  ),
  attempts: Type.Array(
    Type.Object({
      number: Type.Integer(),
      startedAt: Timestamp,
      durationMs: Type.Integer(),
      remoteAddress: Nullable(Type.String()),
      responseStatus: Nullable(Type.Integer()),
      error: Nullable(Type.String()),
      errorDetail: Nullable(Type.String()),
      request: Type.Union([AttemptRequestSchema, Type.Null()], {
        description: 'what was sent; null for an attempt recorded before requests were kept',
      }),
      response: Type.Union([AttemptResponseSchema, Type.Null()], {
        description: 'null when no answer came (a timeout, a refused connection) or it was not kept',
      }),
    }),
  ),
});

export const DeliveryDetailSchema = Type.Object({
  ...DeliverySchema.properties,
  payload: Type.Record(Type.String(), Type.Unknown(), {
    description: 'the body exactly as it was (or will be) delivered, as a JSON object',
  }),
});

const STATUS_NAMES = STATUSES.join('|');

/** The log's filters (docs/api/events.md), each optional; a cursor is valid only with the filters it was made with. */
export const LogQuery = StrictObject({
  ...PageQueryFields,
  status: Type.Optional(
    Type.String({
      pattern: `^(${STATUS_NAMES})(,(${STATUS_NAMES}))*$`,
      maxLength: 200,
      description: `comma-separated, any of ${STATUSES.join(', ')}`,
    }),
  ),
  // One pattern as a connection's `eventTypes` holds them.
  eventType: Type.Optional(EventTypePatterns.items),
  eventId: Type.Optional(
    Type.String({
      pattern: ID_PATTERN('evt'),
      description: "the event's deliveries (none for an unknown event or another tenant's)",
    }),
  ),
  since: Type.Optional(
    Type.String({
      format: 'date-time',
      pattern: RFC3339_PATTERN,
      description: 'RFC 3339; deliveries created at or after it',
    }),
  ),
  until: Type.Optional(
    Type.String({
      format: 'date-time',
      pattern: RFC3339_PATTERN,
      description: 'RFC 3339; deliveries created before it (not after since)',
    }),
  ),
  test: Type.Optional(Type.Boolean({ description: 'test deliveries only, or none of them' })),
  responseStatus: Type.Optional(
    Type.String({
      pattern: '^([245]xx|[1-5][0-9]{2})$',
      description: "`2xx`, `4xx`, `5xx` or a status code, matched on the last attempt's answer",
    }),
  ),
});

/** The answer of `POST …/events/:deliveryId/retry`: the delivery, pending again. */
export const RetryAnswer = Type.Object({ id: Type.String(), status: Type.Literal('pending') });

const EventFields = {
  type: Type.String({ pattern: EVENT_TYPE_PATTERN }),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'a JSON object of at most 256 KiB' }),
  orderingKey: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'on a per-key connection, deliveries of events with the same key are attempted one at a time, ' +
        'in publish order',
    }),
  ),
};
const EventBody = StrictObject(EventFields);
const BatchEventFields = {
  ...EventFields,
  idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
};
/** One event of a batch, as each is checked at run time (batch.ts), so that one refused is refused alone. */
const BatchEventSchema = StrictObject(BatchEventFields);
/**
 * The batch body as the document shows it: the envelope the route checks, with each event's schema.
 * A separate object from the one compiled for the check, so that its name ($id) is the document's.
 */
const DocumentedBatchBody = StrictObject({
  events: Type.Array(
    StrictObject(BatchEventFields, {
      $id: 'BatchEvent',
      description:
        'An event as published alone. One that does not match is refused on its own: its answer is ' +
        '`{"error":{"status":400,"code":"validation_failed",…}}` and the others are published.',
    }),
    { minItems: 1, maxItems: MAX_BATCH_EVENTS },
  ),
});

const PublishedSchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  createdAt: Timestamp,
  deliveries: Type.Integer({ description: 'how many deliveries were enqueued' }),
  warnings: Type.Optional(
    Type.Array(Type.String(), {
      description: 'the catalog’s, e.g. `event type … is deprecated`; absent if none',
    }),
  ),
});

const tags = ['events'];

/** Publishing events and reading a connection's delivery log (docs/api/events.md). */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const deliveryRoutes: RoutePlugin = async (app, deps) => {
  const { announce } = deps;
  app.post(
    '/api/v1/integrations/events',
    {
      config: {
        ...tenantRule('integrations', 'OPERATOR'),
        openapi: { problems: ['conflict', 'quota_exceeded'] },
        mcp: {
          tool: 'publish_event',
          headers: { idempotencyKey: 'idempotency-key' },
          // Idempotent only with an idempotencyKey; without one each call publishes again.
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
        },
      },
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
        requestScope(request),
        auditOrigin(request, deps.ctx.now()),
        request.body,
        request.headers['idempotency-key'],
      );
      return reply.code(202).send(published);
    },
  );

  const checkItem = itemValidator(BatchEventSchema);
  app.post(
    '/api/v1/integrations/events/batch',
    {
      config: {
        ...tenantRule('integrations', 'OPERATOR'),
        openapi: { body: DocumentedBatchBody, problems: ['quota_exceeded'] },
      },
      schema: {
        tags,
        summary: 'Publish up to 100 events, each as if published alone',
        description:
          'One answer per event, in order: what publishing it alone answers, or `{"error":{…}}` for ' +
          'an event refused on its own (its fields, an idempotency conflict, its size). A malformed ' +
          'envelope is 400 for the whole batch. Body at most 1 MiB.',
        body: StrictObject({
          events: Type.Array(
            Type.Unknown({ description: '`{"type","data","idempotencyKey"?,"orderingKey"?}`' }),
            {
              minItems: 1,
              maxItems: MAX_BATCH_EVENTS,
            },
          ),
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
                    errors: Type.Optional(
                      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
                        description: "a schema's findings on the event's `data`, paths from `/data`",
                      }),
                    ),
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
        requestScope(request),
        auditOrigin(request, deps.ctx.now()),
        request.body.events,
        checkItem,
      );
      return reply.code(202).send({ data });
    },
  );

  app.get(
    '/api/v1/integrations/connections/:id/events',
    {
      config: {
        ...tenantRule('integrations', 'READER', { portal: 'read' }),
        mcp: {
          tool: 'list_deliveries',
          params: { id: 'connectionId' },
          annotations: { readOnlyHint: true, idempotentHint: true },
        },
      },
      schema: {
        tags,
        summary: "The connection's deliveries, newest first, with every attempt",
        description:
          'Filters combine (all must hold). A cursor carries the filters it was made with: with any ' +
          'other filters (one added, left off or changed) it is refused (400).',
        params: IdParams,
        querystring: LogQuery,
        response: { 200: PageOf(DeliverySchema) },
      },
    },
    async (request) => connectionEventLog(deps, requestScope(request), request.params.id, request.query),
  );

  app.get(
    '/api/v1/integrations/connections/:id/events/:deliveryId',
    {
      config: {
        ...tenantRule('integrations', 'READER', { portal: 'read' }),
        mcp: {
          tool: 'get_delivery',
          params: { id: 'connectionId' },
          annotations: { readOnlyHint: true, idempotentHint: true },
        },
      },
      schema: {
        tags,
        summary: 'One delivery, with every attempt and the payload it is sent with',
        params: StrictObject({ id: Type.String(), deliveryId: Type.String() }),
        response: { 200: DeliveryDetailSchema },
      },
    },
    async (request) =>
      deliveryDetail(deps, requestScope(request), request.params.id, request.params.deliveryId),
  );

  app.post(
    '/api/v1/integrations/connections/:id/events/:deliveryId/retry',
    {
      config: {
        ...tenantRule('integrations', 'OPERATOR', { portal: 'operate' }),
        openapi: { problems: ['conflict'] },
        mcp: {
          tool: 'retry_delivery',
          params: { id: 'connectionId' },
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
        },
      },
      schema: {
        tags,
        summary: 'Send a failed delivery again (active connections only)',
        params: StrictObject({ id: Type.String(), deliveryId: Type.String() }),
        response: { 202: RetryAnswer },
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
