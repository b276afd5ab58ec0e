/* eslint-disable max-lines -- one table of every route the UI calls, on purpose (below) */
// Every API route the UI calls, in one table: its method, its path template, who may call it, and
// the types of what it takes and answers. The types come type-only from the server's TypeBox
// schemas (`Static<typeof …>`), so a change of a route's shape breaks the UI's type check; none of
// these imports reaches the bundle (esbuild drops `import type`). `api(routes.keys.rotate, …)` in
// api.ts takes the path's parameters, the body and the query of that route and answers its answer.
// No other file names an `/api/v1/` path (eslint.config.js refuses one).
//
// Where a route declares its body or answer inline (not exported from src/), the type is written
// here after the API's documentation (docs/api/) and says so: `// inline in src/…`.
import type { Static, TProperties } from 'typebox';
// Fastify's route options as the server's program knows them (`config.openapi`, and `schema.tags` from
// @fastify/swagger), declared in src/access/openapi.ts, which src/app.ts loads there: src/sources/routes.ts
// registers its ingest URL on a plain Fastify instance, whose options are checked against them.
import type {} from '../../src/access/openapi.js';
import type { AuditEntry } from '../../src/access/audit-routes.js';
import type { FilterTestAnswer, FilterTestBody } from '../../src/connections/filter-routes.js';
import type {
  BindAnswer as BindAnswerSchema,
  ConnectionSchema,
  ResumeAnswer as ResumeAnswerSchema,
  ResumeBody,
} from '../../src/connections/routes.js';
import type { FilteredEventsAnswer } from '../../src/delivery/filtered-routes.js';
import type {
  RecoverAnswer,
  RecoverBody as RecoverBodySchema,
  TestEventAnswer,
  TestEventBody,
} from '../../src/delivery/operate-routes.js';
import type {
  DeliveryDetailSchema,
  DeliverySchema,
  LogQuery as LogQuerySchema,
  RetryAnswer,
  STATUSES,
} from '../../src/delivery/routes.js';
import type {
  CreateEventTypeBody,
  EventTypeSchema,
  PatchEventTypeBody,
} from '../../src/event-types/routes.js';
import type { PageQueryFields } from '../../src/http/pagination.js';
import type { ConnectorSchema, OverviewSchema, ReadinessSchema } from '../../src/hub/routes.js';
import type { AllowedScopes, KeyRecord, KeyWithSecret, RotateKeyBody } from '../../src/keys/routes.js';
import type {
  ConsentAnswer,
  ConsentBody,
  ConsentDecision,
  McpGrantList,
  McpGrantRecord,
} from '../../src/mcp-oauth/consent-routes.js';
import type {
  CreationOptions,
  LoginVerifyBody,
  PasskeyRecord,
  PasswordSignIn,
  RegistrationVerifyBody,
  RequestOptions,
} from '../../src/passkeys/schemas.js';
import type {
  ChangeRoleBody,
  CompanyUser,
  CompanyUserList,
  InvitationAcceptBody,
  InvitationLookup,
  InvitationLookupBody,
  InvitedUser,
  InviteUserBody,
} from '../../src/people/schemas.js';
import type { FiringAlerts as FiringAlertsSchema } from '../../src/platform/alerting/alerts-routes.js';
import type { FiringAlert } from '../../src/platform/alerting/alerts-store.js';
import type { CreateChannelBody, EditChannelBody } from '../../src/platform/alerting/channel-routes.js';
import type { Channel as ChannelRecord } from '../../src/platform/alerting/channels.js';
import type { ChannelKind } from '../../src/platform/alerting/kinds.js';
import type { ChannelSendResult } from '../../src/platform/alerting/notification.js';
import type { Matcher, MatcherOp, RoutingDocument, RoutingInput } from '../../src/platform/alerting/rules.js';
import type { HistorySchema } from '../../src/platform/monitoring-routes.js';
import type { MonitoringSnapshot } from '../../src/platform/monitoring.js';
import type {
  ConnectCompletion as ConnectCompletionInput,
  ConnectOutcome,
  connectSessionView,
} from '../../src/portal/connect-links.js';
import type { PortalSettings } from '../../src/portal/settings-schemas.js';
import type { SetupAnswer as SetupAnswerSchema, SetupBody, SetupStatus } from '../../src/setup/routes.js';
import type { SignInAnswer as SignInAnswerSchema } from '../../src/sign-in/answer.js';
import type { LoginBody } from '../../src/sign-in/routes.js';
import type {
  CreateSourceBodySchema,
  PatchSourceBodySchema,
  RequestLogQuery,
  RotateSourceSecretBody,
  SourceRequestSchema,
  SourceSchema,
  SourceWithSecret,
} from '../../src/sources/routes.js';
import type { AuthMethods as AuthMethodsSchema } from '../../src/sso/routes.js';
import type { AddUserBody } from '../../src/tenants/routes.js';
import type { Tenant, User } from '../../src/tenants/tenants.js';

