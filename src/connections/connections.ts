import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { withCreatedConnection, type TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { isIdOf, newId } from '../crypto/ids.js';
import type { AuthorizationStatus, ConnectionStatus, DB, PausedReason } from '../db/schema.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { isoOrNull } from '../http/schemas.js';
import { bodyValidator } from '../http/validation.js';
import { checkBrokerUrl, checkUrl, type UrlVerdict } from '../outbound/ssrf-policy.js';
import type { ConnectorCatalog } from './catalog.js';
import type { ConnectorDefinition } from './connector.js';
import { checkFilter } from './filter.js';
import {
  findConnectionRow,
  insertConnection,
  listConnectionRows,
  updateConnectionRow,
  type ConnectionRow,
  type ListedConnectionRow,
  type NewConnectionRow,
} from './store.js';

// What other folders read of connections with no rule of this domain between: the row's type
// (delivery's operations check its status), the counts of the hub overview, and which IDs a portal
// session may name (portal/). Never the store.
export type { ConnectionRow };
export {
  countConnections,
  countConnectionsByConnector,
  visibleConnectionIds,
  type ConnectorCounts,
} from './store.js';

/** A connection as the API shows it (docs/api/connections.md): safe metadata only, never a secret. */
export interface Connection {
  id: string;
  connectorKey: string;
  displayName: string;
  status: ConnectionStatus;
  config: Record<string, unknown>;
  credentialsBound: boolean;
  deliveryEnabled: boolean;
  createdAt: string;
  revokedAt: string | null;
  pausedAt: string | null;
  pausedReason: PausedReason | null;
  /** OAuth2 connectors only (docs/api/oauth.md); never a token. */
  authorization: Authorization | null;
}

export interface Authorization {
  status: AuthorizationStatus;
  scopes: string[];
  /** When the current access token expires. */
  expiresAt: string | null;
}

export function toConnection(
  row: Omit<ConnectionRow, 'failure_streak' | 'failure_streak_since'> &
    Partial<Pick<ConnectionRow, 'failure_streak'>>,
): Connection {
  return shown(row, row.credentials_sealed !== null, new Date(row.created_at).toISOString(), {
    revokedAt: isoOrNull(row.revoked_at),
    pausedAt: isoOrNull(row.paused_at),
    authorizationExpiresAt: isoOrNull(row.authorization_expires_at),
  });
}

/** A listed row as the API shows it: the list's query wrote its timestamps already. */
const toListedConnection = (row: ListedConnectionRow): Connection =>
  shown(row, row.credentials_bound, row.created_at, {
    revokedAt: row.revoked_at,
    pausedAt: row.paused_at,
    authorizationExpiresAt: row.authorization_expires_at,
  });

function shown(
  row: Pick<
    ConnectionRow,
    | 'id'
    | 'connector_key'
    | 'display_name'
    | 'status'
    | 'config'
    | 'paused_reason'
    | 'authorization_status'
    | 'authorization_scopes'
  >,
  credentialsBound: boolean,
  createdAt: string,
  times: { revokedAt: string | null; pausedAt: string | null; authorizationExpiresAt: string | null },
): Connection {
  return {
    id: row.id,
    connectorKey: row.connector_key,
    displayName: row.display_name,
    status: row.status,
    config: row.config,
    credentialsBound,
    deliveryEnabled: row.status === 'active' && credentialsBound,
    createdAt,
    revokedAt: times.revokedAt,
    pausedAt: times.pausedAt,
    pausedReason: row.paused_reason,
    authorization: row.authorization_status && {
      status: row.authorization_status,
      scopes: row.authorization_scopes ?? [],
      expiresAt: times.authorizationExpiresAt,
    },
  };
}

/** A delivery claimed by a worker when its connection was paused or revoked: the drain waits for it. */
export interface HeldClaim {
  id: string;
  createdAt: Date | string;
}

/**
 * What a connection's state changes do to its deliveries. Deliveries sit above connections, so
 * buildApp hands these in (delivery/control.ts) rather than connections importing them. `close`,
 * `replaySkipped` run in the caller's transaction, with the connection's row locked for update.
 */
export interface DeliveryControl {
  /** Open deliveries become `cancelled` (revoke) or `skipped` (pause); returns those in flight. */
  close(
    trx: Kysely<DB>,
    scope: TenantScope,
    connectionId: string,
    at: Date,
    status: 'cancelled' | 'skipped',
  ): Promise<{ closed: number; inFlight: HeldClaim[] }>;
  /** Waits (after the commit) until the attempts in flight have ended. */
  drain(db: Kysely<DB>, inFlight: readonly HeldClaim[]): Promise<void>;
  /** Resume with replay: every skipped delivery back to pending, oldest first. */
  replaySkipped(trx: Kysely<DB>, scope: TenantScope, connectionId: string, at: Date): Promise<number>;
}

export interface ConnectionDeps {
  ctx: AppContext;
  catalog: ConnectorCatalog;
}

/**
 * Makes a connection created through a narrowed scope one of its portal session's connections
 * (docs/api/portal.md), in the create's transaction. Portal sessions sit above connections, so the
 * composition root hands it in (src/services.ts), as it hands in DeliveryControl.
 */
export type JoinPortalSession = (trx: Kysely<DB>, scope: TenantScope, connectionId: string) => Promise<void>;

/** Every URL field a connector declares passes the SSRF policy (docs/api/connections.md) before anything is stored. */
export function checkUrlFields(deps: ConnectionDeps, definition: ConnectorDefinition, values: object): void {
  const policy = deps.ctx.config.delivery;
  for (const field of definition.urlFields) {
    // A dotted name reaches into an object field (`oauth2ClientCredentials.tokenUrl`).
    const value = field
      .split('.')
      .reduce<unknown>((at, name) => (at as Record<string, unknown> | undefined)?.[name], values);
    if (typeof value !== 'string') continue;
    refuseUnless(field, checkUrl(value, policy));
  }
  for (const { field, plaintextSchemes } of definition.brokerUrlFields ?? []) {
    const value = (values as Record<string, unknown>)[field];
    if (typeof value === 'string') refuseUnless(field, checkBrokerUrl(value, plaintextSchemes, policy));
  }
}

function refuseUnless(field: string, verdict: UrlVerdict): void {
  if (verdict.allowed) return;
  throw new HttpProblem(verdict.code, `${field}: ${verdict.message}`, {
    errors: [{ path: field, message: verdict.message }],
  });
}

/** The scope's connection with this ID, or the 404 of any unknown, malformed or foreign ID. */
export async function connectionOr404(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  options: { forUpdate?: boolean; forShare?: boolean } = {},
): Promise<ConnectionRow> {
  const row = isIdOf('con', id) ? await findConnectionRow(db, scope, id, options) : undefined;
  if (!row) throw notFound('connection');
  return row;
}

const unknownConnector = (message: string) =>
  new HttpProblem('validation_failed', `connectorKey: ${message}`, {
    errors: [{ path: 'connectorKey', message }],
  });

export async function createConnection(
  deps: ConnectionDeps & { joinPortalSession: JoinPortalSession },
  scope: TenantScope,
  origin: AuditOrigin,
  body: { connectorKey: string; displayName: string } & Record<string, unknown>,
): Promise<Connection> {
  const { connectorKey, displayName, ...config } = body;
  const definition = await deps.catalog.current(connectorKey);
  if (!definition || !deps.catalog.isEnabled(connectorKey)) {
    // The body schema knows every connector; one switched off by the platform takes no new connections.
    // An `oauth2:` key the body's pattern takes may name no provider (docs/api/oauth.md).
    throw unknownConnector(definition ? 'is switched off on this hub' : 'is not a known connector');
  }
  checkUrlFields(deps, definition, config);
  checkFilter(config.filter);
  const id = newId('con');
  // Client credentials: the tokens first, so a connection that cannot get them is not stored.
  const initial = await definition.authorization?.bindOnCreate?.(id);
  const row: NewConnectionRow = {
    id,
    tenant_id: scope.tenantId,
    connector_key: connectorKey,
    display_name: displayName,
    status: 'active',
    config,
    credentials_sealed: initial
      ? deps.ctx.keyring.seal('connection-credentials', JSON.stringify(initial.credentials), id)
      : null,
    credentials_bound_at: initial ? origin.at : null,
    previous_credentials_sealed: null,
    previous_valid_until: null,
    created_at: origin.at,
    created_by: origin.actorId,
    revoked_at: null,
    paused_at: null,
    paused_reason: null,
    failure_streak: 0,
    failure_streak_since: null,
  };
  return deps.ctx.db.transaction().execute(async (trx) => {
    await deps.ctx.quotas.holdConnectionPlace(trx, scope.tenantId); // docs/api/quotas.md
    // The catalog may be a moment behind another process: the provider is checked (and held) here.
    if (definition.authorization && !(await definition.authorization.holdForInsert(trx))) {
      throw unknownConnector('is not a known connector');
    }
    await insertConnection(trx, scope, row);
    await definition.authorization?.insert(trx, scope, id, initial);
    await recordAudit(trx, origin, {
      action: 'connection.create',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: row.id,
      metadata: { connectorKey, displayName, config, ...(initial ? { authorized: true } : {}) },
    });
    // A portal session that names its connections gets this one too, and sees it from now on.
    if (scope.connections) await deps.joinPortalSession(trx, scope, id);
    // Read back for the answer: its authorization is what the connector stored.
    return toConnection(await connectionOr404(trx, withCreatedConnection(scope, id), id));
  });
}

export async function listConnections(
  deps: ConnectionDeps,
  scope: TenantScope,
  query: PageQuery,
): Promise<Page<Connection>> {
  return listPage(
    query,
    'con',
    (limit, after) => listConnectionRows(deps.ctx.db, scope, limit, after),
    (rows) => rows.map(toListedConnection),
    { keyring: deps.ctx.keyring, list: ['connections', scope.tenantId] },
  );
}

export async function getConnection(
  deps: ConnectionDeps,
  scope: TenantScope,
  id: string,
): Promise<Connection> {
  return toConnection(await connectionOr404(deps.ctx.db, scope, id));
}

const credentialValidators = new WeakMap<ConnectorDefinition, (value: unknown) => Record<string, string>>();

function credentialsValidator(definition: ConnectorDefinition) {
  let validate = credentialValidators.get(definition);
  if (!validate) {
    validate = bodyValidator<Record<string, string>>({
      ...definition.credentials,
      additionalProperties: false,
    });
    credentialValidators.set(definition, validate);
  }
  return validate;
}

/**
 * Binds (or re-binds) a connection's secrets, encrypted under a key bound to the connection. A
 * generated secret is returned here once; a replaced one stays valid for the connector's overlap.
 */
export async function bindCredentials(
  deps: ConnectionDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  id: string,
  body: Record<string, unknown>,
): Promise<{ connection: Connection; credentials: Record<string, string> }> {
  const { keyring } = deps.ctx;
  return deps.ctx.db.transaction().execute(async (trx) => {
    const row = await connectionOr404(trx, scope, id, { forUpdate: true });
    const definition = await deps.catalog.resolve(row.connector_key);
    if (row.status === 'disabled') {
      throw new HttpProblem('conflict', 'The connection is disabled; create a new one instead.');
    }
    if (!definition || !deps.catalog.isEnabled(row.connector_key)) {
      throw new HttpProblem('conflict', `The ${row.connector_key} connector is switched off on this hub.`);
    }
    const given = credentialsValidator(definition)(body);
    definition.checkCredentials?.(given);
    checkUrlFields(deps, definition, given);
    const generated: Record<string, string> = {};
    for (const [field, make] of Object.entries(definition.generated ?? {})) {
      if (given[field] === undefined) generated[field] = make();
    }
    const credentials = { ...given, ...generated };
    const keepPrevious = definition.rebindOverlapSeconds > 0 && row.credentials_sealed !== null;
    const previousValidUntil = keepPrevious
      ? new Date(origin.at.getTime() + definition.rebindOverlapSeconds * 1000)
      : null;
    const updated = await updateConnectionRow(trx, scope, id, {
      credentials_sealed: keyring.seal('connection-credentials', JSON.stringify(credentials), id),
      credentials_bound_at: origin.at,
      previous_credentials_sealed: keepPrevious ? row.credentials_sealed : null,
      previous_valid_until: previousValidUntil,
    });
    if (!updated) throw notFound('connection');
    await recordAudit(trx, origin, {
      action: 'connection.credentials.bind',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: id,
      metadata: {
        connectorKey: row.connector_key,
        fields: Object.keys(credentials).sort(),
        generated: Object.keys(generated),
        previousValidUntil: isoOrNull(previousValidUntil),
      },
    });
    return { connection: toConnection(updated), credentials: generated };
  });
}

/**
 * Binds credentials issued to the connection rather than given by a person (an OAuth2 provider's
 * tokens, oauth/), in the caller's transaction with the row locked: sealed as every connection's
 * credentials are, replacing the bound ones at once (no overlap).
 */
export async function bindIssuedCredentials(
  trx: Kysely<DB>,
  scope: TenantScope,
  id: string,
  at: Date,
  credentials: Record<string, unknown>,
  keyring: AppContext['keyring'],
): Promise<void> {
  const updated = await updateConnectionRow(trx, scope, id, {
    credentials_sealed: keyring.seal('connection-credentials', JSON.stringify(credentials), id),
    credentials_bound_at: at,
  });
  if (!updated) throw notFound('connection');
}
