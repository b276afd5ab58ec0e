import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { authenticate, unauthenticated } from '../access/authenticate.js';
import { clientAddress } from '../access/client-address.js';
import { decide } from '../access/decide.js';
import { sessionOf } from '../access/principal.js';
import { publicRule, sessionRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { IdParams } from '../http/schemas.js';
import type { RouteDeps, RoutePlugin } from '../services.js';
import {
  AUTHORIZE_RULE,
  CALLBACK_PATH,
  finishAuthorization,
  startAuthorization,
  type SignedInCaller,
  type StateOwner,
} from './authorize.js';

const tags = ['connections'];
// The state names who started the authorization: no credential is looked at before it is read (a
// portal or a connect link comes back with none); a user's state checks that user's session as a
// session route does (401, 403 for a key).
const CALLBACK_RULE = {
  ...publicRule(),
  openapi: { problems: ['unauthenticated' as const, 'route_not_allowed' as const] },
};
const AUTHORIZE_DESCRIPTION =
  'The URL carries response_type=code, client_id, redirect_uri (PUBLIC_URL/api/v1/oauth/callback), the ' +
  "provider's scopes, a single-use state bound to this connection and to who asked (10 minutes) and a " +
  'PKCE S256 challenge. Sessions with integrations:ADMIN, and portal tokens of manage access (for their ' +
  "session's connections; the callback then returns to the portal page); no automation key.";
const CALLBACK_DESCRIPTION =
  "The answer is always 303 (but 401/403 for a signed-in person's state without their session): to the " +
  "connection's page with `authorized=true`, or with `authorizationError` saying in words what failed " +
  '(a used, foreign or expired state, the provider’s refusal, a failed code exchange). A portal ' +
  "session's state returns to PUBLIC_URL/portal/<tenantId>/connections/<id> with a new single-use " +
  "code in the fragment (#code=…); a connect link's to PUBLIC_URL/connect/<tenantId> with " +
  '`status=completed` or `authorizationError`. Cache-Control: no-store, Referrer-Policy: no-referrer.';

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

/**
 * The person a user's state comes back to: the session cookie, checked as a session route's gate
 * checks it (401 without one, 403 for a key or a portal token), and only for a user's state.
 */
function signedInCaller(request: FastifyRequest, services: RouteDeps, at: Date): SignedInCaller {
  return async () => {
    const principal = await authenticate(request, services.verifiers, at);
    if (!principal) throw unauthenticated();
    const decision = decide(sessionRule().access, principal);
    if (!decision.allowed) throw decision.problem;
    const session = sessionOf(principal);
    return { principal: session, mayAuthorize: decide(AUTHORIZE_RULE.access, session).allowed };
  };
}

/** Connecting a connection to its OAuth2 provider (docs/api/oauth.md): authorize, and the callback. */
export const oauthRoutes: RoutePlugin = async (app, services) => {
  const deps = services.oauth.authorize;
  const { ctx } = deps;
  app.post(
    '/api/v1/integrations/connections/:id/authorize',
    {
      config: { ...AUTHORIZE_RULE, openapi: { problems: ['conflict'] } },
      schema: {
        tags,
        summary: "Start authorizing an OAuth2 connection: the provider's URL to send the browser to",
        description: AUTHORIZE_DESCRIPTION,
        params: IdParams,
        response: { 200: Type.Object({ authorizationUrl: Type.String({ format: 'uri' }) }) },
      },
    },
    async (request) => {
      const { principal } = request;
      const owner: StateOwner =
        principal?.kind === 'portal'
          ? { portalSessionId: principal.sessionId }
          : { userId: sessionOf(principal).userId };
      return startAuthorization(deps, requestScope(request), owner, request.params.id);
    },
  );

  app.get(
    CALLBACK_PATH,
    {
      config: CALLBACK_RULE,
      schema: {
        tags,
        summary:
          'Where the provider sends the browser back: binds the tokens, then 303 to the page it came from',
        description: CALLBACK_DESCRIPTION,
        querystring: CallbackQuery,
        response: { 303: Type.Null({ description: 'See Other: Location is the page to go back to' }) },
      },
    },
    async (request, reply) => {
      // The Location may hold a portal code in its fragment: never cached, never sent on as a referrer.
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      const at = ctx.now();
      const location = await finishAuthorization(
        deps,
        services.authorizationOwners,
        {
          ip: clientAddress(request),
          requestId: request.id,
          at,
          signedIn: signedInCaller(request, services, at),
        },
        request.query,
      );
      return reply.redirect(location, 303);
    },
  );
};
