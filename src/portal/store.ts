import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DB, PortalSessionsTable } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';

export type PortalSessionRow = Selectable<PortalSessionsTable>;

// Every function but the two lookups by a secret takes the tenant's scope first and filters on it.

export async function insertPortalSession(
  db: Kysely<DB>,
  scope: TenantScope,
  row: Omit<PortalSessionRow, 'tenant_id'>,
): Promise<void> {
  await db
    .insertInto('portal_sessions')
    .values({ ...row, tenant_id: scope.tenantId })
    .execute();
}

/** The tenant's sessions that are not revoked, newest first (`limit + 1` rows). */
export function listPortalSessionRows(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: Cursor | undefined,
): Promise<PortalSessionRow[]> {
  return newestFirstPage(
    db
      .selectFrom('portal_sessions')
      .selectAll()
      .where('tenant_id', '=', scope.tenantId)
      .where('revoked_at', 'is', null),
    limit,
    after,
  ).execute();
}

/** Revokes a session that is not revoked yet; answers it, or undefined when there was none. */
export function revokePortalSessionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  at: Date,
): Promise<PortalSessionRow | undefined> {
  return db
    .updateTable('portal_sessions')
    .set({ revoked_at: at, code_hash: null })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Uses up a code: the session whose live code has this hash gets the token's hash, in one
 * statement, so two exchanges of one code cannot both win. Tenant-agnostic by nature: the code is
 * what names the session.
 */
export function exchangeCodeRow(
  db: Kysely<DB>,
  codeHash: string,
  tokenHash: string,
  at: Date,
): Promise<PortalSessionRow | undefined> {
  return db
    .updateTable('portal_sessions')
    .set({ code_hash: null, token_hash: tokenHash, exchanged_at: at })
    .where('code_hash', '=', codeHash)
    .where('code_expires_at', '>', at)
    .where('expires_at', '>', at)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export interface PortalSessionForVerification {
  row: PortalSessionRow;
  entitlements: string[];
}

/** The session whose token has this hash, with its tenant's entitlements (as tenant keys are read). */
export async function findPortalSessionByTokenHash(
  db: Kysely<DB>,
  tokenHash: string,
): Promise<PortalSessionForVerification | undefined> {
  const row = await db
    .selectFrom('portal_sessions as p')
    .selectAll('p')
    .select(
      sql<
        string[]
      >`coalesce((select json_agg(e.module_key order by e.module_key) from tenant_entitlements e where e.tenant_id = p.tenant_id), '[]'::json)`.as(
        'entitlements',
      ),
    )
    .where('p.token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const { entitlements, ...session } = row;
  return { row: session, entitlements };
}

/** Adds a connection to a session that names its connections (one it has just created). */
export async function addPortalSessionConnection(
  db: Kysely<DB>,
  scope: TenantScope,
  sessionId: string,
  connectionId: string,
): Promise<void> {
  await db
    .updateTable('portal_sessions')
    .set({ connection_ids: sql`array_append(connection_ids, ${connectionId}::text)` })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', sessionId)
    .where('connection_ids', 'is not', null)
    .execute();
}
