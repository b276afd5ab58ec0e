import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB, SessionsTable } from '../db/schema.js';

export type SessionRow = Selectable<SessionsTable>;

export async function insertSession(db: Kysely<DB>, row: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

export interface LiveSession {
  id: string;
  userId: string;
  tenantId: string;
  email: string;
  role: string;
  authMethod: string;
  lastSeenAt: Date;
  entitlements: string[];
}

/**
 * The session behind a token hash with its user and the tenant's entitlements, in one query; only
 * while it is neither revoked nor past its absolute or idle expiry.
 */
export async function findLiveSession(
  db: Kysely<DB>,
  tokenHash: string,
  now: Date,
  idleSince: Date,
): Promise<LiveSession | undefined> {
  const row = await db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      's.id',
      's.user_id',
      's.tenant_id',
      's.auth_method',
      's.last_seen_at',
      'u.email',
      'u.role',
      sql<
        string[]
      >`coalesce((select json_agg(e.module_key order by e.module_key) from tenant_entitlements e where e.tenant_id = s.tenant_id), '[]'::json)`.as(
        'entitlements',
      ),
    ])
    .where('s.token_hash', '=', tokenHash)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('s.last_seen_at', '>', idleSince)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    id: row.id,
    userId: row.user_id,
    tenantId: row.tenant_id,
    email: row.email,
    role: row.role,
    authMethod: row.auth_method,
    lastSeenAt: new Date(row.last_seen_at),
    entitlements: row.entitlements,
  };
}

export async function touchSession(db: Kysely<DB>, sessionId: string, at: Date): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', sessionId).execute();
}

export async function revokeSessionRow(db: Kysely<DB>, sessionId: string, at: Date): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function countRecentFailures(
  db: Kysely<DB>,
  account: string,
  since: Date,
): Promise<{ count: number; oldest: Date | null }> {
  const row = await db
    .selectFrom('sign_in_failures')
    .select([sql<number>`count(*)::int`.as('count'), sql<Date | null>`min(failed_at)`.as('oldest')])
    .where('account', '=', account)
    .where('failed_at', '>', since)
    .executeTakeFirstOrThrow();
  return { count: row.count, oldest: row.oldest ? new Date(row.oldest) : null };
}

export async function insertFailure(db: Kysely<DB>, account: string, at: Date): Promise<void> {
  await db.insertInto('sign_in_failures').values({ account, failed_at: at }).execute();
}

export async function clearFailures(db: Kysely<DB>, account: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('account', '=', account).execute();
}
