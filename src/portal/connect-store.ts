import type { Kysely, Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { ConnectSessionsTable, DB } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';

export type ConnectSessionRow = Selectable<ConnectSessionsTable>;
export type NewConnectSessionRow = Omit<ConnectSessionRow, 'tenant_id' | 'config'> & {
  config: Record<string, unknown>;
};

// Every function but the two that find or claim a link by its code takes the tenant's scope first
// and filters on it: the code is what names the link, and its holder has no credential.

export async function insertConnectSession(
  db: Kysely<DB>,
  scope: TenantScope,
  row: NewConnectSessionRow,
): Promise<void> {
  await db
    .insertInto('connect_sessions')
    .values({ ...row, tenant_id: scope.tenantId, config: JSON.stringify(row.config) })
    .execute();
}

/** The tenant's links that were not deleted, newest first (`limit + 1` rows). */
export function listConnectSessionRows(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: Cursor | undefined,
): Promise<ConnectSessionRow[]> {
  return newestFirstPage(
    db
      .selectFrom('connect_sessions')
      .selectAll()
      .where('tenant_id', '=', scope.tenantId)
      .where('revoked_at', 'is', null),
    limit,
    after,
  ).execute();
}

/** One of the tenant's links that was not deleted. */
export function findConnectSessionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
): Promise<ConnectSessionRow | undefined> {
  return db
    .selectFrom('connect_sessions')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
}

/** Deletes a link (it stays as a row, revoked); answers it, or undefined when there was none. */
export function revokeConnectSessionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  at: Date,
): Promise<ConnectSessionRow | undefined> {
  return db
    .updateTable('connect_sessions')
    .set({ revoked_at: at })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** The link whose code has this hash, while it works: not completed, deleted or expired. */
export function findLiveConnectSessionRow(
  db: Kysely<DB>,
  codeHash: string,
  at: Date,
): Promise<ConnectSessionRow | undefined> {
  return db
    .selectFrom('connect_sessions')
    .selectAll()
    .where('code_hash', '=', codeHash)
    .where('completed_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .executeTakeFirst();
}

/**
 * Claims a live link for one complete until `until`, in one conditional statement: of two
 * completes, exactly one gets the row; a claim left by a process that died lapses at `until`.
 */
export function claimConnectSessionRow(
  db: Kysely<DB>,
  codeHash: string,
  at: Date,
  until: Date,
): Promise<ConnectSessionRow | undefined> {
  return db
    .updateTable('connect_sessions')
    .set({ completing_until: until })
    .where('code_hash', '=', codeHash)
    .where('completed_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .where((eb) => eb.or([eb('completing_until', 'is', null), eb('completing_until', '<=', at)]))
    .returningAll()
    .executeTakeFirst();
}

/** Gives a claim back: the complete made nothing, and the person may try again. */
export async function releaseConnectSessionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
): Promise<void> {
  await db
    .updateTable('connect_sessions')
    .set({ completing_until: null })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .execute();
}

/** The claimed link made its connection: it works no more. */
export async function completeConnectSessionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  connectionId: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('connect_sessions')
    .set({ completed_at: at, connection_id: connectionId, completing_until: null })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .execute();
}

/**
 * Completes a link that is still pending (not completed, deleted or expired) with the connection its
 * authorization bound, in the binding's transaction; answers whether it was.
 */
export async function completePendingConnectSessionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  connectionId: string,
  at: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('connect_sessions')
    .set({ completed_at: at, connection_id: connectionId, completing_until: null })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .where('completed_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The connection a link already made, if any: a create records its actor, the link, as the
 * connection's `created_by`. A read of connections/' table (reads cross owners; it has no read by
 * creator), for a complete whose earlier claim lapsed after its connection was committed.
 */
export async function connectionMadeBy(
  db: Kysely<DB>,
  scope: TenantScope,
  linkId: string,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('connections')
    .select('id')
    .where('tenant_id', '=', scope.tenantId)
    .where('created_by', '=', linkId)
    .executeTakeFirst();
  return row?.id;
}
