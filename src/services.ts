import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { CredentialVerifiers } from './access/authenticate.js';
import { createRateLimiter, type RateLimiter } from './access/rate-limit.js';
import { startAccessRetention } from './access/retention.js';
import type { Config } from './config.js';
import { loadConnectorCatalog, type ConnectorCatalog } from './connections/catalog.js';
import type { DeliveryControl, JoinPortalSession } from './connections/connections.js';
import type { AppContext } from './context.js';
import type { Keyring } from './crypto/keyring.js';
import { limitPasswordHashing } from './crypto/passwords.js';
import type { Database } from './db/database.js';
import { leaseDuration } from './delivery/claim.js';
import { deliveryControl } from './delivery/control.js';
import { createEventWriter, type EventWriter } from './delivery/group-commit.js';
import { takePermit } from './delivery/throttle.js';
import { createAnnouncer, createWakeup } from './delivery/wakeup.js';
import { createDeliveryWorkers, type DeliveryWorkers, type WorkerOptions } from './delivery/worker.js';
import { createMetrics } from './http/metrics.js';
import { HttpProblem } from './http/problem.js';
import { createCredentialVerifiers } from './keys/credential-verifiers.js';
import {
  createTenantKeyVerifier,
  DEFAULT_KEY_TIMINGS,
  type KeyVerifierTimings,
  type TenantKeyVerifier,
} from './keys/key-verifier.js';
import { errorFields } from './logger.js';
import { startMcpOAuthRetention } from './mcp-oauth/retention.js';
import { createMcpAccessTokenVerifier, type McpAccessTokenVerifier } from './mcp-oauth/token-verifier.js';
import type { StateOwners } from './oauth/authorize.js';
import { createOAuth } from './oauth/oauth.js';
import { trustSystemStore } from './outbound/trusted-cas.js';
import { startChallengeRetention } from './passkeys/retention.js';
import { createInvitationMailer, type InvitationMailer } from './people/mailer.js';
import { startAlertEngine } from './platform/alerting/engine.js';
import { createChannelSender, type ChannelSender } from './platform/alerting/senders/index.js';
import { startHistorySampler } from './platform/history.js';
import { connectLinkAuthorizationReturn } from './portal/connect-links.js';
import { portalAuthorizationReturn } from './portal/portal-authorization.js';
import { startPortalRetention } from './portal/retention.js';
import { joinPortalSession } from './portal/sessions.js';
import { createPortalTokenVerifier, type PortalTokenVerifier } from './portal/token-verifier.js';
import { createQuotaBook } from './quotas/book.js';
import { startSourceRetention } from './sources/retention.js';
import { startTelemetry } from './telemetry/start.js';
import { createUsageMeter } from './usage/meter.js';
import { startUsageRetention } from './usage/retention.js';

/** What a process is given before anything is built: storage, logger, and the knobs tests turn. */
export interface AppDeps {
  database: Database;
  keyring: Keyring;
  logger: Logger;
  /** The clock; tests move it to cross expiry boundaries. */
  now?: () => Date;
  /** Delivery workers in this process (serve and worker build them; tests opt in); false or absent: none. */
  workers?: Partial<WorkerOptions> | false;
  /** Cache and batching intervals; tests shorten them instead of waiting. */
  timings?: Partial<KeyVerifierTimings & { rateLimitSyncMs: number; usageFlushMs: number }>;
  /** A tenant's requests per minute for the gate's tenant bucket; tests give one (see `Services`). */
  tenantRequestLimit?: (tenantId: string) => number | null;
}

/**
 * Every long-lived part of one process, each built once by createServices (docs/contributors/architecture.md,
 * docs/decisions/0069-one-composition-root.md). Route plugins are given this object as their options.
 */
