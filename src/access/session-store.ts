import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB, Role, SessionsTable } from '../db/schema.js';
import type { TenantScope } from './scope.js';

export type SessionRow = Selectable<SessionsTable>;

export async function insertSession(
  db: Kysely<DB>,
  scope: TenantScope,
  row: Omit<SessionRow, 'tenant_id'>,
): Promise<void> {
  await db
    .insertInto('sessions')
    .values({ ...row, tenant_id: scope.tenantId })
    .execute();
}

export interface LiveSession {
  id: string;
  userId: string;
  tenantId: string;
  email: string;
  role: Role;
  authMethod: string;
  lastSeenAt: Date;
  entitlements: string[];
}

/**
 * The session behind a token hash (tenant-agnostic by nature: the token is what names the tenant) with its user and the tenant's entitlements, in one query; only
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

/** Called by the gate for the session the token just found, before any scope exists. */
export async function touchSession(db: Kysely<DB>, sessionId: string, at: Date): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', sessionId).execute();
}

export async function revokeSessionRow(
  db: Kysely<DB>,
  scope: TenantScope,
  sessionId: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

/**
 * Revokes the user's live sessions, those that started with `authMethod` only when it is given,
 * all but `exceptSessionId` when it is given; answers how many ended. Every request looks its
 * session up in the database (no cache), so they end at once, in every process.
 */
export async function revokeUserSessionRows(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  at: Date,
  which: { authMethod?: string; exceptSessionId?: string } = {},
): Promise<number> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('tenant_id', '=', scope.tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null);
  if (which.authMethod !== undefined) query = query.where('auth_method', '=', which.authMethod);
  if (which.exceptSessionId !== undefined) query = query.where('id', '!=', which.exceptSessionId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** How long a failed sign-in counts against its account (docs/api/authentication.md). */
export const SIGN_IN_FAILURE_WINDOW_MS = 15 * 60 * 1000;

export type SignInReservation = { reserved: true } | { reserved: false; oldestFailure: Date | null };

/**
 * Reserves one password check for `account`, recorded as a failure until a success clears it: no
 * more than `max` within the window since `since`. The account's attempts are serialized by an
 * advisory lock held to the end of the transaction, in every process; counting then inserting
 * without it lets concurrent attempts all see nine, even in one transaction under READ COMMITTED.
 */
export async function reserveSignInAttempt(
  db: Kysely<DB>,
  account: string,
  at: Date,
  since: Date,
  max: number,
): Promise<SignInReservation> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`sign_in:${account}`}, 0))`.execute(trx);
    // A statement of its own after the lock, so its snapshot sees every attempt committed before.
    const row = await trx
      .selectFrom('sign_in_failures')
      .select([sql<number>`count(*)::int`.as('count'), sql<Date | null>`min(failed_at)`.as('oldest')])
      .where('account', '=', account)
      .where('failed_at', '>', since)
      .executeTakeFirstOrThrow();
    if (row.count >= max) return { reserved: false, oldestFailure: row.oldest ? new Date(row.oldest) : null };
    await trx.insertInto('sign_in_failures').values({ account, failed_at: at }).execute();
    return { reserved: true };
  });
}

export async function clearFailures(db: Kysely<DB>, account: string): Promise<void> {
  await db.deleteFrom('sign_in_failures').where('account', '=', account).execute();
}

/**
 * Gives back one check reserved at `at` that never happened or needs no counting (the password
 * was never verified; a lookup that found what it asked for): one row, the other failures stay.
 */
export async function releaseReservation(db: Kysely<DB>, account: string, at: Date): Promise<void> {
  await sql`delete from sign_in_failures where ctid = (
    select ctid from sign_in_failures where account = ${account} and failed_at = ${at} limit 1)`.execute(db);
}
