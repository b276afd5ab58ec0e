import ipaddr from 'ipaddr.js';
import { type Static, Type } from 'typebox';
import { Value } from 'typebox/value';
import { type Cidr, parseIpLiteral } from './outbound/ssrf-policy.js';

// A GSS host-based service name, `service@host`, with a host of DNS labels: an empty host (which
// `HTTP@.` becomes) would accept a ticket for any host's key in the keytab.
const DNS_NAME =
  '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*';
const SERVICE_NAME = `^[A-Za-z][A-Za-z0-9-]*@${DNS_NAME}$`;

/**
 * The environment of contract §1, read once at start-up. Every variable is a string in the
 * environment; the schema checks its shape, `parseConfig` turns it into typed values, and the first
 * problem stops the process with one line naming the variable.
 */
const EnvSchema = Type.Object({
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_PREPARED_STATEMENTS: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  DATA_DIR: Type.Optional(Type.String({ minLength: 1 })),
  HOST: Type.Optional(Type.String({ minLength: 1 })),
  PORT: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/?#]+/?$' })),
  HUBGATE_SECRET_KEY: Type.Optional(Type.String({ minLength: 1 })),
  DELIVERY_ALLOW_HTTP: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')])),
  DELIVERY_ALLOWED_CIDRS: Type.Optional(Type.String()),
  DELIVERY_RETRY_SCHEDULE: Type.Optional(Type.String({ pattern: '^\\s*[0-9]+(\\s*,\\s*[0-9]+)*\\s*$' })),
  DELIVERY_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$' })),
  DELIVERY_CONCURRENCY: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })),
  DELIVERY_RETENTION_DAYS: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
  RATE_LIMIT_PER_MINUTE: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  LOG_LEVEL: Type.Optional(Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
  TRUST_PROXY: Type.Optional(Type.String()),
  REQUEST_TIMEOUT_MS: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$' })),
  AUDIT_RETENTION_DAYS: Type.Optional(Type.String({ pattern: '^[0-9]{1,5}$' })),
  CONNECTORS_DISABLED: Type.Optional(Type.String({ pattern: '^\\s*[a-z0-9_]+(\\s*,\\s*[a-z0-9_]+)*\\s*$' })),
  ALERT_EVALUATION_INTERVAL_MS: Type.Optional(Type.String({ pattern: '^[0-9]{1,8}$' })),
  ALERT_RETRY_SCHEDULE: Type.Optional(Type.String({ pattern: '^\\s*[0-9]+(\\s*,\\s*[0-9]+)*\\s*$' })),
  ALERT_FAILURE_RATE_THRESHOLD: Type.Optional(Type.String({ pattern: '^(0(\\.[0-9]+)?|1(\\.0+)?)$' })),
  ALERT_FAILURE_RATE_WINDOW_SECONDS: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$' })),
  ALERT_FAILURE_RATE_MIN_DELIVERIES: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$' })),
  ALERT_QUEUE_BACKLOG_THRESHOLD: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  SSO_SPNEGO_KEYTAB: Type.Optional(Type.String({ minLength: 1 })),
  SSO_SPNEGO_EMAIL_DOMAIN: Type.Optional(
    Type.String({
      pattern:
        '^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$',
    }),
  ),
  SSO_SPNEGO_PRINCIPAL: Type.Optional(Type.String({ pattern: SERVICE_NAME })),
  SSO_SPNEGO_REALM: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]+$' })),
});
type Env = Static<typeof EnvSchema>;

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
  };
  rateLimitPerMinute: number;
  bodyLimitBytes: number;
  /** Time a client has to send a whole request, headers and body (slow clients, contract §14). */
  requestTimeoutMs: number;
  /** Audit entries older than this are deleted. */
  auditRetentionDays: number;
  logLevel: string;
  /**
   * Which X-Forwarded-For entries to believe, in Fastify's `trustProxy` terms: none, the last N
   * hops, or the hops whose address is in one of these CIDRs. Never every hop (`true`).
   */
  trustProxy: false | number | string[];
  /** Connector keys the platform has switched off: no new connections, no credential binding. */
  disabledConnectors: string[];
  /** Enterprise single sign-on over SPNEGO (contract §11); null: off. */
  sso: SsoConfig | null;
  alerts: {
    /** How often the alert conditions are evaluated (by one process at a time). */
    evaluationIntervalMs: number;
    /** Seconds between attempts of a notification a channel did not take. */
    retryScheduleSeconds: number[];
    /** DeliveryFailureRateHigh: failed / finished deliveries of a tenant over the window, above this. */
    failureRateThreshold: number;
    failureRateWindowSeconds: number;
    /** …counted only once the tenant finished at least this many in the window. */
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

export class ConfigError extends Error {}

const DESCRIPTIONS: Record<keyof Env, string> = {
  DATABASE_URL: 'a postgres:// or postgresql:// URL',
  DATABASE_PREPARED_STATEMENTS: 'true or false',
  DATA_DIR: 'a directory path',
  HOST: 'a host name or address to listen on',
  PORT: 'an integer from 0 to 65535',
  PUBLIC_URL: 'an origin such as https://hub.example.com (scheme, host and optional port, no path)',
  HUBGATE_SECRET_KEY: 'at least 32 random bytes, base64-encoded',
  DELIVERY_ALLOW_HTTP: 'true or false',
  DELIVERY_ALLOWED_CIDRS: 'a comma-separated list of CIDR ranges such as 127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: 'a comma-separated list of whole seconds such as 5,300,1800',
  DELIVERY_TIMEOUT_MS: 'a whole number of milliseconds from 100 to 600000',
  DELIVERY_CONCURRENCY: 'a whole number of attempts from 1 to 1000',
  DELIVERY_RETENTION_DAYS: 'a whole number of days from 1 to 36500',
  RATE_LIMIT_PER_MINUTE: 'a whole number of requests from 1 upwards',
  LOG_LEVEL: 'one of fatal, error, warn, info, debug, trace, silent',
  TRUST_PROXY:
    "false, a hop count from 1 to 10, or a comma-separated list of the proxies' CIDRs such as 10.0.0.0/8 (true would trust addresses the client wrote)",
  REQUEST_TIMEOUT_MS: 'a whole number of milliseconds from 100 to 600000',
  AUDIT_RETENTION_DAYS: 'a whole number of days from 1 to 36500',
  CONNECTORS_DISABLED: 'a comma-separated list of connector keys such as slack,http',
  ALERT_EVALUATION_INTERVAL_MS: 'a whole number of milliseconds from 100 to 86400000',
  ALERT_RETRY_SCHEDULE: 'a comma-separated list of whole seconds such as 10,60,300',
  ALERT_FAILURE_RATE_THRESHOLD: 'a ratio from 0 to 1 such as 0.25',
  ALERT_FAILURE_RATE_WINDOW_SECONDS: 'a whole number of seconds from 10 to 86400',
  ALERT_FAILURE_RATE_MIN_DELIVERIES: 'a whole number from 1 upwards',
  ALERT_QUEUE_BACKLOG_THRESHOLD: 'a whole number from 1 upwards',
  SSO_SPNEGO_KEYTAB: 'the path of a keytab file holding the HTTP service key',
  SSO_SPNEGO_EMAIL_DOMAIN: 'a domain name such as example.com (name@REALM signs in as name@example.com)',
  SSO_SPNEGO_PRINCIPAL: 'a GSS service name such as HTTP@hub.example.com',
  SSO_SPNEGO_REALM: 'a Kerberos realm such as EXAMPLE.COM',
};

// Values that may hold credentials are named but never echoed.
const SECRET_VARIABLES = new Set<keyof Env>(['DATABASE_URL', 'HUBGATE_SECRET_KEY']);

function invalid(name: keyof Env, value: string | undefined): ConfigError {
  const shown = SECRET_VARIABLES.has(name) ? '' : `=${JSON.stringify(value ?? '')}`;
  return new ConfigError(`invalid ${name}${shown}: expected ${DESCRIPTIONS[name]}`);
}

function intIn(env: Env, name: keyof Env, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(name, raw);
  return value;
}

function parseCidrs(raw: string | undefined): Config['delivery']['allowedCidrs'] {
  if (!raw || raw.trim() === '') return [];
  return raw.split(',').map((part) => {
    try {
      return ipaddr.parseCIDR(part.trim());
    } catch {
      throw invalid('DELIVERY_ALLOWED_CIDRS', raw);
    }
  });
}

// Proxies sit in the operator's network or a CDN's. None is wider than the widest private block
// (10.0.0.0/8; for IPv6 the unique-local fc00::/7) or, elsewhere in IPv6, a /16 (CDNs publish /28
// to /32). A wider range holds clients, whose X-Forwarded-For would be believed: `true` in disguise.
const WIDEST_IPV4 = 8;
const WIDEST_IPV6 = 16;
const UNIQUE_LOCAL = ipaddr.parseCIDR('fc00::/7');
const IPV4_MAPPED = ipaddr.parseCIDR('::ffff:0:0/96');

/** The range an entry trusts, IPv4-mapped ranges as the IPv4 range they are (as proxy-addr reads them). */
function proxyRange(part: string): Cidr | undefined {
  const [, text = '', bits] = /^([^/]*)(?:\/([0-9]{1,3}))?$/.exec(part.trim()) ?? [];
  const address = parseIpLiteral(text);
  if (!address) return undefined;
  const max = address.kind() === 'ipv4' ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (prefix > max) return undefined;
  if (address.kind() === 'ipv6' && prefix >= 96 && address.match(IPV4_MAPPED)) {
    return [(address as ipaddr.IPv6).toIPv4Address(), prefix - 96];
  }
  return [address, prefix];
}

function holdsClients([address, prefix]: Cidr): boolean {
  if (address.kind() === 'ipv4') return prefix < WIDEST_IPV4;
  // An IPv6 range around the IPv4-mapped block trusts every IPv4 client too.
  if (prefix < 96 && IPV4_MAPPED[0].match(address, prefix)) return true;
  return prefix < WIDEST_IPV6 && !(prefix >= UNIQUE_LOCAL[1] && address.match(UNIQUE_LOCAL));
}

function parseTrustProxy(raw: string | undefined): Config['trustProxy'] {
  if (raw === undefined || raw === 'false') return false;
  if (/^[0-9]+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1 || hops > 10) throw invalid('TRUST_PROXY', raw);
    return hops;
  }
  return raw.split(',').map((part) => {
    const range = proxyRange(part);
    if (!range) throw invalid('TRUST_PROXY', raw);
    if (holdsClients(range)) {
      throw new ConfigError(
        `invalid TRUST_PROXY=${JSON.stringify(raw)}: ${part.trim()} is wider than a proxy network ` +
          `(at most /${WIDEST_IPV4} for IPv4, /${WIDEST_IPV6} for IPv6 outside fc00::/7) and would trust addresses clients write`,
      );
    }
    return `${range[0].toString()}/${range[1]}`;
  });
}