export interface Services {
  ctx: AppContext;
  tenantKeys: TenantKeyVerifier;
  /** Portal sessions' `ptl_` tokens, cached as tenant keys are (docs/api/portal.md). */
  portalTokens: PortalTokenVerifier;
  /** MCP clients' OAuth access tokens `oat_`, cached as tenant keys are (docs/api/mcp.md). */
  mcpAccessTokens: McpAccessTokenVerifier;
  /** A connection created with a portal token that names its connections joins them (connections/). */
  joinPortalSession: JoinPortalSession;
  /** The gate's check per credential kind (sessions, tenant and platform keys, portal tokens). */
  verifiers: CredentialVerifiers;
  limiter: RateLimiter;
  /**
   * The tenant's `requestsPerMinute` quota, or null: every request of the tenant's credentials counts
   * on one bucket of the gate (docs/api/rate-limits.md). Synchronous: read per request from memory.
   */
  tenantRequestLimit(tenantId: string): number | null | Promise<number | null>;
  mailer: InvitationMailer;
  catalog: ConnectorCatalog;
  oauth: Awaited<ReturnType<typeof createOAuth>>;
  /** Who else than a signed-in person an OAuth2 authorization comes back to (portal/): oauth/'s callback asks them. */
  authorizationOwners: StateOwners;
  alertSender: ChannelSender;
  /** Pause and revoke wait for the attempts in flight (delivery/control.ts). */
  control: DeliveryControl;
  /** The per-connection permits (`maxPerSecond`) the credential proxy shares with the deliveries. */
  takePermit(connectionId: string, max: number, at: Date): Promise<boolean>;
  /** Tells the workers (this process's and, on PostgreSQL, every other's) that deliveries wait. */
  announce: () => void;
  /** This process's delivery workers, built but not started (startBackground starts them); none if off. */
  workers: DeliveryWorkers | undefined;
  /** Publishes' group commit; hands deliveries to `workers` by direct dispatch. */
  writer: EventWriter;
  /** Background intervals as `AppDeps.workers` set them (tests shorten retention). */
  workerOptions: Partial<WorkerOptions> | undefined;
  /** Closes every part, the last built first. */
  close(): Promise<void>;
}

/** What every route plugin is given: the services, as one object. */
export type RouteDeps = Omit<Services, 'close'>;

/** The one shape of a route plugin: `app.register(xRoutes, services)`. */
export type RoutePlugin = FastifyPluginAsyncTypebox<RouteDeps>;

/**
 * Builds every long-lived part once, in order: each part is given the ones before it at construction
 * (the event writer the workers' dispatch), never through a holder filled later. Used by `serve`,
 * `worker` and every test harness.
 */
export async function createServices(config: Config, deps: AppDeps): Promise<Services> {
  const closers: Array<() => Promise<void>> = [];
  let closing: Promise<void> | undefined;
  const ctx = await createContext(config, deps, closers);
  const { db, now } = ctx;
  const logBackgroundError = (error: unknown) =>
    deps.logger.warn(errorFields(error), 'background write failed');
  const tenantKeys = createTenantKeyVerifier(
    db,
    deps.keyring,
    { ...DEFAULT_KEY_TIMINGS, ...deps.timings },
    logBackgroundError,
  );
  closers.push(() => tenantKeys.close());
  const portal = createPortal(ctx, deps);
  const { portalTokens } = portal;
  const { mcpAccessTokens, verifiers } = credentialChecks(ctx, deps, tenantKeys, portalTokens, closers);
  const limiter = createRateLimiter(db, {
    syncMs: deps.timings?.rateLimitSyncMs,
    onError: logBackgroundError,
  });
  closers.push(() => limiter.close());
  const mailer = createInvitationMailer(config.mail, deps.logger, config.delivery.timeoutMs);
  closers.push(() => mailer.close());
  const catalog = await loadConnectorCatalog(config.disabledConnectors);
  // Before any route reads the catalog: the OAuth providers join it.
  const oauth = await createOAuth(ctx, catalog);
  closers.push(() => oauth.close());
  const alertSender = createChannelSender({
    policy: config.delivery,
    timeoutMs: config.delivery.timeoutMs,
    publicUrl: config.publicUrl.origin,
    now,
  });
  closers.push(() => alertSender.close());
  return {
    ctx,
    tenantKeys,
    mcpAccessTokens,
    ...portal,
    verifiers,
    limiter,
    // The tenant's `requestsPerMinute` quota, from the quota book's cache (src/quotas/, contract §24);
    // a test harness may give its own.
    tenantRequestLimit: deps.tenantRequestLimit ?? ((tenantId) => ctx.quotas.requestsPerMinute(tenantId)),
    mailer,
    catalog,
    oauth,
    authorizationOwners: authorizationOwnersOf(ctx, catalog, portal.joinPortalSession, oauth),
    alertSender,
    ...createDelivery(ctx, catalog, deps, closers, logBackgroundError),
    // Once, however often it is called (a test closes its harness in a `finally` after closing it):
    // closing a part twice closed undici clients already destroyed.
    close: () =>
      (closing ??= (async () => {
        for (const close of [...closers].reverse()) await close();
      })()),
  };
}

