import { Type } from 'typebox';
import { auditOrigin } from '../access/audit.js';
import { decide } from '../access/decide.js';
import { sessionOf } from '../access/principal.js';
import { sessionRule, tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { IdParams } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { CALLBACK_PATH, finishAuthorization, startAuthorization } from './authorize.js';

// Sessions only: a person authorizes; an automation key gets 403 route_not_allowed.
const admin = tenantRule('integrations', 'ADMIN', { automation: false });
const tags = ['connections'];

const CallbackQuery = Type.Object(
  {
    code: Type.Optional(Type.String({ maxLength: 4096 })),
    state: Type.Optional(Type.String({ maxLength: 200 })),
    error: Type.Optional(Type.String({ maxLength: 200 })),
    error_description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  // Providers add their own parameters (iss, session_state …): they are ignored.
  { additionalProperties: true },
);

/** Connecting a connection to its OAuth2 provider (docs/api/oauth.md): authorize, and the callback. */
export const oauthRoutes: RoutePlugin = async (app, services) => {
  const deps = services.oauth.authorize;
  const { ctx } = deps;
  app.post(
    '/api/v1/integrations/connections/:id/authorize',
    {
      config: { ...admin, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: "Start authorizing an OAuth2 connection: the provider's URL to send the browser to",
        description:
          'The URL carries response_type=code, client_id, redirect_uri (PUBLIC_URL/api/v1/oauth/callback), the ' +
          "provider's scopes, a single-use state bound to this user and connection (10 minutes) and a PKCE " +
          'S256 challenge. Sessions only.',
        params: IdParams,
        response: { 200: Type.Object({ authorizationUrl: Type.String({ format: 'uri' }) }) },
      },
    },
    async (request) =>
      startAuthorization(deps, requestScope(request), sessionOf(request.principal).userId, request.params.id),
  );

  app.get(
    CALLBACK_PATH,
    {
      config: sessionRule(),
      schema: {
        tags,
        summary:
          'Where the provider sends the browser back: binds the tokens, then 303 to the connection page',
        description:
          "The answer is always 303: to the connection's page with `authorized=true`, or with " +
          '`authorizationError` saying in words what failed (a used, foreign or expired state, the provider’s ' +
          'refusal, a failed code exchange).',
        querystring: CallbackQuery,
        response: { 303: Type.Null({ description: 'See Other: Location is the connection’s page' }) },
      },
    },
    async (request, reply) => {
      // The callback is a session route (a 303 in words whatever happened), and authorize's rule
      // is checked again here: whoever started it may have lost the role or module since.
      const mayAuthorize = request.principal !== null && decide(admin.access, request.principal).allowed;
      const location = await finishAuthorization(
        deps,
        requestScope(request),
        auditOrigin(request, ctx.now()),
        { userId: sessionOf(request.principal).userId, mayAuthorize },
        request.query,
      );
      return reply.redirect(location, 303);
    },
  );
};