// ---- The API's shapes ----

type Fields<P extends TProperties> = { [K in keyof P]?: Static<P[K]> | null };
/**
 * The query of every list (docs/api/conventions.md): `limit`, `cursor`; a null or empty value is left out.
 */
export type PageQuery = Fields<typeof PageQueryFields>;

/** Every list (docs/api/conventions.md): a page of items and the cursor of the next. */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

export type Connection = Static<typeof ConnectionSchema>;
export type EventType = Static<typeof EventTypeSchema>;
export type Connector = Static<typeof ConnectorSchema>;
export type Overview = Static<typeof OverviewSchema>;
export type Readiness = Static<typeof ReadinessSchema>;
export type DeliveryStatus = (typeof STATUSES)[number];
export type ConnectionStatus = Connection['status'];
export type PausedReason = NonNullable<Connection['pausedReason']>;

/**
 * One entry of a connection's event log (docs/api/events.md): `test`, `waitingFor`, each attempt's request
 * and response.
 */
export type Delivery = Static<typeof DeliverySchema>;
export type DeliveryAttempt = Delivery['attempts'][number];
/** What an attempt sent (docs/api/events.md): a credential header's value reads "[redacted]". */
export type AttemptRequest = NonNullable<DeliveryAttempt['request']>;
/** What the receiver answered: at most 20 headers and the start of the body; null without an answer. */
export type AttemptResponse = NonNullable<DeliveryAttempt['response']>;
/** `GET …/connections/:id/events/:deliveryId`: the entry and the body as delivered. */
export type DeliveryDetail = Static<typeof DeliveryDetailSchema>;

/** `GET …/connections/:id/filtered-events`: the events its payload filter dropped, and their count. */
export type FilteredEvents = Static<typeof FilteredEventsAnswer>;

/** The log's filters (docs/api/events.md); a null or empty value is left out, as in `PageQuery`. */
export type LogQuery = Fields<(typeof LogQuerySchema)['properties']>;

/** `POST …/connections/:id/resume`. */
export type ResumeAnswer = Static<typeof ResumeAnswerSchema>;
/** `PUT …/connections/:id/credentials`: `credentials` holds only the values hubgate generated, shown this once. */
export type BindAnswer = Static<typeof BindAnswerSchema>;
/** `POST …/connections/:id/recover`. */
export type RecoverBody = Static<typeof RecoverBodySchema>;

/**
 * What the consent page shows of an MCP client's request (docs/api/mcp.md): the name the application gave
 * itself, where it returns to, the organization, and the scopes the person may grant.
 */
export type ConsentView = Static<typeof ConsentAnswer>;
/** An MCP client given access with OAuth, as the API keys page lists it. */
export type McpGrant = Static<typeof McpGrantRecord>;

/**
 * A key's own rate limit (contract §24): requests per minute, null for the hub's default. Written here
 * until src/keys/routes.ts's schemas carry it; then the intersection is the schema's own field.
 */
interface KeyRateLimit {
  rateLimitPerMinute?: number | null;
}
export type ApiKey = Static<typeof KeyRecord> & KeyRateLimit;
export type ApiKeyWithSecret = Static<typeof KeyWithSecret> & KeyRateLimit;
export type AllowedScopesAnswer = Static<typeof AllowedScopes>;
export type AuditEntryRecord = Static<typeof AuditEntry>;
/** The tenant's branding, as the portal and connect pages get it (inline in src/portal/routes.ts). */
export type Branding = PortalSettingsRecord['branding'];
/** A portal session as its page sees it (inline in src/portal/routes.ts): never the token. */
export interface PortalSessionView {
  expiresAt: string;
  session: { id: string; subject: string; access: PortalLevel; connectionIds: string[] | null };
  tenant: { id: string; name: string };
  branding: Branding;
}
/** The exchange's answer: the view and the `ptl_` token, shown this once. */
export type PortalExchangeAnswer = PortalSessionView & { token: string };
/** The tenant's portal framing and branding (docs/api/portal.md), the same shape read and saved. */
export type PortalSettingsRecord = Static<typeof PortalSettings>;

