import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthMetadata, OAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { publicRule } from '../access/rules.js';
import type { RoutePlugin } from '../services.js';
import { authorize, exchangeToken, MCP_SCOPES, mcpResourceOf, registerClient } from './authorization.js';
import { authorizeErrorPage } from './page.js';

// hubgate as the authorization server of its MCP route (docs/api/mcp.md, docs/decisions/0087-…):
// the metadata documents, registration, authorization and token endpoints. These speak OAuth's own
// wire format (RFC 6749 error objects, form-encoded token requests), not problem documents, and
// are left out of the OpenAPI document: MCP clients find them through the metadata.

const hidden = { hide: true } as const;
const FORM_LIMIT = 16 * 1024;

/** An OAuth error as RFC 6749 §5.2 writes it; a bad client is 401. */
function sendOAuthError(reply: FastifyReply, error: unknown): FastifyReply {
  if (!(error instanceof OAuthError)) throw error;
  const status = error.errorCode === 'invalid_client' ? 401 : 400;
  return reply.code(status).header('cache-control', 'no-store').send(error.toResponseObject());
}

const LooseQuery = Type.Record(Type.String(), Type.String());

// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const mcpOAuthRoutes: RoutePlugin = async (app, services) => {
  const { ctx, mcpAccessTokens } = services;
  const publicUrl = ctx.config.publicUrl;
  const issuer = publicUrl.origin;
  const resource = mcpResourceOf(publicUrl);
  const anyone = publicRule();

  // Token requests are form-encoded (RFC 6749 §3.2); only this plugin reads forms.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_LIMIT },
    (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    },
  );

  const protectedResource: OAuthProtectedResourceMetadata = {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'hubgate MCP server',
  };
  // RFC 9728 §3.1: the resource's path after the well-known name; the bare name too, for clients
  // that ask the origin first.
  for (const url of [
    '/.well-known/oauth-protected-resource/api/v1/mcp',
    '/.well-known/oauth-protected-resource',
  ]) {
    app.get(url, { config: anyone, schema: hidden }, async () => protectedResource);
  }

  const metadata: OAuthMetadata = {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    registration_endpoint: `${issuer}/oauth/register`,
    scopes_supported: [...MCP_SCOPES],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['none'],
    code_challenge_methods_supported: ['S256'],
    service_documentation: `${issuer}/docs`,
  };
  app.get(
    '/.well-known/oauth-authorization-server',
    { config: anyone, schema: hidden },
    async () => metadata,
  );

  app.post('/oauth/register', { config: anyone, schema: hidden }, async (request, reply) => {
    try {
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await registerClient(ctx, request.body));
    } catch (error) {
      return sendOAuthError(reply, error);
    }
  });

  app.get<{ Querystring: Record<string, string> }>(
    '/oauth/authorize',
    { config: anyone, schema: { ...hidden, querystring: LooseQuery } },
    async (request, reply) => {
      const outcome = await authorize(ctx, publicUrl, request.query);
      if (outcome.kind === 'page') {
        return reply.code(400).type('text/html; charset=utf-8').send(authorizeErrorPage(outcome.message));
      }
      return reply.redirect(outcome.location, 302);
    },
  );

  app.post('/oauth/token', { config: anyone, schema: hidden }, async (request, reply) => {
    const form = request.body;
    if (typeof form !== 'object' || form === null || Array.isArray(form)) {
      return reply
        .code(400)
        .send({ error: 'invalid_request', error_description: 'A form-encoded body is required.' });
    }
    try {
      const answer = await exchangeToken(ctx, publicUrl, form as Record<string, string>, (grantId) =>
        mcpAccessTokens.forget(grantId),
      );
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
    } catch (error) {
      return sendOAuthError(reply, error);
    }
  });
};
