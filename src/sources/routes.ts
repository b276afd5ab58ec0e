import { Type, type TProperties } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { publicRule, tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, NoContent, Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { createIngest, ingestMetrics, OUTCOMES } from './ingest.js';
import { requestLogPage } from './request-log.js';
import { SCHEME_NAMES, SCHEMES } from './schemes/index.js';
import {
  createSource,
  editSource,
  getSource,
  removeSource,
  rotateSourceSecret,
  sourcesPage,
  type CreateSourceBody,
  type PatchSourceBody,
} from './sources.js';

// Incoming webhooks (docs/api/sources.md): the tenant's sources, their request log, and the public
// ingest URL each one has.

const SOURCES = '/api/v1/integrations/sources';
const tags = ['sources'];
const MAX_INGEST_BYTES = 1024 * 1024;

/** Every scheme's own fields, optional: which apply is checked by the source's scheme (sources.ts). */
const SchemeFields: TProperties = Object.fromEntries(
  Object.values(SCHEMES).flatMap((scheme) =>
    Object.entries(scheme.fields).map(([name, field]) => [name, Type.Optional(field)]),
  ),
);

// Typed as a string: the scheme names come from the scheme modules at run time.
const Scheme = Type.Unsafe<string>(
  Type.Union(
    SCHEME_NAMES.map((name) => Type.Literal(name)),
    { description: 'how the provider signs its requests' },
  ),
);
const TypePrefix = Type.String({
  pattern: '^[a-z0-9_-]{1,40}$',
  description: 'before each event type; the scheme’s name unless given',
});
const MaxPerSecond = Type.Integer({
  minimum: 1,
  maximum: 1000,
  description: 'requests a second this source takes (default 50)',
});
const Status = Type.Union([Type.Literal('active'), Type.Literal('paused')]);

export const SourceSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scheme: Scheme,
  typePrefix: Type.String(),
  ingestUrl: Type.String({ description: 'where the provider sends: PUBLIC_URL/ingest/<id>' }),
  status: Status,
  maxPerSecond: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  previousSecretValidUntil: Nullable(Timestamp),
  ...SchemeFields,
});

export const SourceWithSecret = Type.Object({
  ...SourceSchema.properties,
  secret: Type.Optional(Type.String({ description: 'only when hubgate made it: shown once' })),
});

export const CreateSourceBodySchema = StrictObject({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  scheme: Scheme,
  secret: Type.Optional(
    Type.String({
      minLength: 8,
      maxLength: 500,
      description: 'write-only; made by hubgate for standard-webhooks when left out',
    }),
  ),
  typePrefix: Type.Optional(TypePrefix),
  maxPerSecond: Type.Optional(MaxPerSecond),
  ...SchemeFields,
});

export const PatchSourceBodySchema = StrictObject({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  status: Type.Optional(Status),
  typePrefix: Type.Optional(TypePrefix),
  maxPerSecond: Type.Optional(MaxPerSecond),
  ...SchemeFields,
});

export const RotateSourceSecretBody = StrictObject({
  secret: Type.Optional(Type.String({ minLength: 8, maxLength: 500 })),
  previousValidForSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, default: 0 })),
});

export const SourceRequestSchema = Type.Object({
  id: Type.String(),
  receivedAt: Timestamp,
  outcome: Type.Enum(OUTCOMES),
  eventId: Nullable(Type.String()),
  providerDeliveryId: Nullable(Type.String()),
  eventType: Nullable(Type.String()),
  headers: Type.Record(Type.String(), Type.String(), {
    description: 'at most 20; signature values "[redacted]"',
  }),
  body: Type.String({ description: 'the first 4 KiB of the body as UTF-8' }),
  bodyTruncated: Type.Boolean(),
});

export const RequestLogQuery = StrictObject({
  ...PageQueryFields,
  outcome: Type.Optional(Type.Enum(OUTCOMES)),
  since: Type.Optional(Timestamp),
  until: Type.Optional(Timestamp),
});

const reader = tenantRule('integrations', 'READER');
const admin = tenantRule('integrations', 'ADMIN');

// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const sourceRoutes: RoutePlugin = async (app, deps) => {
  const { ctx } = deps;
  const ingest = createIngest(deps, ingestMetrics);

  app.post(
    SOURCES,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a source: an ingest URL that verifies and publishes a provider’s webhooks',
        body: CreateSourceBodySchema,
        response: { 201: SourceWithSecret },
      },
    },
    async (request, reply) => {
      const created = await createSource(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.body as CreateSourceBody,
      );
      return reply.code(201).send(created);
    },
  );

  app.get(
    SOURCES,
    {
      config: reader,
      schema: {
        tags,
        summary: 'The tenant’s sources (never a secret)',
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(SourceSchema) },
      },
    },
    async (request) => sourcesPage(ctx, requestScope(request), request.query),
  );

  app.get(
    `${SOURCES}/:id`,
    {
      config: reader,
      schema: {
        tags,
        summary: 'A source (never its secret)',
        params: IdParams,
        response: { 200: SourceSchema },
      },
    },
    async (request) => getSource(ctx, requestScope(request), request.params.id),
  );

  app.patch(
    `${SOURCES}/:id`,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Edit a source; pause or resume it with `status`',
        params: IdParams,
        body: PatchSourceBodySchema,
        response: { 200: SourceSchema },
      },
    },
    async (request) => {
      const edited = await editSource(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
        request.body as PatchSourceBody,
      );
      ingest.forget(edited.id);
      return edited;
    },
  );

  app.delete(
    `${SOURCES}/:id`,
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete a source: its ingest URL answers 404 from then on',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await removeSource(ctx, requestScope(request), auditOrigin(request, ctx.now()), request.params.id);
      ingest.forget(request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    `${SOURCES}/:id/rotate-secret`,
    {
      config: admin,
      schema: {
        tags,
        summary: 'A new secret; the old one may verify for an overlap',
        params: IdParams,
        body: RotateSourceSecretBody,
        response: { 200: SourceWithSecret },
      },
    },
    async (request) => {
      const rotated = await rotateSourceSecret(
        ctx,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
        request.body,
      );
      ingest.forget(rotated.id);
      return rotated;
    },
  );

  app.get(
    `${SOURCES}/:id/requests`,
    {
      config: reader,
      schema: {
        tags,
        summary: 'A source’s request log, newest first',
        params: IdParams,
        querystring: RequestLogQuery,
        response: { 200: PageOf(SourceRequestSchema) },
      },
    },
    async (request) => requestLogPage(ctx, requestScope(request), request.params.id, request.query),
  );

  // The ingest URL reads the body's exact bytes: the signature is over them.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser(
      'application/json',
      { parseAs: 'buffer', bodyLimit: MAX_INGEST_BYTES },
      (_request, body, done) => {
        done(null, body);
      },
    );
    raw.post<{ Params: { sourceId: string } }>(
      '/ingest/:sourceId',
      {
        // No credential: the signature is the proof. Not limited per address (a provider sends
        // from few): per source, by its maxPerSecond, before any database work.
        config: {
          ...publicRule({ unlimited: true }),
          openapi: {
            problems: [
              'invalid_signature',
              'rate_limited',
              'quota_exceeded',
              'unavailable',
              'payload_too_large',
              'unsupported_media_type',
            ],
          },
        },
        bodyLimit: MAX_INGEST_BYTES,
        schema: {
          tags,
          summary: 'A provider’s webhook: verified, de-duplicated and published as an event',
          description:
            'No credential: the request must carry its provider’s signature over the exact body (docs/api/sources.md). ' +
            '202 `{"id"}` for a new delivery; 200 `{"id","duplicate":true}` for one seen in the last 7 days; ' +
            'a Slack `url_verification` is answered 200 `{"challenge"}`.',
          params: StrictObject({ sourceId: Type.String({ maxLength: 100 }) }),
          response: {
            200: Type.Object({
              id: Type.Optional(Type.String()),
              duplicate: Type.Optional(Type.Boolean()),
              challenge: Type.Optional(Type.String()),
            }),
            202: Type.Object({ id: Type.String() }),
          },
        },
      },
      async (request, reply) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const answer = await ingest.handle(request.params.sourceId, { headers: request.headers, raw });
        return reply
          .code(answer.status)
          .headers(answer.headers ?? {})
          .send(answer.body);
      },
    );
  });
};
