import { sql, type Kysely, type Selectable, type SqlBool, type Updateable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { AuthorizationStatus, ConnectionsTable, DB } from '../db/schema.js';
import { afterCursor, type Cursor } from '../http/pagination.js';

/** A connection's own row, as it is inserted. */
export type NewConnectionRow = Selectable<ConnectionsTable>;

/**
 * A connection as it is read: its row, and what its view shows of its OAuth2 authorization, null on
 * connectors without one. The authorization is oauth/'s table (`oauth_authorizations`, which oauth/
 * alone writes); every read of a connection here joins it, a read across folders stated in
 * docs/contributors/architecture.md (Tables and their owners).
 */
export type ConnectionRow = NewConnectionRow & {
  authorization_status: AuthorizationStatus | null;
  authorization_scopes: string[] | null;
  authorization_expires_at: Date | null;
};

const AUTHORIZATION_SHOWN = [
  'oauth_authorizations.status as authorization_status',
  'oauth_authorizations.scopes as authorization_scopes',
  'oauth_authorizations.expires_at as authorization_expires_at',
] as const;

/** to_char's pattern for Date.toISOString's form; both cut (never round) to milliseconds. */
const ISO_FORMAT = sql.lit('YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');

/**
 * The connections the scope sees of its tenant: all of them, or those a portal session names
 * (access/scope.ts). Every read and change here takes it, so a connection outside a portal
 * session is not there for it, as another tenant's is not.
 */
const seen = (scope: TenantScope) =>
  scope.connections
    ? sql<SqlBool>`connections.id = any(${[...scope.connections.ids]}::text[])`
    : sql<SqlBool>`true`;

// Every query here starts from the scope's tenant: a connection of another tenant is simply not there.
const ofTenant = (db: Kysely<DB>, scope: TenantScope) =>
  db.selectFrom('connections').where('tenant_id', '=', scope.tenantId).where(seen(scope));

export async function insertConnection(
  db: Kysely<DB>,
  scope: TenantScope,
  row: NewConnectionRow,
): Promise<void> {
  await db
    .insertInto('connections')
    .values({ ...row, tenant_id: scope.tenantId, config: JSON.stringify(row.config) })
    .execute();
}

/**
 * The connection, read; locked for update or share first when asked. The lock is taken by a
 * statement of its own and the row read by the next: on PostgreSQL a statement that waited for a
 * row's lock reads that row as its holder left it, but a joined table as it was when the statement
 * began, so the authorization (another table, changed under this lock by oauth/) would be the old one.
 */
export async function findConnectionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  options: { forUpdate?: boolean; forShare?: boolean } = {},
): Promise<ConnectionRow | undefined> {
  if (options.forUpdate || options.forShare) {
    const lock = ofTenant(db, scope).select('id').where('id', '=', id);
    const locked = await (options.forUpdate ? lock.forUpdate() : lock.forShare()).executeTakeFirst();
    if (!locked) return undefined;
  }
  return db
    .selectFrom('connections')
    .leftJoin('oauth_authorizations', 'oauth_authorizations.connection_id', 'connections.id')
    .selectAll('connections')
    .select(AUTHORIZATION_SHOWN)
    .where('connections.tenant_id', '=', scope.tenantId)
    .where(seen(scope))
    .where('connections.id', '=', id)
    .executeTakeFirst();
}

/**
 * A connection as a list reads it: what the API shows, with its timestamps already written as the
 * API writes them (RFC 3339 UTC with milliseconds, exactly what Date.toISOString makes of the value
 * the driver would have read), and whether credentials are bound.
 */
export type ListedConnectionRow = Pick<
  ConnectionRow,
  | 'id'
  | 'connector_key'
  | 'display_name'
  | 'status'
  | 'config'
  | 'paused_reason'
  | 'authorization_status'
  | 'authorization_scopes'
> & {
  created_at: string;
  revoked_at: string | null;
  paused_at: string | null;
  credentials_bound: boolean;
  authorization_expires_at: string | null;
};

/**
 * One page of the scope's connections, newest first (`limit + 1` rows, as newestFirstPage reads).
 * The API's busiest list, written out rather than built (building and compiling it cost more than
 * running it): it names the columns the answer shows, so the sealed credentials never leave the
 * database for it and the statement can stay prepared, and PostgreSQL formats the timestamps, which
 * costs the process more than anything else per row when it parses them and writes them back.
 * The sort and the cursor name the table's columns: `created_at` alone is the text column here.
 */
export async function listConnectionRows(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: Cursor | undefined,
): Promise<ListedConnectionRow[]> {
  const afterPosition = after
    ? sql`and ${afterCursor('connections.created_at', 'connections.id', after)}`
    : sql``;
  const { rows } = await sql<ListedConnectionRow>`
    select id, connector_key, display_name, connections.status, config, paused_reason,
      to_char(created_at at time zone 'UTC', ${ISO_FORMAT}) as created_at,
      to_char(revoked_at at time zone 'UTC', ${ISO_FORMAT}) as revoked_at,
      to_char(paused_at at time zone 'UTC', ${ISO_FORMAT}) as paused_at,
      credentials_sealed is not null as credentials_bound,
      a.status as authorization_status, a.scopes as authorization_scopes,
      to_char(a.expires_at at time zone 'UTC', ${ISO_FORMAT}) as authorization_expires_at
    from connections
    left join oauth_authorizations a on a.connection_id = connections.id
    where connections.tenant_id = ${scope.tenantId} and ${seen(scope)} ${afterPosition}
    order by connections.created_at desc, connections.id desc
    limit ${limit + 1}`.execute(db);
  return rows;
}