/**
 * What a connect link's page shows (docs/api/connect-links.md): the tenant, the connector and the
 * fields the link did not fix, the proposed display name, and the tenant's branding.
 */
export type ConnectView = Awaited<ReturnType<typeof connectSessionView>>;
/** One field of a connect link's page: a config field or a credential field, as the catalog says it. */
export type ConnectField = ConnectView['connector']['fields'][number];
/** `POST /api/v1/connect/complete`: the code, and the fields the link left to the person. */
export type ConnectCompletion = ConnectCompletionInput;
/**
 * The complete's answers: the connection made (201), or, for an OAuth2 connector of the
 * authorization-code grant, where the person authorizes it (200, contract §20).
 */
export type ConnectCompleted = ConnectOutcome;

/** A source of incoming webhooks (docs/api/sources.md): never its secret. */
export type Source = Static<typeof SourceSchema>;
/** A create or rotate answer: `secret` only when hubgate made it, shown this once. */
export type SourceWithSecretAnswer = Static<typeof SourceWithSecret>;
/**
 * The hmac scheme's own fields (docs/api/sources.md), written here: the server builds them from the
 * scheme modules at run time (`SchemeFields` in src/sources/routes.ts), so its schemas' static types
 * leave them out.
 */
export interface HmacSourceFields {
  signatureHeader?: string;
  encoding?: 'hex' | 'base64';
  signaturePrefix?: string;
  typePath?: string;
  eventType?: string;
  idPath?: string;
  idHeader?: string;
}
export type CreateSourceBody = Static<typeof CreateSourceBodySchema> & HmacSourceFields;
/** One request a source's ingest URL received (signature headers read "[redacted]"). */
export type SourceRequest = Static<typeof SourceRequestSchema>;
export type SourceOutcome = SourceRequest['outcome'];
/** The request log's filters; a null or empty value is left out, as in `PageQuery`. */
export type SourceRequestQuery = Fields<(typeof RequestLogQuery)['properties']>;

/** The sign-in answer (docs/api/authentication.md); the session answer is the same, less `expiresAt`. */
export type SignInAnswer = Static<typeof SignInAnswerSchema>;
export type SessionAnswer = Omit<SignInAnswer, 'expiresAt'> & { expiresAt?: string };
export type SetupAnswer = Static<typeof SetupAnswerSchema>;

/** A passkey of the signed-in user (docs/api/passkeys.md), and the password sign-in switch. */
export type Passkey = Static<typeof PasskeyRecord>;
export type PasswordSignInState = Static<typeof PasswordSignIn>;

/** The ways to sign in that this hubgate offers (docs/operators/sso.md): `sso` when single sign-on is on. */
export type AuthMethods = Static<typeof AuthMethodsSchema>;

/** A person of the tenant (docs/api/people.md); with the invitation link, shown once, when just invited. */
export type Person = Static<typeof CompanyUser>;
export type InvitedPerson = Static<typeof InvitedUser>;
export type Role = Person['role'];
/** What an invitation link is for: the e-mail address and the organization. */
export type Invitation = Static<typeof InvitationLookup>;

// The platform's shapes (docs/api/platform.md, docs/operators/web-ui.md): the server's own record types where
// its routes declare
// their schemas inline.
export type { ChannelKind, FiringAlert, Matcher, MatcherOp, RoutingDocument, Tenant, User };
export type Snapshot = MonitoringSnapshot;
/**
 * `GET /api/v1/platform/monitoring/history` (docs/operators/web-ui.md): one point per minute, oldest first.
 */
export type MonitoringHistory = Static<typeof HistorySchema>;
export type HistoryPoint = MonitoringHistory['points'][number];
/** What fires now. */
export type FiringAlerts = Static<typeof FiringAlertsSchema>;
export type Channel = ChannelRecord;
export type ChannelAttempt = NonNullable<Channel['lastAttempt']>;
/** A new WEBHOOK channel's signing secret is in the create answer only. */
export type CreatedChannel = Channel & { signingSecret?: string };
export type TestResult = ChannelSendResult;

