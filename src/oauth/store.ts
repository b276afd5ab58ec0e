import { sql, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { ConnectionRow } from '../connections/connections.js';
import type { DB, OAuthAuthorizationsTable, OAuthProvidersTable, OAuthStatesTable } from '../db/schema.js';

export type ProviderRow = Selectable<OAuthProvidersTable>;
export type StateRow = Selectable<OAuthStatesTable>;
export type AuthorizationRow = Selectable<OAuthAuthorizationsTable>;

// Providers are the platform's, for every tenant: no tenant scope. States are a tenant's.

export async function insertProvider(db: Kysely<DB>, row: ProviderRow): Promise<void> {
  await db
    .insertInto('oauth_providers')
    .values({ ...row, scopes: JSON.stringify(row.scopes) })
    .execute();
}

export function findProvider(
  db: Kysely<DB>,
  key: string,
  options: { forUpdate?: boolean; forShare?: boolean } = {},
): Promise<ProviderRow | undefined> {
  const query = db.selectFrom('oauth_providers').selectAll().where('key', '=', key);
  if (options.forUpdate) return query.forUpdate().executeTakeFirst();
  return (options.forShare ? query.forShare() : query).executeTakeFirst();
}

/**
 * The proxy's one read per call: the tenant's connection with, when it is an OAuth2 connection whose
 * provider exists, that provider's key and API base URL (read each time, so a changed `apiBaseUrl`
 * applies to the next call).
 */
export async function findProxiedConnection(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  prefix: string,
): Promise<
  (ConnectionRow & { provider_key: string | null; provider_api_base_url: string | null }) | undefined
> {
  const result = await sql<
    ConnectionRow & { provider_key: string | null; provider_api_base_url: string | null }
  >`
    select c.*, a.status as authorization_status, a.scopes as authorization_scopes,
      a.expires_at as authorization_expires_at,
      p.key as provider_key, p.api_base_url as provider_api_base_url
    from connections c
    left join oauth_authorizations a on a.connection_id = c.id
    left join oauth_providers p
      on starts_with(c.connector_key, ${prefix}) and p.key = substr(c.connector_key, ${prefix.length + 1})
    where c.tenant_id = ${scope.tenantId} and c.id = ${id}`.execute(db);
  return result.rows[0];
}

// A connection's authorization (docs/api/oauth.md): written here alone, in the transaction that
// inserts the connection or in one that holds the connection's row locked for update
// (authorization.ts, tokens.ts), but for releaseRefreshLease, which compares the lease instead.
// connections/store.ts reads it for the connection's view (decision 0070).

export async function insertAuthorization(
  db: Kysely<DB>,
  scope: TenantScope,
  row: AuthorizationRow,
): Promise<void> {
  await db
    .insertInto('oauth_authorizations')
    .values({ ...row, tenant_id: scope.tenantId, scopes: JSON.stringify(row.scopes) })
    .execute();
}

/** The connection's authorization, or undefined when its connector has none. */
export function findAuthorization(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
): Promise<AuthorizationRow | undefined> {
  return db
    .selectFrom('oauth_authorizations')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('connection_id', '=', connectionId)
    .executeTakeFirst();
}

/** Any change but the keys; answers whether the connection has an authorization to change. */
export async function updateAuthorization(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  changes: Omit<Updateable<OAuthAuthorizationsTable>, 'connection_id' | 'tenant_id'>,
): Promise<boolean> {
  const changed = await db
    .updateTable('oauth_authorizations')
    .set(changes)
    .where('tenant_id', '=', scope.tenantId)
    .where('connection_id', '=', connectionId)
    .returning('connection_id')
    .executeTakeFirst();
  return changed !== undefined;
}

/** Gives a refresh lease back if it is still this one: compared by its exact time, no lock needed. */
export async function releaseRefreshLease(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  lease: Date,
): Promise<void> {
  await db
    .updateTable('oauth_authorizations')
    .set({ refreshing_until: null })
    .where('tenant_id', '=', scope.tenantId)
    .where('connection_id', '=', connectionId)
    .where('refreshing_until', '=', lease)
    .execute();
}

export function allProviderRows(db: Kysely<DB>): Promise<ProviderRow[]> {
  return db.selectFrom('oauth_providers').selectAll().orderBy('key').execute();
}

/** One page, newest first (`limit + 1` rows), after the position (createdAt, key) when given. */
export function listProviderRows(
  db: Kysely<DB>,
  limit: number,
  after: { createdAt: Date; key: string } | undefined,
): Promise<ProviderRow[]> {
  let query = db.selectFrom('oauth_providers').selectAll();
  if (after) query = query.where(sql<boolean>`(created_at, key) < (${after.createdAt}, ${after.key})`);
  return query
    .orderBy('created_at', 'desc')
    .orderBy('key', 'desc')
    .limit(limit + 1)
    .execute();
}

export function updateProvider(
  db: Kysely<DB>,
  key: string,
  changes: Updateable<OAuthProvidersTable>,
): Promise<ProviderRow | undefined> {
  return db
    .updateTable('oauth_providers')
    .set(changes)
    .where('key', '=', key)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteProviderRow(db: Kysely<DB>, key: string): Promise<void> {
  await db.deleteFrom('oauth_providers').where('key', '=', key).execute();
}

/**
 * Connections of any tenant that use the connector and are not revoked: a provider in use cannot be
 * deleted. A platform question across tenants, asked of the connections table by its connector key.
 */
export async function countConnectionsUsing(db: Kysely<DB>, connectorKey: string): Promise<number> {
  const row = await db
    .selectFrom('connections')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('connector_key', '=', connectorKey)
    .where('status', '!=', 'disabled')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function insertState(db: Kysely<DB>, scope: TenantScope, row: StateRow): Promise<void> {
  await db
    .insertInto('oauth_states')
    .values({ ...row, tenant_id: scope.tenantId })
    .execute();
}

/**
 * The state whose keyed hash this is, of whichever tenant: the callback comes with nothing but the
 * state, which names its tenant and owner as a code names its link. Read, not taken.
 */
export function findStateByHash(db: Kysely<DB>, stateHash: string): Promise<StateRow | undefined> {
  return db.selectFrom('oauth_states').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
}

/**
 * Takes a state once: the row is deleted as it is read, so a second callback with the same state
 * finds nothing, whichever process it reaches.
 */
export function takeState(
  db: Kysely<DB>,
  scope: TenantScope,
  stateHash: string,
): Promise<StateRow | undefined> {
  return db
    .deleteFrom('oauth_states')
    .where('tenant_id', '=', scope.tenantId)
    .where('state_hash', '=', stateHash)
    .returningAll()
    .executeTakeFirst();
}

/** States nobody came back with: past their expiry they are only clutter. */
export async function deleteExpiredStates(db: Kysely<DB>, now: Date): Promise<void> {
  await db.deleteFrom('oauth_states').where('expires_at', '<', now).execute();
}
