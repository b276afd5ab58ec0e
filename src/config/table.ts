import {
  boolean,
  cidr,
  integer,
  list,
  matching,
  oneOf,
  origin,
  ratio,
  text,
  trustProxy,
  type Parsed,
  type Parser,
} from './parsers.js';

export class ConfigError extends Error {}

export const GROUPS = [
  'Storage',
  'Server and access',
  'Delivery',
  'Alerts',
  'Single sign-on',
  'E-mail',
  'Telemetry',
] as const;
export type Group = (typeof GROUPS)[number];

/** One environment variable: how it is read, what it is when unset, and what it means to an operator. */
export interface Setting<T> {
  readonly group: Group;
  readonly expects: string;
  readonly parse: (raw: string) => Parsed<T>;
  /** As an operator would write it, and read like a value they set; undefined: no value. */
  readonly default: string | undefined;
  /** The docs' default when there is no value to show: what being unset means. */
  readonly unset: string | undefined;
  /** One or two sentences for operators, in Markdown. */
  readonly doc: string;
  /** May hold credentials: errors name the variable but never echo its value. */
  readonly secret: boolean;
}

interface Entry<T> {
  group: Group;
  parser: Parser<T>;
  doc: string;
  secret?: boolean;
}

function common<T>({ group, parser, doc, secret = false }: Entry<T>) {
  return { group, expects: parser.expects, parse: (raw: string) => parser.parse(raw), doc, secret };
}

function setting<T>(entry: Entry<T> & { default: string }): Setting<T> {
  return { ...common(entry), default: entry.default, unset: undefined };
}

/** A variable with no default value: unset, it is undefined, or derived from others (`unset` says how). */
function optional<T>(entry: Entry<T> & { unset: string }): Setting<T | undefined> {
  return { ...common(entry), default: undefined, unset: entry.unset };
}

const DNS_LABEL = '[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
// A GSS host-based service name, `service@host`, with a host of DNS labels: an empty host (which
// `HTTP@.` becomes) would accept a ticket for any host's key in the keytab.
export const SERVICE_NAME = new RegExp(`^[A-Za-z][A-Za-z0-9-]*@${DNS_LABEL}(\\.${DNS_LABEL})*$`);
// At least two labels: a bare `localhost` as a user's e-mail domain is a typo, not a domain.
const DOMAIN_NAME = new RegExp(`^${DNS_LABEL}(\\.${DNS_LABEL})+$`);

