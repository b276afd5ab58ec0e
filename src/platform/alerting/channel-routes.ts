import { Type, type TSchema } from 'typebox';
import { auditOrigin } from '../../access/audit.js';
import { platformRule } from '../../access/rules.js';
import { PageQueryFields } from '../../http/pagination.js';
import {
  IdParams,
  NoContent,
  Nullable,
  PageOf,
  pascalCase,
  StrictObject,
  Timestamp,
} from '../../http/schemas.js';
import type { RoutePlugin } from '../../services.js';
import {
  createChannel,
  deleteChannel,
  getChannel,
  listChannels,
  patchChannel,
  testChannel,
  type AlertingDeps,
} from './channels.js';
import { CHANNEL_KIND_DEFINITIONS, CHANNEL_KINDS, type ChannelKind } from './kinds.js';

const ChannelSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: Type.Enum(CHANNEL_KINDS),
  enabled: Type.Boolean(),
  config: Type.Record(Type.String(), Type.Unknown(), { description: 'the fields that are not secret' }),
  secretFields: Type.Array(Type.String(), { description: 'names of the secret fields that are set' }),
  lastAttempt: Nullable(
    Type.Object(
      {
        at: Timestamp,
        ok: Type.Boolean({ description: 'the channel took it' }),
        responseStatus: Nullable(Type.Integer({ description: 'HTTP status or SMTP reply code' })),
        error: Nullable(Type.String({ description: 'what went wrong, in words; never a secret' })),
        test: Type.Boolean({ description: 'a test sent on request, not an alert notification' }),
      },
      { description: 'the latest notification or test sent to the channel; null before the first' },
    ),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Name = Type.String({ minLength: 1, maxLength: 200 });
const ConfigBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    "the kind's fields (docs/operators/alerting.md), secret ones included; EMAIL: to[], from, smtpHost, smtpPort, " +
    'smtpUser?, smtpPassword?; WEBHOOK: url; SLACK: webhookUrl; GRAFANA: baseUrl, tags[], ' +
    'serviceAccountToken; HTTP: url, method?, headers?',
});

/** The body of `POST /api/v1/platform/alerting/channels`: `config` holds the kind's fields. */
export const CreateChannelBody = StrictObject({
  name: Name,
  kind: Type.Enum(CHANNEL_KINDS),
  enabled: Type.Optional(Type.Boolean()),
  config: ConfigBody,
});

/** The body of `PATCH …/channels/:id`: `null` in `config` removes an optional field. */
export const EditChannelBody = StrictObject({
  name: Type.Optional(Name),
  kind: Type.Optional(Type.Enum(CHANNEL_KINDS)),
  enabled: Type.Optional(Type.Boolean()),
  config: Type.Optional(ConfigBody),
});

/** A kind's config fields a body may give: every one but those hubgate generates. */
function givenFields(kind: ChannelKind): Array<[string, TSchema]> {
  const definition = CHANNEL_KIND_DEFINITIONS[kind];
  const generated = new Set(Object.keys(definition.generated ?? {}));
  return Object.entries(definition.config.properties).filter(([field]) => !generated.has(field));
}

/**
 * The create body as checked at run time (channels.ts): one named schema per kind, chosen by
 * `kind`, with that kind's `config`.
 */
const DocumentedCreateBody = Type.Unsafe({
  type: 'object',
  required: ['kind'],
  discriminator: { propertyName: 'kind' },
  oneOf: CHANNEL_KINDS.map((kind) =>
    StrictObject(
      {
        name: Name,
        kind: Type.Literal(kind),
        enabled: Type.Optional(Type.Boolean()),
        config: StrictObject(Object.fromEntries(givenFields(kind))),
      },
      { $id: `${pascalCase(kind)}ChannelCreate`, title: `${kind} channel` },
    ),
  ),
});

/**
 * The PATCH body: `config` holds some fields of the channel's kind, and `null` removes an optional
 * one; the kind is the stored one, so the config is any of the kinds' partial configs.
 */
