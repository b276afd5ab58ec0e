import { availableParallelism } from 'node:os';
import { ConfigError, parseValues, SERVICE_NAME, SETTINGS, type Values } from './config/table.js';
import type { Cidr } from './outbound/ssrf-policy.js';
import { telemetryConfig, type TelemetryConfig } from './telemetry/settings.js';

export { ConfigError };

export type DatabaseConfig =
  { kind: 'postgres'; url: string; preparedStatements: boolean } | { kind: 'embedded'; dataDir: string };

export interface Config {
  database: DatabaseConfig;
  host: string;
  port: number;
  publicUrl: URL;
  /** Raw base64 value; resolved (and generated in embedded mode) by crypto/master-key.ts. */
  secretKey: string | undefined;
  delivery: {
    allowHttp: boolean;
    allowedCidrs: Cidr[];
    retryScheduleSeconds: number[];
    timeoutMs: number;
    /** Attempts one process's worker has in flight at once. */
    concurrency: number;
    retentionDays: number;
    /** How much of an answer's body an attempt keeps for the log (0: none). */
    responseBodyBytes: number;
    /** Automatic pause: failed deliveries in a row (0: never), spanning at least this many seconds. */
    pauseAfterFailures: number;
    pauseAfterSeconds: number;
  };
  rateLimitPerMinute: number;
  bodyLimitBytes: number;
  /** Time a client has to send a whole request, headers and body (slow clients, docs/api/limits.md). */
  requestTimeoutMs: number;
  /** How long a signalled process lets work in flight finish before it exits (docs/operators/deployment.md). */
  shutdownGraceMs: number;
  /** Audit entries older than this are deleted. */
  auditRetentionDays: number;
  logLevel: string;
  /**
   * Which X-Forwarded-For entries to believe, in Fastify's `trustProxy` terms: none, the last N
   * hops, or the hops whose address is in one of these CIDRs. Never every hop (`true`).
   */
  trustProxy: false | number | string[];
  /** Connector keys the platform has switched off: no new connections or credentials, no deliveries. */
  disabledConnectors: string[];
  /** Enterprise single sign-on over SPNEGO (docs/operators/sso.md); null: off. */
  sso: SsoConfig | null;
  /** Argon2 hashes and checks at once in this process; more wait up to 2 s, then 503. */
  passwordHashConcurrency: number;
  /** Outgoing e-mail (invitations); null: none is sent. */
  mail: MailConfig | null;
  /** OpenTelemetry tracing (docs/operators/telemetry.md); null: off. */
  telemetry: TelemetryConfig | null;
  alerts: {
    /** How often the alert conditions are evaluated (by one process at a time). */
    evaluationIntervalMs: number;
    /** Seconds between attempts of a notification a channel did not take. */
    retryScheduleSeconds: number[];
    /** DeliveryFailureRateHigh: failed / all delivery attempts of a tenant over the window, above this. */
    failureRateThreshold: number;
    failureRateWindowSeconds: number;
    /** …counted only once the tenant made at least this many attempts in the window. */
    failureRateMinDeliveries: number;
    /** QueueBacklogHigh: due deliveries (pending or retrying) above this. */
    queueBacklogThreshold: number;
  };
}

export interface SsoConfig {
  /** The keytab holding the service's key (`SSO_SPNEGO_KEYTAB`). */
  keytab: string;
  /** `name@REALM` signs in as the user `name@emailDomain`. */
  emailDomain: string;
  /** The GSS service name, `HTTP@host` (not `HTTP/host@REALM`). */
  principal: string;
  /** Only principals of this realm are accepted; null: any realm the keytab's key is trusted by. */
  realm: string | null;
}

export interface MailConfig {
  /** `smtp://` or `smtps://`, with its credentials: never logged. */
  smtpUrl: string;
  from: string;
}

/** Fixed: not read from the environment. */
const BODY_LIMIT_BYTES = 1024 * 1024;

function database(values: Values): DatabaseConfig {
  // Each mode ignores the other's variables: DATA_DIR with PostgreSQL, prepared statements embedded.
  if (values.DATABASE_URL === undefined) return { kind: 'embedded', dataDir: values.DATA_DIR };
  return {
    kind: 'postgres',
    url: values.DATABASE_URL,
    preparedStatements: values.DATABASE_PREPARED_STATEMENTS,
  };
}