function parseSso(env: Env, publicUrl: URL): SsoConfig | null {
  if (env.SSO_SPNEGO_KEYTAB === undefined) return null;
  if (env.SSO_SPNEGO_EMAIL_DOMAIN === undefined) {
    throw new ConfigError(
      `missing SSO_SPNEGO_EMAIL_DOMAIN: single sign-on (SSO_SPNEGO_KEYTAB) needs it, as ${DESCRIPTIONS.SSO_SPNEGO_EMAIL_DOMAIN}`,
    );
  }
  const principal = env.SSO_SPNEGO_PRINCIPAL ?? `HTTP@${publicUrl.hostname}`;
  if (!new RegExp(SERVICE_NAME).test(principal)) {
    throw new ConfigError(
      `invalid SSO_SPNEGO_PRINCIPAL: unset, it is HTTP@ the host of PUBLIC_URL (${principal}), which is not a host name; set it, as ${DESCRIPTIONS.SSO_SPNEGO_PRINCIPAL}`,
    );
  }
  return {
    keytab: env.SSO_SPNEGO_KEYTAB,
    emailDomain: env.SSO_SPNEGO_EMAIL_DOMAIN.toLowerCase(),
    principal,
    realm: env.SSO_SPNEGO_REALM ?? null,
  };
}

