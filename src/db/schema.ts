import type { ColumnType, Generated } from 'kysely';

/** Row types of the tables, as Kysely sees them. Columns are snake_case; stores map them to records. */
type Timestamp = ColumnType<Date, Date | string, Date | string>;
type Json<T> = ColumnType<T, string, string>;
/** A nullable timestamp the database defaults to null: optional on insert. */
type OptionalTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

// Text columns that hold one of a fixed set. The sets live here, with the rows, so a row read back is
// typed without a cast; access/catalog and platform/alerting/kinds export them to the domains.
/** The modules a tenant can be entitled to (docs/api/authentication.md). */
export const MODULE_KEYS = ['integrations', 'integration_hub'] as const;
export type ModuleKey = (typeof MODULE_KEYS)[number];
/** A person's role in their tenant (docs/api/authentication.md). */
export const ROLES = ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN', 'MEMBER'] as const;
export type Role = (typeof ROLES)[number];
/** `invited` until the invitation is accepted, then `active` (docs/api/people.md). */
export const USER_STATUSES = ['active', 'invited'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];
/** The five alert channel kinds (docs/operators/alerting.md). */
export const CHANNEL_KINDS = ['EMAIL', 'WEBHOOK', 'SLACK', 'GRAFANA', 'HTTP'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export interface TenantsTable {
  id: string;
  name: string;
  created_at: Timestamp;
}

export interface TenantEntitlementsTable {
  tenant_id: string;
  module_key: ModuleKey;
  granted_at: Timestamp;
}

export interface UsersTable {
  id: string;
  tenant_id: string;
  email: string;
  role: Role;
  password_hash: string | null;
  password_sign_in_enabled: Generated<boolean>;
  /** The WebAuthn user handle (base64url), one per user, made with the first passkey offer. */
  webauthn_user_id: Generated<string | null>;
  created_at: Timestamp;
  status: Generated<UserStatus>;
  /** When a session of theirs last started, by any way of signing in. */
  last_sign_in_at: OptionalTimestamp;
}

/** An invitation link (docs/api/people.md): a keyed hash of its token, never the token; single use. */
export interface InvitationsTable {
  token_hash: string;
  tenant_id: string;
  user_id: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: OptionalTimestamp;
}

/** An invitation link made, kept for an hour: what the rate of links per tenant and address counts. */
export interface InvitationLinksTable {
  tenant_id: string;
  email: string;
  made_at: Timestamp;
}

export interface PlatformKeysTable {
  id: string;
  name: string;
  prefix: string;
  secret_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

export interface AuditLogTable {
  id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  request_id: string | null;
  metadata: Json<Record<string, unknown>>;
  created_at: Timestamp;
}

export interface SessionsTable {
  id: string;
  token_hash: string;
  user_id: string;
  tenant_id: string;
  auth_method: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  name: string;
  prefix: string;
  secret_hash: string;
  previous_secret_hash: string | null;
  previous_valid_until: Timestamp | null;
  scopes: Json<string[]>;
  created_at: Timestamp;
  created_by: string | null;
  expires_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  rotated_at: Timestamp | null;
  /** The key's requests per minute; null: `RATE_LIMIT_PER_MINUTE` (docs/api/keys.md). */
  rate_limit_per_minute: number | null;
}

export interface SignInFailuresTable {
  account: string;
  failed_at: Timestamp;
}

/** First-run setup tokens (docs/operators/setup.md): a keyed hash of each, never the token. */
export interface SetupTokensTable {
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** A passkey (docs/api/passkeys.md): the public half and what verifying its assertions needs. */
export interface PasskeysTable {
  id: string;
  tenant_id: string;
  user_id: string;
  /** base64url, as the browser sends it */
  credential_id: string;
  /** COSE public key, base64url */
  public_key: string;
  counter: ColumnType<string | number, number, number>;
  transports: Json<string[]>;
  backup_eligible: boolean;
  backed_up: boolean;
  aaguid: string;
  name: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}

/** A WebAuthn challenge handed out and not yet used: single-use, five minutes. */
export interface WebauthnChallengesTable {
  challenge: string;
  ceremony: 'registration' | 'authentication';
  /** The session a registration was offered to; null for sign-in. */
  session_id: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** A minute of monitoring history (docs/operators/monitoring.md); null where nothing was measured. */
export interface MonitoringMinutesTable {
  minute: Timestamp;
  delivered: number | null;
  failed: number | null;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  latency_p99_ms: number | null;
  queue_depth: number | null;
}

export interface MonitoringRollupTable {
  id: number;
  rolled_up_to: Timestamp;
}

export interface RateLimitWindowsTable {
  bucket: string;
  window_start: Timestamp;
  hits: Generated<number>;
}

/** A connection's state (docs/api/connections.md): `disabled` (revoked) is final. */
export const CONNECTION_STATUSES = ['active', 'paused', 'disabled'] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];
/** Why a connection is paused: by hand, failing for long, or its receiver said 410 Gone. */
export const PAUSED_REASONS = ['manual', 'failing', 'gone'] as const;
export type PausedReason = (typeof PAUSED_REASONS)[number];
/** An OAuth2 connection's authorization (docs/api/oauth.md); null on connectors without one. */
export const AUTHORIZATION_STATUSES = ['none', 'authorized', 'expired'] as const;
export type AuthorizationStatus = (typeof AUTHORIZATION_STATUSES)[number];
/** How hubgate gets a provider's tokens (docs/api/oauth.md). */
export const OAUTH_GRANTS = ['authorization_code', 'client_credentials'] as const;
export type OAuthGrant = (typeof OAUTH_GRANTS)[number];

export interface ConnectionsTable {
  id: string;
  tenant_id: string;
  connector_key: string;
  display_name: string;
  status: ConnectionStatus;
  config: Json<Record<string, unknown>>;
  credentials_sealed: string | null;
  credentials_bound_at: Timestamp | null;
  previous_credentials_sealed: string | null;
  previous_valid_until: Timestamp | null;
  created_at: Timestamp;
  created_by: string | null;
  revoked_at: Timestamp | null;
  paused_at: OptionalTimestamp;
  paused_reason: Generated<PausedReason | null>;
  /** Deliveries in a row that ended `failed` (reset by one delivered), and when the first of them did. */
  failure_streak: Generated<number>;
  failure_streak_since: OptionalTimestamp;
}

/** Connect links (docs/api/connect-links.md): a keyed hash of the link's code, never the code. */
export interface ConnectSessionsTable {
  id: string;
  tenant_id: string;
  connector_key: string;
  /** The person in the caller's own system, as the caller named them. */
  subject: string;
  display_name: string | null;
  /** The connector's config fields the link fixed in advance. */
  config: Json<Record<string, unknown>>;
  code_hash: string;
  expires_at: Timestamp;
  created_at: Timestamp;
  created_by_type: string;
  created_by: string | null;
  /** Set while a complete creates the connection: another complete is refused until then. */
  completing_until: Timestamp | null;
  completed_at: Timestamp | null;
  connection_id: string | null;
  revoked_at: Timestamp | null;
}

/**
 * An OAuth2 connection's authorization (docs/api/oauth.md), one row per connection of an OAuth2
 * connector and none for others: what the API shows of it, never a token (the tokens are the
 * connection's credentials), and the refresh lease. oauth/ owns it (decision 0070).
 */
export interface OAuthAuthorizationsTable {
  connection_id: string;
  tenant_id: string;
  status: AuthorizationStatus;
  scopes: Json<string[]>;
  /** When the current access token expires. */
  expires_at: OptionalTimestamp;
  /** While a refresh of its tokens is under way (one process at a time): until when its lease holds. */
  refreshing_until: OptionalTimestamp;
}

/** An OAuth2 provider (docs/api/oauth.md), the operator's: the client secret only sealed. */
export interface OAuthProvidersTable {
  key: string;
  name: string;
  authorization_url: string | null;
  token_url: string;
  api_base_url: string;
  client_id: string;
  client_secret_sealed: string;
  scopes: Json<string[]>;
  grant_type: OAuthGrant;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** An authorization started and not yet come back: a keyed hash of its `state`, single use. */
export interface OAuthStatesTable {
  state_hash: string;
  tenant_id: string;
  connection_id: string;
  /** Who started it and gets it back: exactly one of the three (migration 0026). */
  user_id: string | null;
  portal_session_id: string | null;
  connect_session_id: string | null;
  verifier_sealed: string;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** Attempts started per connection and whole second (the `maxPerSecond` throttle). */
export interface ConnectionSendPermitsTable {
  connection_id: string;
  second: ColumnType<string | number, number, number>;
  used: number;
}

/** The last delivery queued per `per-key` connection and ordering key: what the next one waits for. */
export interface OrderingHeadsTable {
  connection_id: string;
  ordering_key: string;
  delivery_id: string | null;
  delivery_created_at: Timestamp | null;
}

/** Per connection, how many events its payload filter dropped (src/delivery/filtered-store.ts). */
export interface FilterCountsTable {
  connection_id: string;
  tenant_id: string;
  /** bigint */
  total: string;
  /** When the first event counted was published. */
  since: Timestamp;
  last_at: Timestamp;
}

/** The last 100 events a connection's payload filter dropped, a ring of slots 0–99 per connection. */
export interface FilteredEventsTable {
  connection_id: string;
  slot: number;
  tenant_id: string;
  event_id: string;
  event_type: string;
  created_at: Timestamp;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  payload_sealed: string;
  delivery_count: number;
  created_at: Timestamp;
  /** The W3C `traceparent` of the span that published it (tracing on), which attempts link to. */
  trace_context: string | null;
}

/** A tenant's registered event type (docs/api/events.md); `schema` is a JSON Schema 2020-12 for `data`. */
export interface EventTypesTable {
  tenant_id: string;
  name: string;
  description: string | null;
  schema: ColumnType<Record<string, unknown> | null, string | null, string | null>;
  deprecated: boolean;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A tenant's portal settings (docs/api/portal.md): absent until the first PUT, the defaults then. */
export interface PortalSettingsTable {
  tenant_id: string;
  /** The origins (`https://host[:port]`) that may frame the tenant's portal page. */
  frame_ancestors: Json<string[]>;
  branding_name: string | null;
  branding_logo_url: string | null;
  branding_accent_color: string | null;
  updated_at: Timestamp;
}

/** A publish's Idempotency-Key and the answer it gave, for 24 hours (docs/api/events.md). */
export interface EventIdempotencyKeysTable {
  tenant_id: string;
  key: string;
  request_hash: string;
  event_id: string;
  event_type: string;
  delivery_count: number;
  created_at: Timestamp;
}

export const DELIVERY_STATUSES = [
  'pending',
  'delivering',
  'retrying',
  'delivered',
  'failed',
  'cancelled',
  'skipped',
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveriesTable {
  id: string;
  tenant_id: string;
  event_id: string;
  connection_id: string;
  status: DeliveryStatus;
  attempt_count: Generated<number>;
  next_attempt_at: Timestamp | null;
  lease_until: Timestamp | null;
  leased_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  delivered_at: Timestamp | null;
  /** A test delivery (docs/api/events.md), made by `POST …/test` for this connection alone. */
  test: Generated<boolean>;
  /** The answer's status of the last attempt, for the log's `responseStatus` filter. */
  last_response_status: Generated<number | null>;
  /** The event's `orderingKey` on a `per-key` connection (docs/api/events.md, Ordering); else null. */
  ordering_key: Generated<string | null>;
  /** The delivery of its key it waits for (not due meanwhile); null when free. */
  waiting_for: Generated<string | null>;
  /**
   * Its place in publish order (bigint, from `deliveries_seq`), which a key's deliveries sent again
   * keep; null only on rows that had ended delivered or cancelled before the column existed.
   */
  seq: Generated<string | null>;
}

export interface DeliveryAttemptsTable {
  delivery_id: string;
  /** The delivery's `created_at`: the key its partition is chosen by, as the delivery's is. */
  delivery_created_at: Timestamp;
  number: number;
  started_at: Timestamp;
  duration_ms: number;
  remote_address: string | null;
  response_status: number | null;
  error: string | null;
  error_detail: string | null;
  /** What was sent (method, URL, headers; a credential header's value redacted), as JSON. */
  request: Generated<string | null>;
  /** The answer's headers and the start of its body, as JSON; null when none came. */
  response: Generated<string | null>;
}

export interface AlertChannelsTable {
  id: string;
  name: string;
  kind: ChannelKind;
  enabled: boolean;
  config: Json<Record<string, unknown>>;
  secrets_sealed: string;
  secret_fields: Json<string[]>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** The channel's last delivery attempt (a notification or a test); null before the first. */
  last_attempt: ColumnType<ChannelAttempt | null, string | null | undefined, string | null>;
}

export interface ChannelAttempt {
  at: string;
  ok: boolean;
  responseStatus: number | null;
  error: string | null;
  test: boolean;
}

export interface AlertRoutingTable {
  id: number;
  revision: number;
  document: Json<Record<string, unknown>>;
  updated_at: Timestamp;
}

export interface AlertLeasesTable {
  name: string;
  holder: string;
  lease_until: Timestamp;
}

export type AlertStatus = 'firing' | 'resolved';

export interface AlertsTable {
  fingerprint: string;
  labels: Json<Record<string, string>>;
  annotations: Json<Record<string, string>>;
  status: AlertStatus;
  starts_at: Timestamp;
  ends_at: Timestamp | null;
  updated_at: Timestamp;
}

/** One alert as a notice holds it: what the channel is told, frozen when the notice is queued. */
export interface NoticeAlert {
  fingerprint: string;
  status: AlertStatus;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string | null;
}

export interface AlertNotificationsTable {
  id: string;
  /** `alertname/tenantId`: the group whose alerts the notice lists. */
  group_key: string;
  alerts: Json<NoticeAlert[]>;
  /** Alerts of the group left out of `alerts` (too many for one notice). */
  truncated_alerts: Generated<number>;
  channel_id: string;
  status: AlertStatus;
  state: 'pending' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: Timestamp | null;
  last_error: string | null;
  created_at: Timestamp;
  sent_at: Timestamp | null;
}

export interface AlertChannelStateTable {
  fingerprint: string;
  channel_id: string;
  last_status: AlertStatus;
  last_notified_at: Timestamp;
}

/** Portal sessions (docs/api/portal.md): keyed hashes of the link's code and of its token, never either. */
/** A portal session's tokens, one per code exchanged (migration 0026); they end with the session. */
export interface PortalSessionTokensTable {
  token_hash: string;
  session_id: string;
  created_at: Timestamp;
}

export interface PortalSessionsTable {
  id: string;
  tenant_id: string;
  /** The person in the caller's own system, as the caller named them. */
  subject: string;
  access: 'read' | 'operate' | 'manage';
  /** Null: every connection of the tenant, now and later. */
  connection_ids: string[] | null;
  /** Cleared when the code is exchanged: it works once. */
  code_hash: string | null;
  code_expires_at: Timestamp;
  expires_at: Timestamp;
  created_at: Timestamp;
  created_by_type: string;
  created_by: string | null;
  exchanged_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

/** A dynamically registered MCP client (docs/api/mcp.md): public, no secret. */
export interface McpClientsTable {
  id: string;
  name: string;
  redirect_uris: Json<string[]>;
  created_at: Timestamp;
}

/** An /oauth/authorize request waiting for a person's consent. */
export interface McpAuthRequestsTable {
  id: string;
  client_id: string;
  redirect_uri: string;
  state: string | null;
  code_challenge: string;
  scopes: string[];
  expires_at: Timestamp;
}

/** A person's consent for an MCP client on their tenant, and the one-use code it was answered with. */
export interface McpGrantsTable {
  id: string;
  tenant_id: string;
  client_id: string;
  user_id: string;
  scopes: string[];
  redirect_uri: string;
  code_hash: string;
  code_challenge: string;
  code_expires_at: Timestamp;
  code_used_at: OptionalTimestamp;
  created_at: Timestamp;
  last_used_at: OptionalTimestamp;
  revoked_at: OptionalTimestamp;
}

/** An access or refresh token of a grant, as a keyed hash; a refresh token is kept once used. */
export interface McpTokensTable {
  token_hash: string;
  grant_id: string;
  kind: 'access' | 'refresh';
  expires_at: Timestamp;
  used_at: OptionalTimestamp;
}

/** A tenant's source of incoming webhooks (docs/api/sources.md). */
export interface SourcesTable {
  id: string;
  tenant_id: string;
  name: string;
  scheme: string;
  type_prefix: string;
  config: Json<Record<string, unknown>>;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_valid_until: OptionalTimestamp;
  status: 'active' | 'paused';
  max_per_second: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** A provider delivery ID a source has seen, and the event it became (null while it is published). */
export interface SourceDeliveriesTable {
  source_id: string;
  provider_delivery_id: string;
  event_id: string | null;
  received_at: Timestamp;
}

/** One request to a source's ingest URL, as the log keeps it. */
export interface SourceRequestsTable {
  id: string;
  tenant_id: string;
  source_id: string;
  received_at: Timestamp;
  outcome: string;
  event_id: string | null;
  provider_delivery_id: string | null;
  event_type: string | null;
  headers: Json<Record<string, string>>;
  body: string;
  body_truncated: boolean;
}

/** The limits the platform set for a tenant (docs/api/quotas.md); null is no limit. */
export interface TenantQuotasTable {
  tenant_id: string;
  events_per_day: number | null;
  connections: number | null;
  requests_per_minute: number | null;
  retention_days: number | null;
  updated_at: Timestamp;
}

/** The events a tenant with an `eventsPerDay` quota has reserved on a UTC day (quotas/). */
export interface TenantEventDaysTable {
  tenant_id: string;
  /** The UTC day, `YYYY-MM-DD`. */
  day: ColumnType<string, string, string>;
  events: number;
}

/** A tenant's usage in one UTC hour (usage/): counts, each a bigint. */
export interface UsageHourlyTable {
  tenant_id: string;
  hour: Timestamp;
  /** bigint */
  events_published: string;
  delivered: string;
  failed: string;
  skipped: string;
  attempts: string;
  proxy_calls: string;
  ingested: string;
}

export interface DB {
  tenant_quotas: TenantQuotasTable;
  tenant_event_days: TenantEventDaysTable;
  usage_hourly: UsageHourlyTable;
  sources: SourcesTable;
  source_deliveries: SourceDeliveriesTable;
  source_requests: SourceRequestsTable;
  mcp_clients: McpClientsTable;
  mcp_auth_requests: McpAuthRequestsTable;
  mcp_grants: McpGrantsTable;
  mcp_tokens: McpTokensTable;
  alert_channels: AlertChannelsTable;
  alert_routing: AlertRoutingTable;
  alert_leases: AlertLeasesTable;
  alerts: AlertsTable;
  alert_notifications: AlertNotificationsTable;
  alert_channel_state: AlertChannelStateTable;
  events: EventsTable;
  event_types: EventTypesTable;
  event_idempotency_keys: EventIdempotencyKeysTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  connections: ConnectionsTable;
  connect_sessions: ConnectSessionsTable;
  portal_session_tokens: PortalSessionTokensTable;
  connection_send_permits: ConnectionSendPermitsTable;
  ordering_heads: OrderingHeadsTable;
  filter_counts: FilterCountsTable;
  filtered_events: FilteredEventsTable;
  oauth_providers: OAuthProvidersTable;
  oauth_states: OAuthStatesTable;
  oauth_authorizations: OAuthAuthorizationsTable;
  tenants: TenantsTable;
  tenant_entitlements: TenantEntitlementsTable;
  users: UsersTable;
  invitations: InvitationsTable;
  invitation_links: InvitationLinksTable;
  platform_keys: PlatformKeysTable;
  audit_log: AuditLogTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  sign_in_failures: SignInFailuresTable;
  rate_limit_windows: RateLimitWindowsTable;
  setup_tokens: SetupTokensTable;
  passkeys: PasskeysTable;
  webauthn_challenges: WebauthnChallengesTable;
  monitoring_minutes: MonitoringMinutesTable;
  monitoring_rollup: MonitoringRollupTable;
  portal_settings: PortalSettingsTable;
  portal_sessions: PortalSessionsTable;
}