/** The gate's check per credential kind; MCP clients' access tokens are built here, closed last. */
function credentialChecks(
  ctx: AppContext,
  deps: AppDeps,
  tenantKeys: TenantKeyVerifier,
  portalTokens: PortalTokenVerifier,
  closers: Array<() => Promise<void>>,
) {
  const mcpAccessTokens = createMcpAccessTokenVerifier(
    ctx.db,
    deps.keyring,
    { ...DEFAULT_KEY_TIMINGS, ...deps.timings },
    (error) => deps.logger.warn(errorFields(error), 'background write failed'),
  );
  closers.push(() => mcpAccessTokens.close());
  const verifiers = createCredentialVerifiers(
    ctx,
    tenantKeys,
    (token, now) => portalTokens.verify(token, now),
    (token, now) => mcpAccessTokens.verify(token, now),
  );
  return { mcpAccessTokens, verifiers };
}

/** The portal sessions and connect links an OAuth2 authorization may come back to, checked by portal/. */
function authorizationOwnersOf(
  ctx: AppContext,
  catalog: ConnectorCatalog,
  joinPortalSession: JoinPortalSession,
  oauth: Services['oauth'],
): StateOwners {
  return {
    portalSession: portalAuthorizationReturn(ctx),
    connectSession: connectLinkAuthorizationReturn({ ctx, catalog, joinPortalSession, oauth }),
  };
}

/** Portal tokens' check, and what a connection created with one does to its session. */
function createPortal(ctx: AppContext, deps: AppDeps) {
  const portalTokens = createPortalTokenVerifier(
    ctx.db,
    deps.keyring,
    deps.timings?.cacheTtlMs ?? DEFAULT_KEY_TIMINGS.cacheTtlMs,
  );
  const join: JoinPortalSession = async (trx, scope, connectionId) => {
    await joinPortalSession(trx, scope, connectionId);
    // This process sees the new connection on the token's next request; others within the cache's life.
    if (scope.connections) portalTokens.forget(scope.connections.portalSessionId);
  };
  return { portalTokens, joinPortalSession: join };
}

/**
 * Delivery's parts, in order: control, the wake-up and its announcer, the workers (built, not started),
 * then the event writer, which takes the workers' dispatch as it is built.
 */
function createDelivery(
  ctx: AppContext,
  catalog: ConnectorCatalog,
  deps: AppDeps,
  closers: Array<() => Promise<void>>,
  onError: (error: unknown) => void,
) {
  const { config, db, now } = ctx;
  // Pause and revoke wait for attempts in flight at most as long as a claim can last.
  const control = deliveryControl({ now, maxDrainMs: leaseDuration(config.delivery.timeoutMs) });
  const wakeup = createWakeup();
  const announce = createAnnouncer(deps.database, wakeup, onError);
  const workerOptions = deps.workers || undefined;
  const workers =
    workerOptions && createDeliveryWorkers({ ctx, catalog }, deps.database, wakeup, workerOptions);
  if (workers) closers.push(() => workers.stop());
  // This process's worker takes its publishes' deliveries straight away when it runs and has room.
  const writer = createEventWriter({ ctx, catalog }, workers?.dispatch, announce);
  const permits = (id: string, max: number, at: Date) => takePermit(db, id, max, at);
  return { control, announce, workers, writer, workerOptions, takePermit: permits };
}