/** The changed row as findConnectionRow reads it, in the statement that changes it. */
function changedRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  changes: Updateable<ConnectionsTable>,
): Promise<ConnectionRow | undefined> {
  return db
    .with('changed', (cte) =>
      cte
        .updateTable('connections')
        .set(changes)
        .where('tenant_id', '=', scope.tenantId)
        .where(seen(scope))
        .where('id', '=', id)
        .returningAll(),
    )
    .selectFrom('changed')
    .leftJoin('oauth_authorizations', 'oauth_authorizations.connection_id', 'changed.id')
    .selectAll('changed')
    .select(AUTHORIZATION_SHOWN)
    .executeTakeFirst();
}

/** Any change but the keys and the config (JSON, written by updateConnectionConfig); answers the row. */
export function updateConnectionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  changes: Omit<Updateable<ConnectionsTable>, 'id' | 'tenant_id' | 'config'>,
): Promise<ConnectionRow | undefined> {
  return changedRow(db, scope, id, changes);
}

/** An edit: the display name and the config (JSON), and the credentials when they are unbound. */
export async function updateConnectionConfig(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  changes: Partial<
    Pick<
      ConnectionRow,
      'display_name' | 'credentials_sealed' | 'previous_credentials_sealed' | 'previous_valid_until'
    >
  > & {
    config: Record<string, unknown>;
  },
): Promise<ConnectionRow | undefined> {
  return changedRow(db, scope, id, { ...changes, config: JSON.stringify(changes.config) });
}

/** Which of `ids` are connections the scope sees, in any state. */
export async function visibleConnectionIds(
  db: Kysely<DB>,
  scope: TenantScope,
  ids: readonly string[],
): Promise<Set<string>> {
  const rows = await ofTenant(db, scope)
    .select('id')
    .where(sql<SqlBool>`id = any(${[...ids]}::text[])`)
    .execute();
  return new Set(rows.map((r) => r.id));
}

/** How many connections the tenant has, in any state (active, paused or disabled). */
export async function countConnections(db: Kysely<DB>, scope: TenantScope): Promise<number> {
  const row = await ofTenant(db, scope)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface ConnectorCounts {
  active: number;
  disabled: number;
  awaitingCredentials: number;
}

/** Per connector key: active, disabled, and active without credentials (zeros for a connector unused). */
export async function countConnectionsByConnector(
  db: Kysely<DB>,
  scope: TenantScope,
): Promise<(connectorKey: string) => ConnectorCounts> {
  const rows = await ofTenant(db, scope)
    .select((eb) => [
      'connector_key',
      eb.fn.countAll<string>().filterWhere('status', '=', 'active').as('active'),
      eb.fn.countAll<string>().filterWhere('status', '=', 'disabled').as('disabled'),
      eb.fn
        .countAll<string>()
        .filterWhere((w) => w.and([w('status', '=', 'active'), w('credentials_sealed', 'is', null)]))
        .as('awaiting'),
    ])
    .groupBy('connector_key')
    .execute();
  const counts = new Map(
    rows.map((r) => [
      r.connector_key,
      { active: Number(r.active), disabled: Number(r.disabled), awaitingCredentials: Number(r.awaiting) },
    ]),
  );
  return (connectorKey) => counts.get(connectorKey) ?? { active: 0, disabled: 0, awaitingCredentials: 0 };
}

/** What one batch of outcomes does to a connection's run of failures, in the batch's order. */
export interface StreakChange {
  connectionId: string;
  /** A delivery succeeded: the run starts again from the failures after it. */
  reset: boolean;
  failures: number;
  firstFailedAt: Date | null;
  /** A 410 Gone answer among the failures. */
  gone: boolean;
}

/** A connection's run after a batch, as the update returns it. */
export interface StreakRow {
  id: string;
  tenant_id: string;
  status: string;
  failure_streak: number;
  failure_streak_since: Date | string | null;
  gone: boolean;
}

/**
 * Applies the changes in one statement (connections only: no delivery row is locked here).
 * Tenant-agnostic by nature, as the worker's batch of outcomes is: each row answers its tenant.
 */
export async function updateStreakRows(
  db: Kysely<DB>,
  changes: readonly StreakChange[],
): Promise<StreakRow[]> {
  if (changes.length === 0) return [];
  const of = <R>(pick: (c: StreakChange) => R) => changes.map(pick);
  const result = await sql<StreakRow>`
    update connections c set
      failure_streak = case when v.reset then v.failures else c.failure_streak + v.failures end,
      failure_streak_since = case when v.failures = 0 then null
        when v.reset or c.failure_streak = 0 then v.first_failed_at else c.failure_streak_since end
    from unnest(${of((c) => c.connectionId)}::text[], ${of((c) => c.reset)}::boolean[],
      ${of((c) => c.failures)}::int[], ${of((c) => c.firstFailedAt)}::timestamptz[], ${of((c) => c.gone)}::boolean[])
      as v(id, reset, failures, first_failed_at, gone)
    where c.id = v.id
    returning c.id, c.tenant_id, c.status, c.failure_streak, c.failure_streak_since, v.gone`.execute(db);
  return result.rows;
}