const DocumentedPatchBody = StrictObject({
  name: Type.Optional(Name),
  kind: Type.Optional(Type.Enum(CHANNEL_KINDS, { description: 'the channel’s own kind; it cannot change' })),
  enabled: Type.Optional(Type.Boolean()),
  config: Type.Optional(
    Type.Union(
      CHANNEL_KINDS.map((kind) => {
        const required = new Set(CHANNEL_KIND_DEFINITIONS[kind].config.required ?? []);
        const fields = givenFields(kind).map(([field, schema]) => [
          field,
          Type.Optional(required.has(field) ? schema : Nullable(schema)),
        ]);
        return StrictObject(Object.fromEntries(fields), {
          $id: `${pascalCase(kind)}ChannelConfigPatch`,
          title: `${kind} config fields to change`,
        });
      }),
    ),
  ),
});

/** `GRAFANA baseUrl with serviceAccountToken; …`: what a changed destination must be given again. */
const BOUND_SECRETS = CHANNEL_KINDS.flatMap((kind) =>
  Object.entries(CHANNEL_KIND_DEFINITIONS[kind].destinationSecrets ?? {}).map(
    ([destination, secrets]) => `${kind} \`${destination}\` with \`${secrets.join('`, `')}\``,
  ),
).join('; ');

const platform = platformRule();
const tags = ['platform: alerting'];
const CHANNELS = '/api/v1/platform/alerting/channels';

/** Alerting channels (docs/operators/alerting.md): secret fields write-only, every change audited. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const alertChannelRoutes: RoutePlugin = async (app, services) => {
  const deps: AlertingDeps = { ctx: services.ctx, sender: services.alertSender };
  const { ctx } = deps;
  app.post(
    CHANNELS,
    {
      config: { ...platform, openapi: { problems: ['destination_forbidden'], body: DocumentedCreateBody } },
      schema: {
        tags,
        summary: 'Create a channel; a WEBHOOK channel’s generated signing secret is returned this once',
        body: CreateChannelBody,
        response: {
          201: Type.Intersect([
            ChannelSchema,
            Type.Object({
              signingSecret: Type.Optional(Type.String({ description: 'WEBHOOK only; shown once' })),
            }),
          ]),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createChannel(ctx, auditOrigin(request, ctx.now()), request.body)),
  );

  app.get(
    CHANNELS,
    {
      config: platform,
      schema: {
        tags,
        summary: 'List channels, newest first',
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(ChannelSchema) },
      },
    },
    async (request) => listChannels(ctx, request.query),
  );

  app.get(
    `${CHANNELS}/:id`,
    {
      config: platform,
      schema: { tags, summary: 'Read a channel', params: IdParams, response: { 200: ChannelSchema } },
    },
    async (request) => getChannel(ctx, request.params.id),
  );

  app.patch(
    `${CHANNELS}/:id`,
    {
      config: { ...platform, openapi: { problems: ['destination_forbidden'], body: DocumentedPatchBody } },
      schema: {
        tags,
        summary: 'Change a channel: omitted fields stay as they are; null removes an optional config field',
        description:
          'A config field the channel’s kind does not have is 400, whatever its value. Changing a ' +
          `destination while a secret bound to it is stored (${BOUND_SECRETS}) needs that secret in ` +
          'the same PATCH (a value, or null to remove it), else 400 naming it: a stored secret is never ' +
          'sent to a host it was not given for.',
        params: IdParams,
        body: EditChannelBody,
        response: { 200: ChannelSchema },
      },
    },
    async (request) => patchChannel(ctx, auditOrigin(request, ctx.now()), request.params.id, request.body),
  );

  app.delete(
    `${CHANNELS}/:id`,
    {
      config: { ...platform, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Delete a channel no rule uses (409 otherwise)',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await deleteChannel(ctx, auditOrigin(request, ctx.now()), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    `${CHANNELS}/:id/test`,
    {
      config: platform,
      schema: {
        tags,
        summary: 'Send a test notification and report how the channel answered',
        params: IdParams,
        response: {
          200: Type.Object({
            ok: Type.Boolean(),
            responseStatus: Nullable(Type.Integer()),
            error: Nullable(Type.String()),
          }),
        },
      },
    },
    async (request) => testChannel(deps, request.params.id),
  );
};
