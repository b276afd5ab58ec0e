import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { AUTHORIZATION_STATUSES, CONNECTION_STATUSES, PAUSED_REASONS } from '../db/schema.js';
import { PageQueryFields } from '../http/pagination.js';
import { IdParams, Nullable, PageOf, pascalCase, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import type { ConnectorCatalog } from './catalog.js';
import { bindCredentials, createConnection, getConnection, listConnections } from './connections.js';
import { editConnection } from './edit.js';
import { pauseConnection, resumeConnection, revokeConnection } from './state.js';

export const ConnectionSchema = Type.Object({
  id: Type.String(),
  connectorKey: Type.String(),
  displayName: Type.String(),
  status: Type.Enum(CONNECTION_STATUSES, { description: '`disabled` (revoked) is final' }),
  config: Type.Record(Type.String(), Type.Unknown(), {
    description: 'the non-secret fields given on create',
  }),
  credentialsBound: Type.Boolean(),
  deliveryEnabled: Type.Boolean({ description: 'active and credentials bound' }),
  createdAt: Timestamp,
  revokedAt: Nullable(Timestamp),
  pausedAt: Nullable(Timestamp),
  pausedReason: Nullable(Type.Enum(PAUSED_REASONS)),
  authorization: Nullable(
    Type.Object(
      {
        status: Type.Enum(AUTHORIZATION_STATUSES),
        scopes: Type.Array(Type.String()),
        expiresAt: Nullable(Timestamp),
      },
      {
        description:
          "OAuth2 connectors only (docs/api/oauth.md): never a token; expiresAt is the access token's",
      },
    ),
  ),
});

/** The connectors defined in files; those of a family (docs/api/oauth.md) share one body, made by the family. */
const ofFiles = (catalog: ConnectorCatalog) =>
  catalog.all.filter((d) => !catalog.families.some((family) => d.key.startsWith(family.prefix)));

const DisplayName = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });

/**
 * The create body, one branch per connector of the catalog, chosen by `connectorKey`: validation and
 * the OpenAPI document both come from the connector definitions, and errors name the chosen
 * connector's fields. Each branch is a named component of the document (its `$id`).
 */
function createBodySchema(catalog: ConnectorCatalog) {
  const branches = ofFiles(catalog).map((definition) =>
    StrictObject(
      {
        connectorKey: Type.Literal(definition.key),
        displayName: DisplayName,
        ...definition.config.properties,
      },
      { title: definition.name, $id: `${pascalCase(definition.key)}ConnectionCreate` },
    ),
  );
  const byFile = {
    type: 'object',
    required: ['connectorKey'],
    discriminator: { propertyName: 'connectorKey' },
    oneOf: branches,
  };
  // Connectors made at run time (OAuth2 providers) are a family each, its keys a pattern, which a
  // discriminator cannot map: a key with a family's prefix takes the family's body instead.
  const body = catalog.families.reduceRight<object>(
    (otherwise, family) => ({
      if: {
        type: 'object',
        properties: { connectorKey: { type: 'string', pattern: `^${family.prefix}` } },
        required: ['connectorKey'],
      },
      then: {
        ...family.createBody,
        properties: { ...family.createBody.properties, displayName: DisplayName },
      },
      else: otherwise,
    }),
    byFile,
  );
  // The document: the file connectors' branches, which OpenAPI can map by key, or a family's body,
  // which its key's pattern chooses (a discriminator maps constants only, hence the anyOf around).
  const documented = {
    description:
      'One body per connector, chosen by connectorKey: a connector defined in a file, or a ' +
      catalog.families.map((f) => `\`${f.prefix}…\``).join(' or ') +
      ' connector (GET /api/v1/integration-hub/connectors lists them).',
    anyOf: [
      { ...byFile, title: 'A connector defined in a file' },
      ...catalog.families.map((family) => ({
        ...family.createBody,
        properties: { ...family.createBody.properties, displayName: DisplayName },
      })),
    ],
  };
  return {
    body: Type.Unsafe<{ connectorKey: string; displayName: string } & Record<string, unknown>>(body),
    documented: Type.Unsafe(documented),
  };
}

/**
 * The edit body as the document shows it: per connector (a family's members sharing one), the
 * create body's fields but the key, each optional (checked at run time against the connection's
 * connector, edit.ts). `anyOf`, not `oneOf`: nothing in the body names the connector, and a body of
 * fields every connector has (`{"displayName":"x"}`) fits every branch.
 */
