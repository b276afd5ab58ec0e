import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import { auditRoutes } from './access/audit-routes.js';
import { automationRoutes } from './access/automation-routes.js';
import { registerGate } from './access/gate.js';
import { registerOpenApi } from './access/openapi.js';
import type { Config } from './config.js';
import { filterRoutes } from './connections/filter-routes.js';
import { connectionRoutes } from './connections/routes.js';
import { filteredRoutes } from './delivery/filtered-routes.js';
import { operateRoutes } from './delivery/operate-routes.js';
import { deliveryRoutes } from './delivery/routes.js';
import { eventTypeRoutes } from './event-types/routes.js';
import { abortStatus, registerAccessLog } from './http/access-log.js';
import { registerCompression } from './http/compression.js';
import { registerDraining } from './http/draining.js';
import { registerErrorHandling } from './http/error-handler.js';
import { healthRoutes } from './http/health-routes.js';
import { registerJsonBodies } from './http/json-body.js';
import { registerHttpMetrics } from './http/metrics.js';
import { TAG_DESCRIPTIONS } from './http/openapi-tags.js';
import { generateRequestId } from './http/request-id.js';
import { registerTextChecks } from './http/text.js';
import {
  answerClientError,
  answerFrameworkError,
  registerNodeAnswers,
  registerUnplaceable,
  rewriteUnplaceable,
} from './http/unplaceable.js';
import { registerValidation } from './http/validation.js';
import { hubRoutes } from './hub/routes.js';
import { keyRoutes } from './keys/routes.js';
import { mcpConsentRoutes } from './mcp-oauth/consent-routes.js';
import { mcpOAuthRoutes } from './mcp-oauth/routes.js';
import { mcpRoutes } from './mcp/routes.js';
import { oauthProviderRoutes } from './oauth/provider-routes.js';
import { proxyRoutes } from './oauth/proxy-routes.js';
import { oauthRoutes } from './oauth/routes.js';
import { passkeyRoutes } from './passkeys/routes.js';
import { peopleRoutes } from './people/routes.js';
import { alertsRoutes } from './platform/alerting/alerts-routes.js';
import { alertChannelRoutes } from './platform/alerting/channel-routes.js';
import { alertRulesRoutes } from './platform/alerting/rules-routes.js';
import { monitoringRoutes } from './platform/monitoring-routes.js';
import { connectRoutes } from './portal/connect-routes.js';
import { PORTAL_TAG_DESCRIPTION } from './portal/embedding-docs.js';
import { portalRoutes } from './portal/routes.js';
import { portalSettingsRoutes } from './portal/settings-routes.js';
import { quotaRoutes } from './quotas/routes.js';
import type { RoutePlugin, Services } from './services.js';
import { setupRoutes } from './setup/routes.js';
import { invitationRoutes } from './sign-in/invitation-routes.js';
import { sessionRoutes } from './sign-in/routes.js';
import { sourceRoutes } from './sources/routes.js';
import { ssoRoutes } from './sso/routes.js';
import type { Tracing } from './telemetry/types.js';
import { tenantRoutes } from './tenants/routes.js';
import { usageRoutes } from './usage/routes.js';
import { answerUiPage, isUiPage, loadWebUi, registerWebUi } from './web/routes.js';
import { registerSecurityHeaders } from './web/security-headers.js';

// Longer than the idle timeout of the usual load balancers in front (60 s), so they never send on
// a connection this end is closing; under the 75 s ceiling that docs/api/limits.md
// promises for idle keep-alive connections.
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * A client has `requestTimeoutMs` to send its headers and body, then gets 408 and the connection
 * is closed (docs/api/limits.md). Node looks for such requests on an interval, every 30 s by default.
 */
function slowClientLimits(requestTimeoutMs: number) {
  const limits = {
    requestTimeout: requestTimeoutMs,
    headersTimeout: requestTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    connectionsCheckingInterval: Math.min(1_000, Math.ceil(requestTimeoutMs / 4)),
  };
  // Fastify sets the first and the third on the server it creates, the others only through `http`.
  // Node's own answer to a request without Host is a bare 400: it is refused before routing instead,
  // as problem details with a request ID (http/unplaceable.ts).
  const http = { ...limits, requireHostHeader: false };
  return { requestTimeout: limits.requestTimeout, keepAliveTimeout: limits.keepAliveTimeout, http };
}

/** proxy-addr's trust rule for "the last `hops` hops": hop 0 is the peer itself. */
const hopsTrusted = (hops: number) => (_address: string, hop: number) => hop < hops;

