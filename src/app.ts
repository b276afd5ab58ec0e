import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { auditRoutes } from './access/audit-routes.js';
import { automationRoutes } from './access/automation-routes.js';
import { registerGate } from './access/gate.js';
import { registerOpenApi } from './access/openapi.js';
import { createRateLimiter } from './access/rate-limit.js';
import { startAccessRetention } from './access/retention.js';
import type { Config } from './config.js';
import { loadConnectorCatalog } from './connections/catalog.js';
import { filterRoutes } from './connections/filter-routes.js';
import { connectionRoutes } from './connections/routes.js';
import type { AppContext } from './context.js';
import type { Keyring } from './crypto/keyring.js';
import { limitPasswordHashing } from './crypto/passwords.js';
import type { Database } from './db/database.js';
import { leaseDuration } from './delivery/claim.js';
import { deliveryControl } from './delivery/control.js';
import { filteredRoutes } from './delivery/filtered-routes.js';
import { operateRoutes } from './delivery/operate-routes.js';
import { deliveryRoutes } from './delivery/routes.js';
import { takePermit } from './delivery/throttle.js';
import { createAnnouncer, createWakeup } from './delivery/wakeup.js';
import { startDeliveryWorkers, type Dispatch, type WorkerOptions } from './delivery/worker.js';
import { eventTypeRoutes } from './event-types/routes.js';
import { abortStatus, registerAccessLog } from './http/access-log.js';
import { registerCompression } from './http/compression.js';
import { registerDraining } from './http/draining.js';
import { registerErrorHandling } from './http/error-handler.js';
import { healthRoutes } from './http/health-routes.js';
import { registerJsonBodies } from './http/json-body.js';
import { createMetrics, registerHttpMetrics } from './http/metrics.js';
import { HttpProblem } from './http/problem.js';
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
import { createCredentialVerifiers } from './keys/credential-verifiers.js';
import {
  createTenantKeyVerifier,
  DEFAULT_KEY_TIMINGS,
  type KeyVerifierTimings,
} from './keys/key-verifier.js';
import { keyRoutes } from './keys/routes.js';
import { errorFields } from './logger.js';
import { createOAuth } from './oauth/oauth.js';
import { oauthProviderRoutes } from './oauth/provider-routes.js';
import { proxyRoutes } from './oauth/proxy-routes.js';
import { oauthRoutes } from './oauth/routes.js';
import { startChallengeRetention } from './passkeys/retention.js';
import { passkeyRoutes } from './passkeys/routes.js';
import { createInvitationMailer } from './people/mailer.js';
import { peopleRoutes } from './people/routes.js';
import { alertsRoutes } from './platform/alerting/alerts-routes.js';
import { alertChannelRoutes } from './platform/alerting/channel-routes.js';
import { startAlertEngine } from './platform/alerting/engine.js';
import { alertRulesRoutes } from './platform/alerting/rules-routes.js';
import { createChannelSender } from './platform/alerting/senders/index.js';
import { startHistorySampler } from './platform/history.js';
import { monitoringRoutes } from './platform/monitoring-routes.js';
import { setupRoutes } from './setup/routes.js';
import { invitationRoutes } from './sign-in/invitation-routes.js';
import { sessionRoutes } from './sign-in/routes.js';
import { openAcceptor } from './sso/kerberos.js';
import { ssoRoutes } from './sso/routes.js';
import { startTelemetry } from './telemetry/start.js';
import { tenantRoutes } from './tenants/routes.js';
import { answerUiPage, isUiPage, loadWebUi, registerWebUi } from './web/routes.js';
import { registerSecurityHeaders } from './web/security-headers.js';

export interface AppDeps {
  database: Database;
  keyring: Keyring;
  logger: Logger;
  /** The clock; tests move it to cross expiry boundaries. */
  now?: () => Date;
  /** Delivery workers in this process (serve runs them; tests opt in); false or absent: none. */
  workers?: Partial<WorkerOptions> | false;
  /** Cache and batching intervals; tests shorten them instead of waiting. */
  timings?: Partial<KeyVerifierTimings & { rateLimitSyncMs: number }>;
}

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