function documentedEditBody(catalog: ConnectorCatalog) {
  const families = catalog.families.map((family) => {
    const { connectorKey: _key, ...fields } = family.createBody.properties;
    return {
      type: 'object',
      properties: { displayName: DisplayName, ...fields },
      additionalProperties: false,
      title: `${(family.createBody as { title?: string }).title ?? family.prefix} connection edit`,
      $id: `${pascalCase(family.prefix.replace(/[^a-z0-9]/gi, ''))}ConnectionEdit`,
    };
  });
  return Type.Unsafe({
    description: "displayName and the fields of the connection's connector, each optional",
    anyOf: [
      ...ofFiles(catalog).map((definition) => ({
        type: 'object',
        properties: { displayName: DisplayName, ...definition.config.properties },
        additionalProperties: false,
        title: `${definition.name} connection edit`,
        $id: `${pascalCase(definition.key)}ConnectionEdit`,
      })),
      ...families,
    ],
  });
}

const EditBody = Type.Record(Type.String(), Type.Unknown(), {
  maxProperties: 50,
  description: "displayName and the fields of the connection's connector, each optional",
});

// A field is a string, or an object of strings (the webhook and http `oauth2ClientCredentials`).
const CredentialsBody = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Record(Type.String(), Type.String(), { maxProperties: 10 })]),
  {
    maxProperties: 20,
    description: "the connector's credential fields (GET /api/v1/integration-hub/connectors lists them)",
  },
);

/** The answer of `PUT …/connections/:id/credentials`: the connection, and the values hubgate generated. */
export const BindAnswer = Type.Object({
  connection: ConnectionSchema,
  credentials: Type.Record(Type.String(), Type.String(), {
    description: 'only values hubgate generated, shown this once',
  }),
});

/** The body of `POST …/connections/:id/resume`, itself optional. */
export const ResumeBody = Type.Optional(
  StrictObject({
    replaySkipped: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'send every skipped delivery again, oldest first (same IDs)',
      }),
    ),
  }),
);
export const ResumeAnswer = Type.Object({
  connection: ConnectionSchema,
  replayed: Type.Integer({ minimum: 0 }),
});

/**
 * The credential body as checked at run time, against the fields of the connection's connector
 * (connections.ts): the document shows one named schema per connector. No property names the
 * connector, so there is no discriminator; and a body may fit several (the webhook and http
 * connectors share `oauth2ClientCredentials`), hence `anyOf`, not `oneOf`.
 */
function documentedCredentialsBody(catalog: ConnectorCatalog) {
  return Type.Unsafe({
    description: "the fields of the connection's connector",
    anyOf: ofFiles(catalog).map((definition) => ({
      ...definition.credentials,
      additionalProperties: false,
      title: `${definition.name} credentials`,
      $id: `${pascalCase(definition.key)}Credentials`,
    })),
  });
}

const tags = ['connections'];