/** An OAuth2 provider (docs/api/oauth.md); inline in src/oauth/provider-routes.ts. Never its client secret. */
export interface OAuthProvider {
  key: string;
  connectorKey: string;
  name: string;
  authorizationUrl: string | null;
  tokenUrl: string;
  apiBaseUrl: string;
  clientId: string;
  scopes: string[];
  grant: OAuthGrant;
  createdAt: string;
  updatedAt: string;
}
export type OAuthGrant = 'authorization_code' | 'client_credentials';
/** The create body (inline in src/oauth/provider-routes.ts): the record's fields and the write-only secret. */
export interface OAuthProviderBody {
  key: string;
  name: string;
  authorizationUrl?: string;
  tokenUrl: string;
  apiBaseUrl: string;
  clientId: string;
  clientSecret: string;
  scopes?: string[];
  grant?: OAuthGrant;
}
/** The PATCH body: omitted fields stay; `authorizationUrl: null` removes it; the key never changes. */
export type OAuthProviderPatch = Partial<Omit<OAuthProviderBody, 'key' | 'authorizationUrl'>> & {
  authorizationUrl?: string | null;
};

/**
 * One bucket of a tenant's usage (contract §24, docs/api/usage.md): an hour or a UTC day from `start`,
 * every bucket of the range, zeros included (inline in src/usage/routes.ts).
 */
export interface UsageBucket {
  start: string;
  eventsPublished: number;
  deliveries: { delivered: number; failed: number; skipped: number };
  attempts: number;
  proxyCalls: number;
  ingested: number;
}
export type UsageGranularity = 'hour' | 'day';
/** The usage routes' query: an ISO range (at most 400 days) and the bucket size. */
export interface UsageQuery {
  from: string;
  to: string;
  granularity: UsageGranularity;
}
/** The platform's usage: the same buckets, each of one tenant. */
export type TenantUsageBucket = UsageBucket & { tenantId: string };
/** A tenant's quotas (contract §24); null is no limit (`retentionDays` null: the hub's retention). */
export interface Quotas {
  eventsPerDay: number | null;
  connections: number | null;
  requestsPerMinute: number | null;
  retentionDays: number | null;
}
/** The quotas and how much of them is in use now (inline in src/quotas/routes.ts). */
export type QuotasAnswer = Quotas & { usage: { eventsToday: number; connections: number } };

// ---- The table ----

/**
 * A value that is there only for its type: the table's `body`, `query` and `answer` hold types, never data.
 */
const shape = <T>(): T => undefined as T;

/**
 * Who may call a route: the signed-in session (the default: a 401 means it ended), anyone
 * (`optional`: sign-in, setup, the session check; a 401 is an answer), or a platform key.
 */
export type Auth = 'session' | 'optional' | 'platform';

/**
 * The least access of a portal session (docs/api/portal.md) whose `ptl_` token may call a route, as the
 * server's rule declares it (`portal:` of src/access/rules.ts; test/ui/portal-routes.test.ts compares
 * the two). A route without it is never called by the portal page.
 */
export type PortalLevel = 'read' | 'operate' | 'manage';

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: `/api/v1/${string}`;
  auth?: Auth;
  portal?: PortalLevel;
  body?: unknown;
  query?: unknown;
  answer: unknown;
}

const CONNECTION = '/api/v1/integrations/connections/:id';
const SOURCE = '/api/v1/integrations/sources/:id';