/** A mail server's URL: smtp or smtps, a host, an optional port; user and password as its owner wrote them. */
const smtpUrl: Parser<string> = {
  expects: 'an smtp:// or smtps:// URL such as smtp://user:password@mail.example.com:587',
  parse(raw) {
    if (!/^smtps?:\/\/[^\s/?#]+\/?$/.test(raw) || !URL.canParse(raw)) return { ok: false };
    const url = new URL(raw);
    return url.hostname === '' ? { ok: false } : { ok: true, value: raw };
  },
};

const seconds = (example: string) => list(integer({ min: 0 }), `whole seconds such as ${example}`);
const [STORAGE, SERVER, DELIVERY, ALERTS, SSO, EMAIL, TELEMETRY] = GROUPS;

// OpenTelemetry's own variables (docs/operators/telemetry.md), read as its SDKs read them: OTLP over HTTP
// only, so `grpc` stops start-up instead of exporting nothing.
const otlpEndpoint = matching(
  /^https?:\/\/[^\s/?#]+/,
  'an http:// or https:// URL such as http://collector:4318',
);
const otlpProtocol = oneOf(['http/protobuf', 'http/json']);
const keyValuePairs = matching(
  /^\s*[^\s=,]+\s*=[^,]*(,\s*[^\s=,]+\s*=[^,]*)*$/,
  'comma-separated key=value pairs, values percent-encoded',
);
const otlpTimeout = integer({ min: 1, max: 600_000, unit: 'milliseconds' });

/**
 * The environment of docs/operators/deployment.md, the single source of `parseConfig` (config.ts), its error messages
 * and docs/configuration.md (`npm run docs:config`). Read in this order; the first bad value stops
 * start-up.
 */
export const SETTINGS = {
  DATABASE_URL: optional({
    group: STORAGE,
    parser: matching(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// URL'),
    unset: 'unset: the embedded database',
    doc: 'The PostgreSQL to use, as a `postgres://` or `postgresql://` URL. Unset, hubgate runs an embedded PostgreSQL (PGlite) in `DATA_DIR`, creating and migrating it on first use.',
    secret: true,
  }),
  DATABASE_PREPARED_STATEMENTS: setting({
    group: STORAGE,
    parser: boolean,
    default: 'true',
    doc: 'PostgreSQL only: run the statements requests repeat as named prepared statements, parsed and planned once per connection. Set `false` behind a pooler in transaction mode that cannot keep them (PgBouncer before 1.21).',
  }),
  DATA_DIR: setting({
    group: STORAGE,
    parser: text('a directory path'),
    default: './data',
    doc: 'Embedded mode only: the directory holding the database (`pgdata/`), the generated `secret.key` and `hubgate.lock`, which keeps a second process out. Readable by its owner only.',
  }),
  HUBGATE_SECRET_KEY: optional({
    group: STORAGE,
    parser: text('at least 32 random bytes, base64-encoded'),
    unset: 'generated into `DATA_DIR/secret.key` in embedded mode',
    doc: 'The master key, at least 32 random bytes in base64 (`openssl rand -base64 32`): API keys, sessions and the secrets stored encrypted (credentials, event payloads) depend on it, so changing it invalidates them all. Required with `DATABASE_URL`, the same value in every process.',
    secret: true,
  }),
  HOST: setting({
    group: SERVER,
    parser: text('a host name or address to listen on'),
    default: '127.0.0.1',
    doc: 'The address `serve` listens on; `0.0.0.0` or `::` listens on every interface.',
  }),
  PORT: setting({
    group: SERVER,
    parser: integer({ min: 0, max: 65535 }),
    default: '8080',
    doc: 'The TCP port `serve` listens on; `0` picks a free one (the start-up line shows which).',
  }),
  PUBLIC_URL: optional({
    group: SERVER,
    parser: origin,
    unset: '`http://localhost:PORT`',
    doc: "The origin browsers reach hubgate at: a browser's `Origin` header, when sent, must be it (CSRF and sign-in checks), passkeys are bound to its host, and links in the setup line, alert notifications and the OpenAPI document use it. An `https` origin turns on HSTS.",
  }),
  TRUST_PROXY: setting({
    group: SERVER,
    parser: trustProxy,
    default: 'false',
    doc: "Which `X-Forwarded-For` entries to believe for the client address that rate limits and the audit log use: none (`false`), the last N hops, or those added by your proxies' ranges (preferred). `true` is refused, and so is a range wider than /8 (IPv4) or /16 (IPv6 outside fc00::/7).",
  }),
  REQUEST_TIMEOUT_MS: setting({
    group: SERVER,
    parser: integer({ min: 100, max: 600_000, unit: 'milliseconds' }),
    default: '30000',
    doc: 'The time a client has to send a whole request, headers and body; a slower one gets `408` and the connection closes.',
  }),
  SHUTDOWN_GRACE_MS: setting({
    group: SERVER,
    parser: integer({ min: 0, max: 3_600_000, unit: 'milliseconds' }),
    default: '25000',
    doc: "On `SIGTERM` or `SIGINT`, how long `serve` and `worker` let requests and delivery attempts in flight finish after they stop accepting connections; then they exit 0 whatever is left, which another process or the next start takes again. Keep it under your orchestrator's stop timeout (Kubernetes 30 s, Compose 10 s unless `stop_grace_period` says more).",
  }),
  RATE_LIMIT_PER_MINUTE: setting({
    group: SERVER,
    parser: integer({ min: 1, max: 1_000_000_000, unit: 'requests' }),
    default: '600',
    doc: 'Requests per one-minute window for each credential (key or session), counted across every process. Requests without a valid credential, and sign-ins, count against it per client address.',
  }),
  PASSWORD_HASH_CONCURRENCY: optional({
    group: SERVER,
    parser: integer({ min: 1, max: 1_024, unit: 'hashes' }),
    unset: 'the number of CPUs',
    doc: 'Password hashes and checks (Argon2id: sign-in, setup, accepting an invitation) running at once in each process. More wait, at most 2 s, then get `503 unavailable` with `Retry-After`, so a burst of sign-ins cannot slow every other request down.',
  }),
  AUDIT_RETENTION_DAYS: setting({
    group: SERVER,
    parser: integer({ min: 1, max: 36_500, unit: 'days' }),
    default: '365',
    doc: 'Days audit entries are kept before they are deleted.',
  }),
  LOG_LEVEL: setting({
    group: SERVER,
    parser: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    doc: 'The least severe log lines written (pino levels); `silent` writes none.',
  }),
  DELIVERY_ALLOW_HTTP: setting({
    group: DELIVERY,
    parser: boolean,
    default: 'false',
    doc: 'Allow `http://` URLs for connections and alert channels, and plaintext SMTP for e-mail alerts. For development and tests.',
  }),
  DELIVERY_ALLOWED_CIDRS: setting({
    group: DELIVERY,
    parser: list(cidr, 'CIDR ranges such as 127.0.0.1/32'),
    default: '',
    doc: 'Address ranges that deliveries and alert channels may reach although the SSRF guard refuses them (private, loopback, link-local…). Local names such as `localhost` stay refused.',
  }),
  DELIVERY_RETRY_SCHEDULE: setting({
    group: DELIVERY,
    parser: seconds('5,300,1800'),
    default: '5,300,1800,7200,18000,36000,36000',
    doc: "Seconds before each retry of a failed delivery, one entry per retry, each ±20 % (a receiver's `Retry-After` can stretch a wait to twice its entry). When the list runs out, or the receiver answers `410`, the delivery has failed.",
  }),
  DELIVERY_TIMEOUT_MS: setting({
    group: DELIVERY,
    parser: integer({ min: 100, max: 600_000, unit: 'milliseconds' }),
    default: '10000',
    doc: 'The time one delivery attempt or alert notification may take, from connecting to the end of the answer. For a delivery that is every request of the attempt together: the OAuth2 token requests of a receiver behind `oauth2ClientCredentials` come out of it too. An attempt whose process died is taken up again after twice this plus 5 s.',
  }),
  DELIVERY_CONCURRENCY: setting({
    group: DELIVERY,
    parser: integer({ min: 1, max: 1_000, unit: 'attempts' }),
    default: '64',
    doc: 'Delivery attempts each process (`serve` or `worker`) has in flight at once.',
  }),
  DELIVERY_RETENTION_DAYS: setting({
    group: DELIVERY,
    parser: integer({ min: 1, max: 36_500, unit: 'days' }),
    default: '30',
    doc: "Days a day's events and deliveries are kept once that day has ended (see [scaling](operators/scaling.md)); the monitoring history, resolved alerts and sent or failed notifications are kept as long.",
  }),
  DELIVERY_RESPONSE_BODY_BYTES: setting({
    group: DELIVERY,
    parser: integer({ min: 0, max: 65_536, unit: 'bytes' }),
    default: '4096',
    doc: "How much of each answer's body a delivery attempt keeps for the event log, as UTF-8 text (0 keeps none). Deleted with the delivery.",
  }),
  CONNECTION_PAUSE_AFTER_FAILURES: setting({
    group: DELIVERY,
    parser: integer({ min: 0, max: 1_000_000, unit: 'deliveries' }),
    default: '20',
    doc: 'A connection pauses itself (reason `failing`) after this many deliveries in a row ended `failed`, the first of them at least `CONNECTION_PAUSE_AFTER_SECONDS` before the last; 0 turns this off. A `410 Gone` answer pauses it at once whatever this says (reason `gone`).',
  }),
  CONNECTION_PAUSE_AFTER_SECONDS: setting({
    group: DELIVERY,
    parser: integer({ min: 0, max: 31_536_000, unit: 'seconds' }),
    default: '86400',
    doc: 'How long the run of failed deliveries that pauses a connection must last, from the first to the last.',
  }),
  CONNECTORS_DISABLED: setting({
    group: DELIVERY,
    parser: list(matching(/^[a-z0-9_]+$/, 'a connector key'), 'connector keys such as slack,http'),
    default: '',
    doc: 'Connectors switched off on this hub: they take no new connections or credentials, and events are not delivered to their connections. An unknown key stops start-up.',
  }),
  ALERT_EVALUATION_INTERVAL_MS: setting({
    group: ALERTS,
    parser: integer({ min: 100, max: 86_400_000, unit: 'milliseconds' }),
    default: '15000',
    doc: 'How often the alert conditions are evaluated, by one process at a time.',
  }),
  ALERT_RETRY_SCHEDULE: setting({
    group: ALERTS,
    parser: seconds('10,60,300'),
    default: '10,60,300,1800,7200',
    doc: 'Seconds before each retry of an alert notification a channel did not take, one entry per retry; when the list runs out the notification has failed.',
  }),
  ALERT_FAILURE_RATE_THRESHOLD: setting({
    group: ALERTS,
    parser: ratio,
    default: '0.25',
    doc: 'DeliveryFailureRateHigh fires for a tenant when the share of its delivery attempts that failed within the window is above this.',
  }),
  ALERT_FAILURE_RATE_WINDOW_SECONDS: setting({
    group: ALERTS,
    parser: integer({ min: 10, max: 86_400, unit: 'seconds' }),
    default: '300',
    doc: 'The window DeliveryFailureRateHigh looks back over.',
  }),
  ALERT_FAILURE_RATE_MIN_DELIVERIES: setting({
    group: ALERTS,
    parser: integer({ min: 1, max: 10_000_000 }),
    default: '20',
    doc: 'DeliveryFailureRateHigh leaves a tenant alone until it made at least this many delivery attempts within the window.',
  }),
  ALERT_QUEUE_BACKLOG_THRESHOLD: setting({
    group: ALERTS,
    parser: integer({ min: 1, max: 1_000_000_000 }),
    default: '1000',
    doc: 'QueueBacklogHigh fires when more deliveries than this are due (pending or retrying), across all tenants.',
  }),
  SSO_SPNEGO_KEYTAB: optional({
    group: SSO,
    parser: text('the path of a keytab file holding the HTTP service key'),
    unset: 'unset: single sign-on off',
    doc: "The keytab holding the key of hubgate's `HTTP/host` service principal; setting it turns Kerberos single sign-on on (see [single sign-on](operators/sso.md)). `serve` refuses to start if it cannot be read or holds no key for the service.",
  }),
  SSO_SPNEGO_EMAIL_DOMAIN: optional({
    group: SSO,
    parser: matching(
      DOMAIN_NAME,
      'a domain name such as example.com (name@REALM signs in as name@example.com)',
    ),
    unset: 'required with the keytab',
    doc: '`name@REALM` signs in as the existing hubgate user `name@` this domain (compared in lower case); single sign-on creates no users.',
  }),
  SSO_SPNEGO_PRINCIPAL: optional({
    group: SSO,
    parser: matching(SERVICE_NAME, 'a GSS service name such as HTTP@hub.example.com'),
    unset: '`HTTP@` the host of `PUBLIC_URL`',
    doc: 'The service name browsers ask a ticket for, written `HTTP@host` (not `HTTP/host@REALM`).',
  }),
  SSO_SPNEGO_REALM: optional({
    group: SSO,
    parser: matching(/^[A-Za-z0-9._-]+$/, 'a Kerberos realm such as EXAMPLE.COM'),
    unset: 'any realm',
    doc: 'Accept only principals of this realm. Set it when your realm trusts others, or their users would sign in as users of your e-mail domain too.',
  }),
  SMTP_URL: optional({
    group: EMAIL,
    parser: smtpUrl,
    unset: 'unset: no e-mail is sent',
    doc: 'The mail server invitations are sent through, as `smtp://user:password@host:port` (STARTTLS when the server offers it; port 587 unless given) or `smtps://…` (TLS from the start; port 465 unless given); user and password percent-encoded. Unset, an invitation is only a link shown to whoever made it. A failed send is logged and never fails the invitation.',
    secret: true,
  }),
  SMTP_FROM: optional({
    group: EMAIL,
    parser: matching(/^[^\s@<>",;]+@[^\s@<>",;]+$/, 'an e-mail address such as hub@example.com'),
    unset: '`hubgate@` the host of `PUBLIC_URL`',
    doc: 'The sender of the e-mail hubgate sends (`From` and the envelope sender).',
  }),
  OTEL_EXPORTER_OTLP_ENDPOINT: optional({
    group: TELEMETRY,
    parser: otlpEndpoint,
    unset: 'unset: tracing off (unless the next is set)',
    doc: 'The OTLP/HTTP collector spans are sent to; `/v1/traces` is appended. Setting it (or the next) turns tracing on; see [telemetry](operators/telemetry.md).',
  }),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional({
    group: TELEMETRY,
    parser: otlpEndpoint,
    unset: 'unset: `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`',
    doc: 'The full URL spans are sent to, used as given; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`.',
  }),
  OTEL_EXPORTER_OTLP_PROTOCOL: setting({
    group: TELEMETRY,
    parser: otlpProtocol,
    default: 'http/protobuf',
    doc: 'How spans are encoded over HTTP. `grpc` is not supported: start-up stops and says so.',
  }),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optional({
    group: TELEMETRY,
    parser: otlpProtocol,
    unset: '`OTEL_EXPORTER_OTLP_PROTOCOL`',
    doc: 'The same for traces only; wins over `OTEL_EXPORTER_OTLP_PROTOCOL`.',
  }),
  OTEL_EXPORTER_OTLP_HEADERS: optional({
    group: TELEMETRY,
    parser: keyValuePairs,
    unset: 'none',
    doc: "Headers sent with every export, such as a vendor's API key: `api-key=abc,x-tenant=ops`. Never logged.",
    secret: true,
  }),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: optional({
    group: TELEMETRY,
    parser: keyValuePairs,
    unset: 'none',
    doc: 'Headers for trace exports only, added to (and winning over) `OTEL_EXPORTER_OTLP_HEADERS`.',
    secret: true,
  }),
  OTEL_EXPORTER_OTLP_TIMEOUT: setting({
    group: TELEMETRY,
    parser: otlpTimeout,
    default: '10000',
    doc: 'How long one export may take before it is abandoned (its spans are dropped).',
  }),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: optional({
    group: TELEMETRY,
    parser: otlpTimeout,
    unset: '`OTEL_EXPORTER_OTLP_TIMEOUT`',
    doc: 'The same for trace exports only.',
  }),
  OTEL_SERVICE_NAME: optional({
    group: TELEMETRY,
    parser: text('a service name'),
    unset: '`hubgate`',
    doc: "The resource's `service.name`; wins over one in `OTEL_RESOURCE_ATTRIBUTES`.",
  }),
  OTEL_RESOURCE_ATTRIBUTES: optional({
    group: TELEMETRY,
    parser: keyValuePairs,
    unset: 'none',
    doc: 'More resource attributes, such as `deployment.environment.name=prod,service.namespace=hub`.',
  }),
  OTEL_TRACES_SAMPLER: setting({
    group: TELEMETRY,
    parser: oneOf([
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
      'always_on',
      'always_off',
      'traceidratio',
    ]),
    default: 'parentbased_always_on',
    doc: "Which traces are recorded. The `parentbased_` ones follow an incoming `traceparent`'s sampled flag.",
  }),
  OTEL_TRACES_SAMPLER_ARG: optional({
    group: TELEMETRY,
    parser: ratio,
    unset: '`1.0`',
    doc: 'The share of traces the `traceidratio` samplers record.',
  }),
  OTEL_TRACES_EXPORTER: setting({
    group: TELEMETRY,
    parser: oneOf(['otlp', 'none']),
    default: 'otlp',
    doc: '`none` turns tracing off whatever the endpoints say.',
  }),
  OTEL_SDK_DISABLED: setting({
    group: TELEMETRY,
    parser: boolean,
    default: 'false',
    doc: '`true` turns tracing off whatever the endpoints say.',
  }),
} satisfies Record<string, Setting<unknown>>;

export type Name = keyof typeof SETTINGS;
type ValueOf<S> = S extends Setting<infer T> ? T : never;
/** The environment read: each variable as its own setting's type. */
export type Values = { readonly [N in Name]: ValueOf<(typeof SETTINGS)[N]> };

/** One line naming the variable, what it expects and, when it helps, what is wrong with the value. */
export function invalidValue(
  name: string,
  setting: Setting<unknown>,
  raw: string,
  problem?: string,
): ConfigError {
  // A problem may quote the value, so a secret's is left out with it.
  const shown = setting.secret ? '' : `=${JSON.stringify(raw)}`;
  const why = setting.secret || problem === undefined ? '' : `; ${problem}`;
  return new ConfigError(`invalid ${name}${shown}: expected ${setting.expects}${why}`);
}

/** Unset, empty and blank are the same: `FOO=` in an env file means "not configured", never "". */
function given(raw: string | undefined): string | undefined {
  return raw === undefined || raw.trim() === '' ? undefined : raw;
}

function read(name: string, setting: Setting<unknown>, raw: string | undefined): unknown {
  const value = given(raw) ?? setting.default;
  if (value === undefined) return undefined;
  const parsed = setting.parse(value);
  if (!parsed.ok) throw invalidValue(name, setting, value, parsed.problem);
  return parsed.value;
}

/** Reads every variable of the table, in its order; throws ConfigError for the first bad value. */
export function parseValues(env: Readonly<Record<string, string | undefined>>): Values {
  const values: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS)) values[name] = read(name, setting, env[name]);
  // Each value came from its own name's setting, which TypeScript cannot follow through a loop.
  return values as Values;
}
