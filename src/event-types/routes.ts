import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { NoContent, Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { createEventType, deleteEventType, getEventType, listEventTypes, patchEventType } from './catalog.js';

const NAME_PATTERN = '^[a-z0-9_.-]{1,100}$';

const JsonSchema = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'a JSON Schema 2020-12 for `data`: at most 64 KiB, local `$ref`s only, `pattern`s in RE2 syntax ' +
    '(docs/api/limits.md has the bounds)',
});

export const EventTypeSchema = Type.Object({
  name: Type.String(),
  description: Nullable(Type.String()),
  schema: Nullable(JsonSchema),
  deprecated: Type.Boolean({ description: 'events of this type are accepted with a warning' }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Description = Type.String({ maxLength: 1000 });

export const CreateEventTypeBody = StrictObject({
  name: Type.String({ pattern: NAME_PATTERN, description: 'the `type` events are published with' }),
  description: Type.Optional(Description),
  schema: Type.Optional(Nullable(JsonSchema)),
  deprecated: Type.Optional(Type.Boolean()),
});

export const PatchEventTypeBody = StrictObject({
  description: Type.Optional(Nullable(Description)),
  schema: Type.Optional(Nullable(JsonSchema)),
  deprecated: Type.Optional(Type.Boolean()),
});

// A name that could not be registered is simply not found (404), as a malformed ID is (docs/api/conventions.md).
const NameParams = StrictObject({ name: Type.String() });

const tags = ['event types'];
const PATH = '/api/v1/integrations/event-types';

/** The event-type catalog (docs/api/events.md): names, schemas for `data`, deprecation; every change audited. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const eventTypeRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  app.get(
    PATH,
    {
      config: {
        ...tenantRule('integrations', 'READER', { portal: 'read' }),
        mcp: { tool: 'list_event_types', annotations: { readOnlyHint: true, idempotentHint: true } },
      },
      schema: {
        tags,
        summary: "The tenant's event types, by name",
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(EventTypeSchema) },
      },
    },
    async (request) => listEventTypes(ctx.db, ctx.keyring, requestScope(request), request.query),
  );

  app.post(
    PATH,
    {
      config: { ...tenantRule('integrations', 'ADMIN'), openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Register an event type, with a schema its events’ `data` must match',
        body: CreateEventTypeBody,
        response: { 201: EventTypeSchema },
      },
    },
    async (request, reply) => {
      const origin = auditOrigin(request, ctx.now());
      const created = await createEventType(ctx.db, requestScope(request), origin, request.body);
      return reply.code(201).send(created);
    },
  );

  app.get(
    `${PATH}/:name`,
    {
      config: tenantRule('integrations', 'READER'),
      schema: { tags, summary: 'One event type', params: NameParams, response: { 200: EventTypeSchema } },
    },
    async (request) => getEventType(ctx.db, requestScope(request), request.params.name),
  );

  app.patch(
    `${PATH}/:name`,
    {
      config: tenantRule('integrations', 'ADMIN'),
      schema: {
        tags,
        summary: 'Change an event type’s description, schema or deprecation; `null` clears',
        params: NameParams,
        body: PatchEventTypeBody,
        response: { 200: EventTypeSchema },
      },
    },
    async (request) =>
      patchEventType(
        ctx.db,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.name,
        request.body,
      ),
  );

  app.delete(
    `${PATH}/:name`,
    {
      config: tenantRule('integrations', 'ADMIN'),
      schema: { tags, summary: 'Remove an event type', params: NameParams, response: { 204: NoContent } },
    },
    async (request, reply) => {
      await deleteEventType(
        ctx.db,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.name,
      );
      return reply.code(204).send(null);
    },
  );
};
