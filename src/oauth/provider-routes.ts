import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { platformRule } from '../access/rules.js';
import { UrlField } from '../connections/connector.js';
import { OAUTH_GRANTS } from '../db/schema.js';
import { PageQueryFields } from '../http/pagination.js';
import { NoContent, Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import {
  createProvider,
  deleteProvider,
  getProvider,
  listProviders,
  patchProvider,
  PROVIDER_KEY_PATTERN,
} from './providers.js';

const ProviderSchema = Type.Object({
  key: Type.String(),
  connectorKey: Type.String({ description: 'the connector of the catalog it appears as: oauth2:<key>' }),
  name: Type.String(),
  authorizationUrl: Nullable(Type.String()),
  tokenUrl: Type.String(),
  apiBaseUrl: Type.String(),
  clientId: Type.String(),
  scopes: Type.Array(Type.String()),
  grant: Type.Enum(OAUTH_GRANTS),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const ClientId = Type.String({ minLength: 1, maxLength: 500 });
const ClientSecret = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'write-only: stored encrypted, never shown again',
});
// RFC 6749 §3.3: a scope token is printable ASCII but space, `"` and `\`.
const Scopes = Type.Array(
  Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+$' }),
  {
    maxItems: 50,
    uniqueItems: true,
  },
);
const Grant = Type.Enum(OAUTH_GRANTS, { description: 'default authorization_code' });
const AuthorizationUrl = UrlField('where the browser is sent to authorize (authorization_code only)');
const TokenUrl = UrlField('the token endpoint; must pass the SSRF policy');
const ApiBaseUrl = UrlField('the API the credential proxy calls; must pass the SSRF policy');

const CreateBody = StrictObject({
  key: Type.String({
    pattern: PROVIDER_KEY_PATTERN,
    description: 'the provider’s key; the connector is oauth2:<key>',
  }),
  name: Name,
  authorizationUrl: Type.Optional(AuthorizationUrl),
  tokenUrl: TokenUrl,
  apiBaseUrl: ApiBaseUrl,
  clientId: ClientId,
  clientSecret: ClientSecret,
  scopes: Type.Optional(Scopes),
  grant: Type.Optional(Grant),
});

/**
 * The create body as the document shows it: the route's schema, and the rule the domain checks
 * (providers.ts `checkGrant`) written as JSON Schema: `authorizationUrl` is required unless the grant
 * is `client_credentials` (the default grant is `authorization_code`).
 */
const DocumentedCreateBody = StrictObject(CreateBody.properties, {
  if: {
    type: 'object',
    properties: { grant: { const: 'client_credentials' } },
    required: ['grant'],
  },
  else: { properties: { authorizationUrl: AuthorizationUrl }, required: ['authorizationUrl'] },
});

const PatchBody = StrictObject({
  name: Type.Optional(Name),
  authorizationUrl: Type.Optional(Nullable(AuthorizationUrl)),
  tokenUrl: Type.Optional(TokenUrl),
  apiBaseUrl: Type.Optional(ApiBaseUrl),
  clientId: Type.Optional(ClientId),
  clientSecret: Type.Optional(ClientSecret),
  scopes: Type.Optional(Scopes),
  grant: Type.Optional(Grant),
});

const KeyParams = StrictObject({ key: Type.String({ description: 'the provider’s key' }) });

const platform = platformRule();
const tags = ['platform: oauth providers'];
const PROVIDERS = '/api/v1/platform/oauth-providers';

/** OAuth2 providers (docs/api/oauth.md): operator routes, the client secret write-only, every change audited. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const oauthProviderRoutes: RoutePlugin = async (app, services) => {
  const deps = services.oauth.providers;
  const { ctx } = deps;
  app.post(
    PROVIDERS,
    {
      config: {
        ...platform,
        openapi: { problems: ['destination_forbidden', 'conflict'], body: DocumentedCreateBody },
      },
      schema: {
        tags,
        summary: 'Add an OAuth2 provider; it appears in the connector catalog as oauth2:<key>',
        body: CreateBody,
        response: { 201: ProviderSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createProvider(deps, auditOrigin(request, ctx.now()), request.body)),
  );

  app.get(
    PROVIDERS,
    {
      config: platform,
      schema: {
        tags,
        summary: 'List the OAuth2 providers, newest first',
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(ProviderSchema) },
      },
    },
    async (request) => listProviders(deps, request.query),
  );

  app.get(
    `${PROVIDERS}/:key`,
    {
      config: platform,
      schema: {
        tags,
        summary: 'One OAuth2 provider',
        params: KeyParams,
        response: { 200: ProviderSchema },
      },
    },
    async (request) => getProvider(deps, request.params.key),
  );

  app.patch(
    `${PROVIDERS}/:key`,
    {
      config: { ...platform, openapi: { problems: ['destination_forbidden', 'conflict'] } },
      schema: {
        tags,
        summary: 'Change a provider: omitted fields stay as they are',
        description:
          'A tokenUrl on another origin needs clientSecret in the same PATCH (a stored secret never goes ' +
          'to a host it was not given for); the grant of a provider in use cannot change (409).',
        params: KeyParams,
        body: PatchBody,
        response: { 200: ProviderSchema },
      },
    },
    async (request) => patchProvider(deps, auditOrigin(request, ctx.now()), request.params.key, request.body),
  );

  app.delete(
    `${PROVIDERS}/:key`,
    {
      config: { ...platform, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: 'Delete a provider no connection uses (409 otherwise; revoke them first)',
        params: KeyParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await deleteProvider(deps, auditOrigin(request, ctx.now()), request.params.key);
      return reply.code(204).send(null);
    },
  );
};