/** The rules that join several variables; each variable alone was checked by the table. */
function sso(values: Values, publicUrl: URL): SsoConfig | null {
  if (values.SSO_SPNEGO_KEYTAB === undefined) return null;
  if (values.SSO_SPNEGO_EMAIL_DOMAIN === undefined) {
    throw new ConfigError(
      `missing SSO_SPNEGO_EMAIL_DOMAIN: single sign-on (SSO_SPNEGO_KEYTAB) needs it, as ${SETTINGS.SSO_SPNEGO_EMAIL_DOMAIN.expects}`,
    );
  }
  const principal = values.SSO_SPNEGO_PRINCIPAL ?? `HTTP@${publicUrl.hostname}`;
  if (!SERVICE_NAME.test(principal)) {
    throw new ConfigError(
      `invalid SSO_SPNEGO_PRINCIPAL: unset, it is HTTP@ the host of PUBLIC_URL (${principal}), which is not a host name; set it, as ${SETTINGS.SSO_SPNEGO_PRINCIPAL.expects}`,
    );
  }
  return {
    keytab: values.SSO_SPNEGO_KEYTAB,
    emailDomain: values.SSO_SPNEGO_EMAIL_DOMAIN.toLowerCase(),
    principal,
    realm: values.SSO_SPNEGO_REALM ?? null,
  };
}

function alerts(values: Values): Config['alerts'] {
  return {
    evaluationIntervalMs: values.ALERT_EVALUATION_INTERVAL_MS,
    retryScheduleSeconds: values.ALERT_RETRY_SCHEDULE,
    failureRateThreshold: values.ALERT_FAILURE_RATE_THRESHOLD,
    failureRateWindowSeconds: values.ALERT_FAILURE_RATE_WINDOW_SECONDS,
    failureRateMinDeliveries: values.ALERT_FAILURE_RATE_MIN_DELIVERIES,
    queueBacklogThreshold: values.ALERT_QUEUE_BACKLOG_THRESHOLD,
  };
}

/**
 * The environment of docs/operators/deployment.md (every variable: config/table.ts, docs/configuration.md), read once
 * at start-up. Throws ConfigError with one line that names the offending variable.
 */
export function parseConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const values = parseValues(source);
  const publicUrl = values.PUBLIC_URL ?? new URL(`http://localhost:${values.PORT}`);
  return {
    database: database(values),
    host: values.HOST,
    port: values.PORT,
    publicUrl,
    secretKey: values.HUBGATE_SECRET_KEY,
    delivery: {
      allowHttp: values.DELIVERY_ALLOW_HTTP,
      allowedCidrs: values.DELIVERY_ALLOWED_CIDRS,
      retryScheduleSeconds: values.DELIVERY_RETRY_SCHEDULE,
      timeoutMs: values.DELIVERY_TIMEOUT_MS,
      concurrency: values.DELIVERY_CONCURRENCY,
      retentionDays: values.DELIVERY_RETENTION_DAYS,
      responseBodyBytes: values.DELIVERY_RESPONSE_BODY_BYTES,
      pauseAfterFailures: values.CONNECTION_PAUSE_AFTER_FAILURES,
      pauseAfterSeconds: values.CONNECTION_PAUSE_AFTER_SECONDS,
    },
    rateLimitPerMinute: values.RATE_LIMIT_PER_MINUTE,
    bodyLimitBytes: BODY_LIMIT_BYTES,
    requestTimeoutMs: values.REQUEST_TIMEOUT_MS,
    shutdownGraceMs: values.SHUTDOWN_GRACE_MS,
    auditRetentionDays: values.AUDIT_RETENTION_DAYS,
    logLevel: values.LOG_LEVEL,
    trustProxy: values.TRUST_PROXY,
    disabledConnectors: values.CONNECTORS_DISABLED,
    sso: sso(values, publicUrl),
    alerts: alerts(values),
    passwordHashConcurrency: values.PASSWORD_HASH_CONCURRENCY ?? availableParallelism(),
    mail: values.SMTP_URL
      ? { smtpUrl: values.SMTP_URL, from: values.SMTP_FROM ?? `hubgate@${publicUrl.hostname}` }
      : null,
    telemetry: telemetryConfig(values),
  };
}