/** Integration connections (docs/api/connections.md): tenant routes, all on the automation allowlist. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const connectionRoutes: RoutePlugin = async (app, deps) => {
  const { control } = deps;
  const { ctx } = deps;
  const createBody = createBodySchema(deps.catalog);
  app.get(
    '/api/v1/integrations/connections',
    {
      config: {
        ...tenantRule('integrations', 'READER', { portal: 'read' }),
        mcp: { tool: 'list_connections', annotations: { readOnlyHint: true, idempotentHint: true } },
      },
      schema: {
        tags,
        summary: "List the tenant's connections, newest first (safe metadata only)",
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(ConnectionSchema) },
      },
    },
    async (request) => listConnections(deps, requestScope(request), request.query),
  );

  app.post(
    '/api/v1/integrations/connections',
    {
      config: {
        ...tenantRule('integrations', 'OPERATOR', { portal: 'manage' }),
        openapi: {
          problems: ['destination_forbidden', 'conflict', ['quota_exceeded', 409]],
          body: createBody.documented,
        },
      },
      schema: {
        tags,
        summary: 'Create a connection to a connector; URL fields must pass the SSRF policy',
        body: createBody.body,
        response: { 201: ConnectionSchema },
      },
    },
    async (request, reply) => {
      const connection = await createConnection(
        deps,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.body,
      );
      return reply.code(201).send(connection);
    },
  );

  app.get(
    '/api/v1/integrations/connections/:id',
    {
      config: {
        ...tenantRule('integrations', 'READER', { portal: 'read' }),
        mcp: {
          tool: 'get_connection',
          params: { id: 'connectionId' },
          annotations: { readOnlyHint: true, idempotentHint: true },
        },
      },
      schema: { tags, summary: 'One connection', params: IdParams, response: { 200: ConnectionSchema } },
    },
    async (request) => getConnection(deps, requestScope(request), request.params.id),
  );

  app.post(
    '/api/v1/integrations/connections/:id/revoke',
    {
      config: tenantRule('integrations', 'OPERATOR', { portal: 'manage' }),
      schema: {
        tags,
        summary: 'Disable the connection for good (idempotent); nothing is sent to it again',
        params: IdParams,
        response: { 200: ConnectionSchema },
      },
    },
    async (request) =>
      revokeConnection(
        deps,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
        control,
      ),
  );

  app.patch(
    '/api/v1/integrations/connections/:id',
    {
      config: {
        ...tenantRule('integrations', 'OPERATOR', { portal: 'operate' }),
        openapi: {
          problems: ['conflict', 'destination_forbidden'],
          body: documentedEditBody(deps.catalog),
        },
      },
      schema: {
        tags,
        summary: 'Edit the display name and config; URLs are checked again',
        description:
          'Every part is optional; a field given as null is removed. Deliveries already queued go to ' +
          'the new URL from their next attempt. When the host of the URL that receives the bound ' +
          "credentials changes (the http connector's header), they are unbound (`credentialsBound:false`) " +
          'and the deliveries queued are kept `skipped`, as a pause keeps them: recover sends them once ' +
          'credentials are bound again.',
        params: IdParams,
        body: EditBody,
        response: { 200: ConnectionSchema },
      },
    },
    async (request) =>
      editConnection(
        deps,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
        request.body,
        DisplayName,
        control,
      ),
  );

  app.post(
    '/api/v1/integrations/connections/:id/pause',
    {
      config: {
        ...tenantRule('integrations', 'OPERATOR', { portal: 'operate' }),
        openapi: { problems: ['conflict'] },
        mcp: {
          tool: 'pause_connection',
          params: { id: 'connectionId' },
          annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
        },
      },
      schema: {
        tags,
        summary: 'Pause deliveries (idempotent): nothing is sent until resumed; events meanwhile are skipped',
        description:
          'Answers once no attempt to the connection is in flight any more. Pending and retrying deliveries ' +
          'become `skipped`, and so does every matching event published while paused.',
        params: IdParams,
        response: { 200: ConnectionSchema },
      },
    },
    async (request) => {
      const origin = auditOrigin(request, ctx.now());
      const scope = requestScope(request);
      const { connection } = await pauseConnection(ctx, scope, origin, request.params.id, 'manual', control);
      return connection;
    },
  );

  app.post(
    '/api/v1/integrations/connections/:id/resume',
    {
      config: {
        ...tenantRule('integrations', 'OPERATOR', { portal: 'operate' }),
        openapi: { problems: ['conflict'] },
        mcp: {
          tool: 'resume_connection',
          params: { id: 'connectionId' },
          annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
        },
      },
      schema: {
        tags,
        summary: 'Resume a paused connection, replaying its skipped deliveries when asked',
        params: IdParams,
        body: ResumeBody,
        response: { 200: ResumeAnswer },
      },
    },
    async (request) =>
      resumeConnection(
        deps,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
        { replaySkipped: request.body?.replaySkipped === true },
        control,
      ),
  );

  app.put(
    '/api/v1/integrations/connections/:id/credentials',
    {
      config: {
        ...tenantRule('integrations', 'ADMIN', { portal: 'manage' }),
        openapi: {
          problems: ['conflict', 'destination_forbidden'],
          body: documentedCredentialsBody(deps.catalog),
        },
      },
      schema: {
        tags,
        summary: 'Bind secrets to the connection; a generated signing secret is returned once',
        params: IdParams,
        body: CredentialsBody,
        response: { 200: BindAnswer },
      },
    },
    async (request) =>
      bindCredentials(
        deps,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        request.params.id,
        request.body,
      ),
  );
};
