import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { auditOrigin } from '../../access/audit.js';
import { platformRule } from '../../access/rules.js';
import { ID_PATTERN } from '../../crypto/ids.js';
import { Nullable, StrictObject } from '../../http/schemas.js';
import type { RoutePlugin } from '../../services.js';
import {
  LABEL_NAME_PATTERN,
  MATCHER_OPS,
  MAX_DOCUMENT_PATTERN_LENGTH,
  MAX_DOCUMENT_PROGRAM_SIZE,
  MAX_PATTERN_PROGRAM_SIZE,
} from './matchers.js';
import {
  IF_MATCH_PATTERN,
  parseIfMatch,
  readRoutingDocument,
  replaceRoutingDocument,
  type RoutingDocument,
} from './rules.js';

// Bounds of one document: generous for a platform's handful of alerts, small enough that routing an
// alert (every rule, every matcher) stays trivial.
const MAX_RULES = 100;
const MAX_MATCHERS = 20;
const MAX_CHANNELS = 20;
const MAX_REPEAT_SECONDS = 7 * 24 * 3600;

const RepeatInterval = Type.Integer({
  minimum: 1,
  maximum: MAX_REPEAT_SECONDS,
  description: 'seconds before a still-firing alert is notified again to the same channel (1–604800)',
});
const ChannelIds = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  maxItems: MAX_CHANNELS,
  uniqueItems: true,
  description: 'IDs of existing alerting channels (chn_…)',
});

const MatcherSchema = StrictObject({
  name: Type.String({ minLength: 1, maxLength: 200, pattern: LABEL_NAME_PATTERN, description: 'label name' }),
  op: Type.Enum(MATCHER_OPS, {
    description:
      '=~ and !~ take an RE2 regular expression (as Alertmanager), matched against the whole label value',
  }),
  value: Type.String({ maxLength: 1000, description: 'a missing label matches as ""' }),
});

const DefaultsSchema = StrictObject({ channelIds: ChannelIds, repeatIntervalSeconds: RepeatInterval });

const RuleInputSchema = StrictObject({
  id: Type.Optional(Type.String({ pattern: ID_PATTERN('rul'), description: 'assigned when absent' })),
  name: Type.String({ minLength: 1, maxLength: 200 }),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  matchers: Type.Array(MatcherSchema, {
    maxItems: MAX_MATCHERS,
    description: 'all must match; none matches every alert',
  }),
  channelIds: ChannelIds,
  continue: Type.Optional(
    Type.Boolean({ default: false, description: 'keep walking the rules after this one matched' }),
  ),
  repeatIntervalSeconds: Type.Optional(
    Nullable(Type.Integer({ minimum: 1, maximum: MAX_REPEAT_SECONDS, description: "null: the defaults'" })),
  ),
});

const DocumentSchema = Type.Object({
  revision: Type.Integer({ description: 'incremented by every PUT; 0 before the first' }),
  defaults: Type.Object({ channelIds: Type.Array(Type.String()), repeatIntervalSeconds: Type.Integer() }),
  rules: Type.Array(
    Type.Object({
      id: Type.String(),
      name: Type.String(),
      enabled: Type.Boolean(),
      matchers: Type.Array(Type.Object({ name: Type.String(), op: Type.String(), value: Type.String() })),
      channelIds: Type.Array(Type.String()),
      continue: Type.Boolean(),
      repeatIntervalSeconds: Nullable(Type.Integer()),
    }),
  ),
});

const platform = platformRule();
const tags = ['platform: alerting'];

/** The document with its revision as the entity tag, for a later `If-Match`. */
const withETag = (reply: FastifyReply, doc: RoutingDocument): RoutingDocument => {
  reply.header('etag', `"${doc.revision}"`);
  return doc;
};

/** The alert routing document (docs/operators/alerting.md). */
export const alertRulesRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  app.get(
    '/api/v1/platform/alerting/rules',
    {
      config: platform,
      schema: {
        tags,
        summary: 'Read the alert routing document',
        description: 'The ETag header carries the revision, for If-Match on PUT.',
        response: { 200: DocumentSchema },
      },
    },
    async (_request, reply) => withETag(reply, await readRoutingDocument(ctx.db)),
  );

  app.put(
    '/api/v1/platform/alerting/rules',
    {
      config: { ...platform, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Replace the alert routing document',
        description:
          'Replaces the defaults and every rule. With If-Match (the revision, bare or quoted, or *), a ' +
          'document changed since is 409 conflict; without it the last write wins. Each =~/!~ expression ' +
          `compiles to at most ${MAX_PATTERN_PROGRAM_SIZE} RE2 instructions; the distinct ones of a document ` +
          `hold at most ${MAX_DOCUMENT_PATTERN_LENGTH} characters and ${MAX_DOCUMENT_PROGRAM_SIZE} instructions ` +
          'in all (else 400 naming the first expression over).',
        headers: Type.Object({
          'if-match': Type.Optional(
            Type.String({
              maxLength: 200,
              pattern: IF_MATCH_PATTERN,
              description:
                'the revision (an integer) bare or quoted as the ETag sends it, a comma-separated list of them, or *',
            }),
          ),
        }),
        body: StrictObject({
          defaults: DefaultsSchema,
          rules: Type.Array(RuleInputSchema, { maxItems: MAX_RULES }),
        }),
        response: { 200: DocumentSchema },
      },
    },
    async (request, reply) => {
      const expected = parseIfMatch(request.headers['if-match']);
      const doc = await replaceRoutingDocument(ctx, auditOrigin(request, ctx.now()), request.body, expected);
      return withETag(reply, doc);
    },
  );
};