/**
 * The whole HTTP application, used by `hubgate serve` and by every test: hooks and plugins only, every
 * part built beforehand by createServices (src/services.ts), every route plugin given the services.
 * Closing the app closes no service: its caller closes them after it (cli/serve.ts).
 */
export async function buildApp(config: Config, services: Services): Promise<FastifyInstance> {
  const { ctx } = services;
  const webUi = loadWebUi();
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    bodyLimit: config.bodyLimitBytes,
    ...slowClientLimits(config.requestTimeoutMs),
    // Fastify ignores a bare hop count (it trusts no hop then); the same rule as a function.
    trustProxy: typeof config.trustProxy === 'number' ? hopsTrusted(config.trustProxy) : config.trustProxy,
    requestIdHeader: false,
    genReqId: generateRequestId,
    // One access line per request, written by registerAccessLog, instead of Fastify's two.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    // Requests the router cannot place end as problem details like any other (docs/api/limits.md).
    rewriteUrl: rewriteUnplaceable,
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError(ctx.log, ctx.metrics),
    // While shutting down, a request on a kept-alive connection is answered (with Connection: close)
    // rather than refused with Fastify's bare 503 (http/draining.ts).
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerNodeAnswers(app);
  registerTracing(app, ctx.tracing);
  app.addHook('onRequest', commonHeaders);
  registerAccessLog(app, ctx.log, ctx.tracing?.traceIdsOf);
  registerHttpMetrics(app, ctx.metrics);
  registerErrorHandling(app, answerUiPage(webUi));
  registerValidation(app);
  registerJsonBodies(app, config.bodyLimitBytes);
  registerTextChecks(app);
  registerDraining(app);
  // Before any route: the plugin adds its hook to each route as it is declared.
  await registerCompression(app);
  await app.register(cookie);
  registerSecurityHeaders(app, config.publicUrl);
  const { verifiers, limiter, tenantRequestLimit } = services;
  registerGate(app, {
    verifiers,
    limiter,
    requestsPerMinute: config.rateLimitPerMinute,
    tenantRequestLimit,
    keyring: ctx.keyring,
    publicOrigin: config.publicUrl.origin,
    now: ctx.now,
  });
  registerUnplaceable(app, isUiPage);
  await registerOpenApi(app, config.publicUrl.origin, {
    ...TAG_DESCRIPTIONS,
    portal: PORTAL_TAG_DESCRIPTION,
  });
  // In this order: the OpenAPI document lists them so.
  for (const routes of ROUTE_PLUGINS) await app.register(routes, services);
  await registerWebUi(app, webUi, ctx.db);
  await app.ready();
  return app;
}

/** Every route plugin, each given the services (src/services.ts `RouteDeps`). */
const ROUTE_PLUGINS: readonly RoutePlugin[] = [
  healthRoutes,
  sessionRoutes,
  passkeyRoutes,
  ssoRoutes,
  setupRoutes,
  keyRoutes,
  automationRoutes,
  auditRoutes,
  peopleRoutes,
  invitationRoutes,
  tenantRoutes,
  quotaRoutes,
  monitoringRoutes,
  alertChannelRoutes,
  alertRulesRoutes,
  alertsRoutes,
  oauthProviderRoutes,
  oauthRoutes,
  proxyRoutes,
  hubRoutes,
  connectionRoutes,
  connectRoutes,
  filterRoutes,
  deliveryRoutes,
  operateRoutes,
  filteredRoutes,
  eventTypeRoutes,
  sourceRoutes,
  usageRoutes,
  mcpRoutes,
  mcpOAuthRoutes,
  mcpConsentRoutes,
  portalSettingsRoutes,
  portalRoutes,
];

/** Tracing (docs/operators/telemetry.md); with it off nothing is registered: no hook, no context. */
function registerTracing(app: FastifyInstance, tracing: Tracing | undefined): void {
  tracing?.registerRequests(app, {
    tenantOf: (request) =>
      request.principal && 'tenantId' in request.principal ? request.principal.tenantId : undefined,
    abortStatus,
  });
}

/**
 * A callback, not an async function: it has nothing to wait for, and a promise per request is work on
 * every request's path (docs/benchmarks.md).
 */
function commonHeaders(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
  // API answers are per-credential and some carry secrets: no cache may keep any of them.
  if (request.url === '/api' || request.url.startsWith('/api/') || request.url.startsWith('/api?'))
    reply.header('cache-control', 'no-store');
  done();
}