/** Parses the environment; throws ConfigError with one line that names the offending variable. */
export function parseConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string> = {};
  for (const name of Object.keys(EnvSchema.properties)) {
    const value = source[name];
    if (value !== undefined && value !== '') picked[name] = value;
  }
  const [firstError] = Value.Errors(EnvSchema, picked);
  if (firstError) {
    const name = firstError.instancePath.replace(/^\//, '') as keyof Env;
    throw invalid(name, picked[name]);
  }
  const env = picked as Env;

  const port = intIn(env, 'PORT', 8080, 0, 65535);
  let publicUrl: URL;
  try {
    publicUrl = new URL(env.PUBLIC_URL ?? `http://localhost:${port}`);
  } catch {
    throw invalid('PUBLIC_URL', env.PUBLIC_URL);
  }
  const seconds = (list: string) => list.split(',').map((s) => Number(s.trim()));
  const schedule = seconds(env.DELIVERY_RETRY_SCHEDULE ?? '5,300,1800,7200,18000,36000,36000');

  return {
    database: env.DATABASE_URL
      ? {
          kind: 'postgres',
          url: env.DATABASE_URL,
          preparedStatements: env.DATABASE_PREPARED_STATEMENTS !== 'false',
        }
      : { kind: 'embedded', dataDir: env.DATA_DIR ?? './data' },
    host: env.HOST ?? '127.0.0.1',
    port,
    publicUrl,
    secretKey: env.HUBGATE_SECRET_KEY,
    delivery: {
      allowHttp: env.DELIVERY_ALLOW_HTTP === 'true',
      allowedCidrs: parseCidrs(env.DELIVERY_ALLOWED_CIDRS),
      retryScheduleSeconds: schedule,
      timeoutMs: intIn(env, 'DELIVERY_TIMEOUT_MS', 10_000, 100, 600_000),
      concurrency: intIn(env, 'DELIVERY_CONCURRENCY', 64, 1, 1_000),
      retentionDays: intIn(env, 'DELIVERY_RETENTION_DAYS', 30, 1, 36_500),
    },
    rateLimitPerMinute: intIn(env, 'RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000_000),
    bodyLimitBytes: 1024 * 1024,
    requestTimeoutMs: intIn(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
    auditRetentionDays: intIn(env, 'AUDIT_RETENTION_DAYS', 365, 1, 36_500),
    logLevel: env.LOG_LEVEL ?? 'info',
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    disabledConnectors: (env.CONNECTORS_DISABLED ?? '')
      .split(',')
      .map((key) => key.trim())
      .filter(Boolean),
    sso: parseSso(env, publicUrl),
    alerts: {
      evaluationIntervalMs: intIn(env, 'ALERT_EVALUATION_INTERVAL_MS', 15_000, 100, 86_400_000),
      retryScheduleSeconds: seconds(env.ALERT_RETRY_SCHEDULE ?? '10,60,300,1800,7200'),
      failureRateThreshold: Number(env.ALERT_FAILURE_RATE_THRESHOLD ?? 0.25),
      failureRateWindowSeconds: intIn(env, 'ALERT_FAILURE_RATE_WINDOW_SECONDS', 300, 10, 86_400),
      failureRateMinDeliveries: intIn(env, 'ALERT_FAILURE_RATE_MIN_DELIVERIES', 20, 1, 10_000_000),
      queueBacklogThreshold: intIn(env, 'ALERT_QUEUE_BACKLOG_THRESHOLD', 1_000, 1, 1_000_000_000),
    },
  };
}
