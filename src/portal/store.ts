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
 * Uses up a code: the session whose live code has this hash gets one more token, in one statement,
 * so two exchanges of one code cannot both win. A session holds a token per code exchanged (its
 * link's, and each one an authorization's callback hands back: docs/api/portal.md), all ending
 * with it. Tenant-agnostic by nature: the code is what names the session.
 */
export async function exchangeCodeRow(
  db: Kysely<DB>,
  codeHash: string,
  tokenHash: string,
  at: Date,
): Promise<PortalSessionRow | undefined> {
  const result = await sql<PortalSessionRow>`
    with used as (
      update portal_sessions set code_hash = null, exchanged_at = coalesce(exchanged_at, ${at})
      where code_hash = ${codeHash} and code_expires_at > ${at} and expires_at > ${at} and revoked_at is null
      returning *
    ), added as (
      insert into portal_session_tokens (token_hash, session_id, created_at)
      select ${tokenHash}, id, ${at} from used
    )
    select * from used`.execute(db);
  return result.rows[0];
}

/**
 * Gives a live session a new code (its old one, if unused, stops working), valid until `until` and
 * never past the session's end; answers the session, or undefined when it is revoked or over.
 */
export function setPortalSessionCode(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  codeHash: string,
  until: Date,
  at: Date,
): Promise<PortalSessionRow | undefined> {
  return db
    .updateTable('portal_sessions')
    .set({ code_hash: codeHash, code_expires_at: sql`least(${until}::timestamptz, expires_at)` })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .returningAll()
    .executeTakeFirst();
}

/** One of the tenant's sessions, whatever its state, with its tenant's entitlements. */
export async function findPortalSessionById(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
): Promise<PortalSessionForVerification | undefined> {
  const row = await withEntitlements(db)
    .where('p.tenant_id', '=', scope.tenantId)
    .where('p.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const { entitlements, ...session } = row;
  return { row: session, entitlements };
}

export interface PortalSessionForVerification {
  row: PortalSessionRow;
  entitlements: string[];
}

const withEntitlements = (db: Kysely<DB>) =>
  db
    .selectFrom('portal_sessions as p')
    .selectAll('p')
    .select(
      sql<
        string[]
      >`coalesce((select json_agg(e.module_key order by e.module_key) from tenant_entitlements e where e.tenant_id = p.tenant_id), '[]'::json)`.as(
        'entitlements',
      ),
    );

/** The session one of whose tokens has this hash, with its tenant's entitlements (as tenant keys are read). */
export async function findPortalSessionByTokenHash(
  db: Kysely<DB>,
  tokenHash: string,
): Promise<PortalSessionForVerification | undefined> {
  const row = await withEntitlements(db)
    .innerJoin('portal_session_tokens as t', 't.session_id', 'p.id')
    .where('t.token_hash', '=', tokenHash)
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