/** The context every part is given, tracing first: closed last, it exports the spans every other part ended. */
async function createContext(
  config: Config,
  deps: AppDeps,
  closers: Array<() => Promise<void>>,
): Promise<AppContext> {
  const tracing = await startTelemetry(config.telemetry, deps.logger);
  if (tracing) closers.push(() => tracing.close());
  // Process-wide, before anything connects (docs/decisions/0085-outbound-tls-trusts-the-system-store.md).
  deps.logger.debug({ certificates: trustSystemStore() }, 'outbound TLS trusts the system store');
  // Process-wide (docs/decisions/0050-password-hashing-bounded.md): a refusal is a 503 with Retry-After.
  limitPasswordHashing({
    concurrency: config.passwordHashConcurrency,
    busy: () =>
      new HttpProblem('unavailable', 'Too many passwords are being checked at once; try again shortly.', {
        headers: { 'retry-after': '1' },
      }),
  });
  // Closed after every part that counts (the workers record their last outcomes first): its last
  // flush writes what they counted (docs/decisions/0089-usage-counted-in-memory-flushed.md).
  const usage = createUsageMeter(deps.database.kysely, {
    flushMs: deps.timings?.usageFlushMs,
    onError: (error) => deps.logger.warn(errorFields(error), 'usage flush failed; kept for the next'),
  });
  closers.push(() => usage.close());
  const ctx: AppContext = {
    config,
    database: deps.database,
    db: deps.database.kysely,
    keyring: deps.keyring,
    log: deps.logger,
    metrics: createMetrics(),
    now: deps.now ?? (() => new Date()),
    // Each tenant's quotas, cached about a second (docs/api/quotas.md): the checks publishes and creates make.
    quotas: createQuotaBook(deps.database.kysely, {
      onError: (error) => deps.logger.warn(errorFields(error), 'quota read failed'),
    }),
    tracing,
    usage,
  };
  return ctx;
}

/** A process's roles: `serve` (the API, with workers unless they are off) and `worker`. */
export type Role = 'serve' | 'worker';

interface BackgroundJob {
  name: string;
  roles: readonly Role[];
  start(services: Services): Promise<{ stop(): Promise<void> }> | { stop(): Promise<void> };
}

/**
 * Every periodic job, in one list, with the roles that run it. `serve` runs every job `worker` runs
 * (its delivery workers are on; a test harness starts them only when asked): one `serve` process does
 * everything, and `worker` processes beside it share the delivery work (each job takes a lease or is
 * safe to run in several processes at once). Alerts are evaluated where deliveries are worked. The
 * purges of sign-in records and passkey challenges stay with `serve`, which every deployment runs:
 * `worker` processes would only repeat them.
 */
const BACKGROUND_JOBS: readonly BackgroundJob[] = [
  {
    name: 'delivery workers',
    roles: ['serve', 'worker'],
    start: async ({ workers }) => {
      if (!workers) return { stop: async () => {} };
      await workers.start();
      return workers;
    },
  },
  { name: 'alert engine', roles: ['serve', 'worker'], start: (s) => startAlertEngine(s.ctx, s.alertSender) },
  {
    name: 'access retention',
    roles: ['serve'],
    start: (s) => startAccessRetention(s.ctx, s.workerOptions?.retentionIntervalMs),
  },
  { name: 'challenge retention', roles: ['serve'], start: (s) => startChallengeRetention(s.ctx) },
  {
    name: 'portal retention',
    roles: ['serve'],
    start: (s) => startPortalRetention(s.ctx, s.workerOptions?.retentionIntervalMs),
  },
  {
    name: 'MCP client OAuth retention',
    roles: ['serve'],
    start: (s) => startMcpOAuthRetention(s.ctx, s.workerOptions?.retentionIntervalMs),
  },
  {
    name: 'source retention',
    roles: ['serve'],
    start: (s) => startSourceRetention(s.ctx, s.workerOptions?.retentionIntervalMs),
  },
  {
    name: 'usage retention',
    roles: ['serve'],
    start: (s) => startUsageRetention(s.ctx, s.workerOptions?.retentionIntervalMs),
  },
  { name: 'history sampler', roles: ['serve', 'worker'], start: (s) => startHistorySampler(s.ctx) },
];

/**
 * Starts the periodic jobs of `role` and returns the function that stops them: claiming stops at
 * once, and the promise resolves once the attempts in flight are recorded. Stopping twice is once.
 */
export async function startBackground(
  services: Services,
  { role }: { role: Role },
): Promise<() => Promise<void>> {
  const running: Array<{ stop(): Promise<void> }> = [];
  for (const job of BACKGROUND_JOBS) if (job.roles.includes(role)) running.push(await job.start(services));
  let stopping: Promise<void> | undefined;
  return () => (stopping ??= Promise.all(running.map((job) => job.stop())).then(() => undefined));
}