export const routes = {
  auth: {
    session: {
      method: 'GET',
      path: '/api/v1/auth/session',
      auth: 'optional',
      answer: shape<SessionAnswer>(),
    },
    login: {
      method: 'POST',
      path: '/api/v1/auth/login',
      auth: 'optional',
      body: shape<Static<typeof LoginBody>>(),
      answer: shape<SignInAnswer>(),
    },
    logout: { method: 'POST', path: '/api/v1/auth/logout', answer: shape<void>() },
    methods: { method: 'GET', path: '/api/v1/auth/methods', auth: 'optional', answer: shape<AuthMethods>() },
    /** A page the browser opens (Kerberos is negotiated for navigations only), never fetched. */
    ssoNegotiate: {
      method: 'GET',
      path: '/api/v1/auth/sso/negotiate',
      auth: 'optional',
      query: shape<{ returnTo?: string }>(),
      answer: shape<never>(),
    },
  },
  setup: {
    status: {
      method: 'GET',
      path: '/api/v1/setup',
      auth: 'optional',
      answer: shape<Static<typeof SetupStatus>>(),
    },
    complete: {
      method: 'POST',
      path: '/api/v1/setup',
      auth: 'optional',
      body: shape<Static<typeof SetupBody>>(),
      answer: shape<SetupAnswer>(),
    },
  },
  passkeys: {
    list: {
      method: 'GET',
      path: '/api/v1/auth/passkeys',
      query: shape<PageQuery>(),
      answer: shape<Page<Passkey>>(),
    },
    registrationOptions: {
      method: 'POST',
      path: '/api/v1/auth/passkeys/registration/options',
      answer: shape<Static<typeof CreationOptions>>(),
    },
    registrationVerify: {
      method: 'POST',
      path: '/api/v1/auth/passkeys/registration/verify',
      body: shape<Static<typeof RegistrationVerifyBody>>(),
      answer: shape<Passkey>(),
    },
    remove: { method: 'DELETE', path: '/api/v1/auth/passkeys/:id', answer: shape<void>() },
    loginOptions: {
      method: 'POST',
      path: '/api/v1/auth/passkeys/login/options',
      auth: 'optional',
      answer: shape<Static<typeof RequestOptions>>(),
    },
    loginVerify: {
      method: 'POST',
      path: '/api/v1/auth/passkeys/login/verify',
      auth: 'optional',
      body: shape<Static<typeof LoginVerifyBody>>(),
      answer: shape<SignInAnswer>(),
    },
    passwordSignIn: {
      method: 'GET',
      path: '/api/v1/auth/password-sign-in',
      answer: shape<PasswordSignInState>(),
    },
    setPasswordSignIn: {
      method: 'PUT',
      path: '/api/v1/auth/password-sign-in',
      body: shape<PasswordSignInState>(),
      answer: shape<PasswordSignInState>(),
    },
  },
  hub: {
    connectors: {
      method: 'GET',
      path: '/api/v1/integration-hub/connectors',
      portal: 'read',
      answer: shape<Page<Connector>>(),
    },
    overview: { method: 'GET', path: '/api/v1/integration-hub/overview', answer: shape<Overview>() },
    readiness: {
      method: 'GET',
      path: '/api/v1/integration-hub/credential-readiness',
      answer: shape<Readiness>(),
    },
  },
  keys: {
    list: {
      method: 'GET',
      path: '/api/v1/company/api-keys',
      query: shape<PageQuery>(),
      answer: shape<Page<ApiKey>>(),
    },
    // inline in src/keys/routes.ts
    create: {
      method: 'POST',
      path: '/api/v1/company/api-keys',
      body: shape<{ name: string; scopes: string[]; expiresAt: string | undefined } & KeyRateLimit>(),
      answer: shape<ApiKeyWithSecret>(),
    },
    rotate: {
      method: 'POST',
      path: '/api/v1/company/api-keys/:id/rotate',
      body: shape<Static<typeof RotateKeyBody> & KeyRateLimit>(),
      answer: shape<ApiKeyWithSecret>(),
    },
    revoke: { method: 'DELETE', path: '/api/v1/company/api-keys/:id', answer: shape<void>() },
    allowedScopes: {
      method: 'GET',
      path: '/api/v1/company/api-keys/allowed-scopes',
      answer: shape<AllowedScopesAnswer>(),
    },
  },
  // MCP clients signing in with OAuth (docs/api/mcp.md): the consent page's two calls, and the
  // grants on the API keys page.
  mcp: {
    consent: {
      method: 'GET',
      path: '/api/v1/oauth/consent/:request',
      answer: shape<ConsentView>(),
    },
    decide: {
      method: 'POST',
      path: '/api/v1/oauth/consent',
      body: shape<Static<typeof ConsentBody>>(),
      answer: shape<Static<typeof ConsentDecision>>(),
    },
    grants: {
      method: 'GET',
      path: '/api/v1/company/oauth-grants',
      answer: shape<Static<typeof McpGrantList>>(),
    },
    revokeGrant: { method: 'DELETE', path: '/api/v1/company/oauth-grants/:id', answer: shape<void>() },
  },
  people: {
    list: {
      method: 'GET',
      path: '/api/v1/company/users',
      query: shape<PageQuery>(),
      answer: shape<Static<typeof CompanyUserList>>(),
    },
    invite: {
      method: 'POST',
      path: '/api/v1/company/users',
      body: shape<Static<typeof InviteUserBody>>(),
      answer: shape<InvitedPerson>(),
    },
    /** A new link for someone still invited; the old one stops working. */
    newInvitation: {
      method: 'POST',
      path: '/api/v1/company/users/:id/invitation',
      answer: shape<InvitedPerson>(),
    },
    changeRole: {
      method: 'PATCH',
      path: '/api/v1/company/users/:id',
      body: shape<Static<typeof ChangeRoleBody>>(),
      answer: shape<Person>(),
    },
    remove: { method: 'DELETE', path: '/api/v1/company/users/:id', answer: shape<void>() },
  },
  portalSettings: {
    get: {
      method: 'GET',
      path: '/api/v1/company/portal-settings',
      answer: shape<PortalSettingsRecord>(),
    },
    // The settings whole: every field, null for a branding field left unset.
    replace: {
      method: 'PUT',
      path: '/api/v1/company/portal-settings',
      body: shape<PortalSettingsRecord>(),
      answer: shape<PortalSettingsRecord>(),
    },
  },
  // The portal page's own (docs/api/portal.md): the code travels in the body only, the token as a
  // bearer header (api.ts, `usePortalToken`), never in a URL the server sees.
  portal: {
    exchange: {
      method: 'POST',
      path: '/api/v1/portal/exchange',
      auth: 'optional',
      body: shape<{ code: string }>(),
      answer: shape<PortalExchangeAnswer>(),
    },
    session: {
      method: 'GET',
      path: '/api/v1/portal/session',
      portal: 'read',
      answer: shape<PortalSessionView>(),
    },
  },
  // The token travels in bodies only, never in a URL the server sees.
  invitations: {
    lookup: {
      method: 'POST',
      path: '/api/v1/invitations/lookup',
      auth: 'optional',
      body: shape<Static<typeof InvitationLookupBody>>(),
      answer: shape<Invitation>(),
    },
    accept: {
      method: 'POST',
      path: '/api/v1/invitations/accept',
      auth: 'optional',
      body: shape<Static<typeof InvitationAcceptBody>>(),
      answer: shape<SignInAnswer>(),
    },
  },
  // The connect page's two calls (docs/api/connect-links.md): no credential, the link's code in the
  // body only; a 401 is a used or wrong link, never a session that ended.
  connect: {
    session: {
      method: 'POST',
      path: '/api/v1/connect/session',
      auth: 'optional',
      body: shape<{ code: string }>(),
      answer: shape<ConnectView>(),
    },
    complete: {
      method: 'POST',
      path: '/api/v1/connect/complete',
      auth: 'optional',
      body: shape<ConnectCompletion>(),
      answer: shape<ConnectCompleted>(),
    },
  },
  audit: {
    list: {
      method: 'GET',
      path: '/api/v1/company/audit-log',
      query: shape<PageQuery>(),
      answer: shape<Page<AuditEntryRecord>>(),
    },
  },
  connections: {
    list: {
      method: 'GET',
      path: '/api/v1/integrations/connections',
      portal: 'read',
      query: shape<PageQuery>(),
      answer: shape<Page<Connection>>(),
    },
    // The body is the chosen connector's fields (one schema per connector, built from the catalog).
    create: {
      method: 'POST',
      path: '/api/v1/integrations/connections',
      portal: 'manage',
      body: shape<{ connectorKey: string; displayName: string } & Record<string, unknown>>(),
      answer: shape<Connection>(),
    },
    get: { method: 'GET', path: CONNECTION, portal: 'read', answer: shape<Connection>() },
    // displayName and the connector's fields, each optional (checked against the connector at run time)
    edit: {
      method: 'PATCH',
      path: CONNECTION,
      portal: 'operate',
      body: shape<Record<string, unknown>>(),
      answer: shape<Connection>(),
    },
    revoke: { method: 'POST', path: `${CONNECTION}/revoke`, portal: 'manage', answer: shape<Connection>() },
    bind: {
      method: 'PUT',
      path: `${CONNECTION}/credentials`,
      portal: 'manage',
      body: shape<Record<string, string>>(),
      answer: shape<BindAnswer>(),
    },
    pause: { method: 'POST', path: `${CONNECTION}/pause`, portal: 'operate', answer: shape<Connection>() },
    filterTest: {
      method: 'POST',
      path: '/api/v1/integrations/filter-test',
      body: shape<Static<typeof FilterTestBody>>(),
      answer: shape<Static<typeof FilterTestAnswer>>(),
    },
    // inline in src/oauth/routes.ts: sessions only (integrations:ADMIN)
    authorize: {
      method: 'POST',
      path: `${CONNECTION}/authorize`,
      portal: 'manage',
      answer: shape<{ authorizationUrl: string }>(),
    },
    /** Not called by the UI: named on an OAuth2 connection's page, where its API is called through. */
    proxy: { method: 'GET', path: `${CONNECTION}/proxy/`, answer: shape<never>() },
    resume: {
      method: 'POST',
      path: `${CONNECTION}/resume`,
      portal: 'operate',
      body: shape<Static<typeof ResumeBody> | undefined>(),
      answer: shape<ResumeAnswer>(),
    },
  },
  deliveries: {
    /** Not called by the UI: named on the empty event log, where events come from. */
    publish: { method: 'POST', path: '/api/v1/integrations/events', answer: shape<never>() },
    log: {
      method: 'GET',
      path: `${CONNECTION}/events`,
      portal: 'read',
      query: shape<LogQuery>(),
      answer: shape<Page<Delivery>>(),
    },
    get: {
      method: 'GET',
      path: `${CONNECTION}/events/:deliveryId`,
      portal: 'read',
      answer: shape<DeliveryDetail>(),
    },
    filtered: {
      method: 'GET',
      path: `${CONNECTION}/filtered-events`,
      query: shape<PageQuery>(),
      answer: shape<FilteredEvents>(),
    },
    retry: {
      method: 'POST',
      path: `${CONNECTION}/events/:deliveryId/retry`,
      portal: 'operate',
      answer: shape<Static<typeof RetryAnswer>>(),
    },
    recover: {
      method: 'POST',
      path: `${CONNECTION}/recover`,
      portal: 'operate',
      body: shape<RecoverBody>(),
      answer: shape<Static<typeof RecoverAnswer>>(),
    },
    test: {
      method: 'POST',
      path: `${CONNECTION}/test`,
      portal: 'operate',
      body: shape<Static<typeof TestEventBody>>(),
      answer: shape<Static<typeof TestEventAnswer>>(),
    },
  },
  // Incoming webhooks (docs/api/sources.md). The ingest URL itself (`/ingest/:sourceId`) is the
  // provider's, never called by the UI: each source's answer names it (`ingestUrl`).
  sources: {
    list: {
      method: 'GET',
      path: '/api/v1/integrations/sources',
      query: shape<PageQuery>(),
      answer: shape<Page<Source>>(),
    },
    create: {
      method: 'POST',
      path: '/api/v1/integrations/sources',
      body: shape<CreateSourceBody>(),
      answer: shape<SourceWithSecretAnswer>(),
    },
    get: { method: 'GET', path: SOURCE, answer: shape<Source>() },
    edit: {
      method: 'PATCH',
      path: SOURCE,
      body: shape<Static<typeof PatchSourceBodySchema> & HmacSourceFields>(),
      answer: shape<Source>(),
    },
    remove: { method: 'DELETE', path: SOURCE, answer: shape<void>() },
    rotateSecret: {
      method: 'POST',
      path: `${SOURCE}/rotate-secret`,
      body: shape<Static<typeof RotateSourceSecretBody>>(),
      answer: shape<SourceWithSecretAnswer>(),
    },
    requests: {
      method: 'GET',
      path: `${SOURCE}/requests`,
      query: shape<SourceRequestQuery>(),
      answer: shape<Page<SourceRequest>>(),
    },
  },
  usage: {
    // `Accept: text/csv` gives the same as CSV (apiText)
    tenant: {
      method: 'GET',
      path: '/api/v1/integrations/usage',
      query: shape<UsageQuery>(),
      answer: shape<{ data: UsageBucket[] }>(),
    },
  },
  eventTypes: {
    list: {
      method: 'GET',
      path: '/api/v1/integrations/event-types',
      portal: 'read',
      query: shape<PageQuery>(),
      answer: shape<Page<EventType>>(),
    },
    create: {
      method: 'POST',
      path: '/api/v1/integrations/event-types',
      body: shape<Static<typeof CreateEventTypeBody>>(),
      answer: shape<EventType>(),
    },
    edit: {
      method: 'PATCH',
      path: '/api/v1/integrations/event-types/:name',
      body: shape<Static<typeof PatchEventTypeBody>>(),
      answer: shape<EventType>(),
    },
    remove: { method: 'DELETE', path: '/api/v1/integrations/event-types/:name', answer: shape<void>() },
  },
  platform: {
    monitoring: {
      method: 'GET',
      path: '/api/v1/platform/monitoring',
      auth: 'platform',
      answer: shape<Snapshot>(),
    },
    history: {
      method: 'GET',
      path: '/api/v1/platform/monitoring/history',
      auth: 'platform',
      query: shape<{ minutes?: number }>(),
      answer: shape<MonitoringHistory>(),
    },
    alerts: {
      method: 'GET',
      path: '/api/v1/platform/alerting/alerts',
      auth: 'platform',
      answer: shape<FiringAlerts>(),
    },
    tenants: {
      method: 'GET',
      path: '/api/v1/platform/tenants',
      auth: 'platform',
      query: shape<PageQuery>(),
      answer: shape<Page<Tenant>>(),
    },
    // inline in src/tenants/routes.ts
    createTenant: {
      method: 'POST',
      path: '/api/v1/platform/tenants',
      auth: 'platform',
      body: shape<{ name: string; entitlements?: string[] }>(),
      answer: shape<Tenant>(),
    },
    // inline in src/tenants/routes.ts
    setEntitlements: {
      method: 'PUT',
      path: '/api/v1/platform/tenants/:id/entitlements',
      auth: 'platform',
      body: shape<{ entitlements: string[] }>(),
      answer: shape<Tenant>(),
    },
    tenant: {
      method: 'GET',
      path: '/api/v1/platform/tenants/:id',
      auth: 'platform',
      answer: shape<Tenant>(),
    },
    quotas: {
      method: 'GET',
      path: '/api/v1/platform/tenants/:id/quotas',
      auth: 'platform',
      answer: shape<QuotasAnswer>(),
    },
    setQuotas: {
      method: 'PUT',
      path: '/api/v1/platform/tenants/:id/quotas',
      auth: 'platform',
      body: shape<Quotas>(),
      answer: shape<QuotasAnswer>(),
    },
    usage: {
      method: 'GET',
      path: '/api/v1/platform/usage',
      auth: 'platform',
      query: shape<UsageQuery & { tenantId?: string }>(),
      answer: shape<{ data: TenantUsageBucket[] }>(),
    },
    addUser: {
      method: 'POST',
      path: '/api/v1/platform/tenants/:id/users',
      auth: 'platform',
      body: shape<Static<typeof AddUserBody>>(),
      answer: shape<User>(),
    },
    channels: {
      method: 'GET',
      path: '/api/v1/platform/alerting/channels',
      auth: 'platform',
      query: shape<PageQuery>(),
      answer: shape<Page<Channel>>(),
    },
    // `config` holds the kind's fields
    createChannel: {
      method: 'POST',
      path: '/api/v1/platform/alerting/channels',
      auth: 'platform',
      body: shape<Static<typeof CreateChannelBody>>(),
      answer: shape<CreatedChannel>(),
    },
    // `null` in `config` removes an optional field
    editChannel: {
      method: 'PATCH',
      path: '/api/v1/platform/alerting/channels/:id',
      auth: 'platform',
      body: shape<Static<typeof EditChannelBody>>(),
      answer: shape<Channel>(),
    },
    deleteChannel: {
      method: 'DELETE',
      path: '/api/v1/platform/alerting/channels/:id',
      auth: 'platform',
      answer: shape<void>(),
    },
    testChannel: {
      method: 'POST',
      path: '/api/v1/platform/alerting/channels/:id/test',
      auth: 'platform',
      body: shape<Record<string, never>>(),
      answer: shape<TestResult>(),
    },
    // inline in src/oauth/provider-routes.ts
    oauthProviders: {
      method: 'GET',
      path: '/api/v1/platform/oauth-providers',
      auth: 'platform',
      query: shape<PageQuery>(),
      answer: shape<Page<OAuthProvider>>(),
    },
    createOAuthProvider: {
      method: 'POST',
      path: '/api/v1/platform/oauth-providers',
      auth: 'platform',
      body: shape<OAuthProviderBody>(),
      answer: shape<OAuthProvider>(),
    },
    editOAuthProvider: {
      method: 'PATCH',
      path: '/api/v1/platform/oauth-providers/:key',
      auth: 'platform',
      body: shape<OAuthProviderPatch>(),
      answer: shape<OAuthProvider>(),
    },
    deleteOAuthProvider: {
      method: 'DELETE',
      path: '/api/v1/platform/oauth-providers/:key',
      auth: 'platform',
      answer: shape<void>(),
    },
    /**
     * Not called by the UI (src/oauth/routes.ts): where a provider sends people back after they allow
     * access, shown in the provider dialog for the operator to register at the provider.
     */
    oauthCallback: { method: 'GET', path: '/api/v1/oauth/callback', answer: shape<never>() },
    rules: {
      method: 'GET',
      path: '/api/v1/platform/alerting/rules',
      auth: 'platform',
      answer: shape<RoutingDocument>(),
    },
    // Sent with `If-Match: "<revision>"`: a document changed since is a 409.
    replaceRules: {
      method: 'PUT',
      path: '/api/v1/platform/alerting/rules',
      auth: 'platform',
      body: shape<RoutingInput>(),
      answer: shape<RoutingDocument>(),
    },
  },
} as const satisfies Record<string, Record<string, RouteSpec>>;