/** The whole HTTP application, used by `hubgate serve` and by every test. */
// eslint-disable-next-line max-lines-per-function -- buildApp wires every plugin in order, in one place
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const webUi = loadWebUi();
  // Before anything opens: a library or keytab that single sign-on cannot use stops start-up.
  const sso = config.sso && { config: config.sso, acceptor: await openAcceptor(config.sso) };
  const metrics = createMetrics();
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
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
    clientErrorHandler: answerClientError(deps.logger, metrics),
    // While shutting down, a request on a kept-alive connection is answered (with Connection: close)
    // rather than refused with Fastify's bare 503 (http/draining.ts).
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();
  registerNodeAnswers(app);

  // Tracing (docs/operators/telemetry.md); with it off nothing is registered: no hook, no context.
  const tracing = await startTelemetry(config.telemetry, deps.logger);
  if (tracing) {
    // onClose hooks run last added first: added first, this exports the spans every other one ended.
    app.addHook('onClose', () => tracing.close());
    tracing.registerRequests(app, {
      tenantOf: (request) =>
        request.principal && 'tenantId' in request.principal ? request.principal.tenantId : undefined,
      abortStatus,
    });
  }

  // Process-wide (docs/decisions/0050-password-hashing-bounded.md): a refusal is a 503 with Retry-After.
  limitPasswordHashing({
    concurrency: config.passwordHashConcurrency,
    busy: () =>
      new HttpProblem('unavailable', 'Too many passwords are being checked at once; try again shortly.', {
        headers: { 'retry-after': '1' },
      }),
  });
  const db = deps.database.kysely;
  const logBackgroundError = (error: unknown) =>
    deps.logger.warn(errorFields(error), 'background write failed');
  const tenantKeys = createTenantKeyVerifier(
    db,
    deps.keyring,
    { ...DEFAULT_KEY_TIMINGS, ...deps.timings },
    logBackgroundError,
  );
  const limiter = createRateLimiter(db, config.rateLimitPerMinute, {
    syncMs: deps.timings?.rateLimitSyncMs,
    onError: logBackgroundError,
  });
  app.addHook('onClose', async () => {
    await Promise.all([tenantKeys.close(), limiter.close()]);
  });

  const ctx: AppContext = {
    config,
    database: deps.database,
    db,
    keyring: deps.keyring,
    log: deps.logger,
    metrics,
    now: deps.now ?? (() => new Date()),
    tracing,
  };

  // A callback, not an async function: it has nothing to wait for, and a promise per request is
  // work on every request's path (docs/benchmarks.md).
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-content-type-options', 'nosniff');
    // API answers are per-credential and some carry secrets: no cache may keep any of them.
    if (request.url === '/api' || request.url.startsWith('/api/') || request.url.startsWith('/api?'))
      reply.header('cache-control', 'no-store');
    done();
  });
  registerAccessLog(app, deps.logger, tracing?.traceIdsOf);
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
  registerGate(app, {
    verifiers: createCredentialVerifiers(ctx, tenantKeys),
    limiter,
    keyring: deps.keyring,
    publicOrigin: config.publicUrl.origin,
    now: ctx.now,
  });
  registerUnplaceable(app, isUiPage);
  await registerOpenApi(app, config.publicUrl.origin);

  await app.register(healthRoutes(ctx));
  await app.register(sessionRoutes(ctx));
  await app.register(passkeyRoutes(ctx));
  await app.register(ssoRoutes(ctx, sso));
  await app.register(setupRoutes(ctx));
  await app.register(keyRoutes(ctx, tenantKeys));
  await app.register(automationRoutes(ctx));
  await app.register(auditRoutes(ctx));
  const mailer = createInvitationMailer(config.mail, deps.logger, config.delivery.timeoutMs);
  app.addHook('onClose', () => mailer.close());
  await app.register(peopleRoutes({ ctx, mailer }));
  await app.register(invitationRoutes(ctx));
  await app.register(tenantRoutes(ctx));
  await app.register(monitoringRoutes(ctx));
  const alertSender = createChannelSender({
    policy: config.delivery,
    timeoutMs: config.delivery.timeoutMs,
    publicUrl: config.publicUrl.origin,
    now: ctx.now,
  });
  await app.register(alertChannelRoutes({ ctx, sender: alertSender }));
  await app.register(alertRulesRoutes(ctx));
  await app.register(alertsRoutes(ctx));
  const connections = { ctx, catalog: await loadConnectorCatalog(config.disabledConnectors) };
  // Before the connection routes: the providers join the catalog their create body is made from.
  const oauth = await createOAuth(ctx, connections.catalog);
  app.addHook('onClose', () => oauth.close());
  await app.register(oauthProviderRoutes(oauth.providers));
  await app.register(oauthRoutes(oauth.authorize));
  // The credential proxy shares the deliveries' per-connection permits (maxPerSecond).
  const permit = (id: string, max: number, at: Date) => takePermit(ctx.db, id, max, at);
  await app.register(proxyRoutes({ ctx, tokens: oauth.tokens, takePermit: permit }, tracing));
  await app.register(hubRoutes(connections));
  // Pause and revoke wait for attempts in flight at most as long as a claim can last.
  const control = deliveryControl({ now: ctx.now, maxDrainMs: leaseDuration(config.delivery.timeoutMs) });
  await app.register(connectionRoutes(connections, control));
  await app.register(filterRoutes());
  const wakeup = createWakeup();
  // This process's worker takes its publishes' deliveries straight away when it has room.
  const local: { dispatch?: Dispatch } = {};
  const announce = createAnnouncer(deps.database, wakeup, logBackgroundError);
  await app.register(deliveryRoutes(connections, announce, local));
  await app.register(operateRoutes(connections, announce));
  await app.register(filteredRoutes(connections));
  await app.register(eventTypeRoutes(ctx));
  if (deps.workers) {
    const workers = await startDeliveryWorkers(connections, deps.database, wakeup, deps.workers);
    local.dispatch = workers.dispatch;
    // Alerts are evaluated where deliveries are worked; a lease keeps it to one process at a time.
    const alerts = startAlertEngine(ctx, alertSender);
    const accessRetention = startAccessRetention(ctx, deps.workers.retentionIntervalMs);
    const challengeRetention = startChallengeRetention(ctx);
    const history = startHistorySampler(ctx);
    let stopping: Promise<unknown> | undefined;
    const stopBackground = () =>
      (stopping ??= Promise.all([
        workers.stop(),
        alerts.stop(),
        accessRetention.stop(),
        challengeRetention.stop(),
        history.stop(),
      ]));
    // Claiming stops as the server stops listening, not once its last request has ended; the
    // attempts in flight end meanwhile (docs/decisions/0054-graceful-shutdown.md).
    app.addHook('preClose', (done) => {
      // Its failure is the onClose hook's to report, which awaits the same promise.
      stopBackground().catch(() => undefined);
      done();
    });
    app.addHook('onClose', () => stopBackground());
  }
  app.addHook('onClose', () => alertSender.close());
  await registerWebUi(app, webUi);

  await app.ready();
  return app;
}
