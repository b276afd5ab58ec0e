import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DB, PasskeysTable, WebauthnChallengesTable } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';

export type PasskeyRow = Selectable<PasskeysTable>;
export type ChallengeRow = Selectable<WebauthnChallengesTable>;

// A user's passkeys and sign-in settings are read and changed in the scope of their tenant, and
// filtered on it as well as on the user: a user ID of another tenant finds nothing. Challenges are
// bound to a session or to no one, and a passkey found by its credential ID is how sign-in starts.

const usersOf = (db: Kysely<DB>, scope: TenantScope) =>
  db.selectFrom('users').where('tenant_id', '=', scope.tenantId);
const passkeysOf = (db: Kysely<DB>, scope: TenantScope) =>
  db.selectFrom('passkeys').where('tenant_id', '=', scope.tenantId);

/** The user's WebAuthn handle, or null before their first passkey offer. */
export async function handleOfUser(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
): Promise<string | null> {
  const row = await usersOf(db, scope).select('webauthn_user_id').where('id', '=', userId).executeTakeFirst();
  return row?.webauthn_user_id ?? null;
}

export async function insertChallenge(db: Kysely<DB>, row: ChallengeRow): Promise<void> {
  await db.insertInto('webauthn_challenges').values(row).execute();
}

/**
 * Takes a challenge out for use: the one statement that finds it also deletes it, so of two
 * requests presenting the same challenge exactly one gets it back. Undefined when it was never
 * issued for this ceremony (and session), was used already, or has expired.
 */
export async function takeChallenge(
  db: Kysely<DB>,
  challenge: string,
  ceremony: ChallengeRow['ceremony'],
  sessionId: string | null,
  now: Date,
): Promise<ChallengeRow | undefined> {
  return db
    .deleteFrom('webauthn_challenges')
    .where('challenge', '=', challenge)
    .where('ceremony', '=', ceremony)
    .where('expires_at', '>', now)
    .where((eb) => (sessionId === null ? eb('session_id', 'is', null) : eb('session_id', '=', sessionId)))
    .returningAll()
    .executeTakeFirst();
}

export async function deleteExpiredChallenges(db: Kysely<DB>, now: Date): Promise<number> {
  const result = await db.deleteFrom('webauthn_challenges').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Inserts a passkey; false when its credential ID is registered already (to anyone). */
export async function insertPasskey(
  db: Kysely<DB>,
  scope: TenantScope,
  row: Omit<PasskeyRow, 'tenant_id'>,
): Promise<boolean> {
  const inserted = await db
    .insertInto('passkeys')
    .values({
      ...row,
      tenant_id: scope.tenantId,
      counter: Number(row.counter),
      transports: JSON.stringify(row.transports),
    })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Credential IDs and transports of the user's passkeys, for `excludeCredentials`. */
export function credentialsOfUser(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
): Promise<Pick<PasskeyRow, 'credential_id' | 'transports'>[]> {
  return passkeysOf(db, scope)
    .select(['credential_id', 'transports'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
}

/** One page of the user's passkeys, newest first; `limit + 1` rows so the caller can tell whether more exist. */
export function listPasskeyRows(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  limit: number,
  after: Cursor | undefined,
): Promise<PasskeyRow[]> {
  return newestFirstPage(
    passkeysOf(db, scope).selectAll().where('user_id', '=', userId),
    limit,
    after,
  ).execute();
}

/** Tenant-agnostic by nature: the credential ID a browser presents at sign-in names the passkey. */
export function findPasskeyByCredential(
  db: Kysely<DB>,
  credentialId: string,
): Promise<PasskeyRow | undefined> {
  return db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

export function countPasskeys(db: Kysely<DB>, scope: TenantScope, userId: string): Promise<number> {
  return passkeysOf(db, scope)
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
    .then((row) => Number(row.n));
}

/** Deletes the user's passkey; the row deleted, or undefined when the user has no such passkey. */
export function deletePasskeyRow(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  passkeyId: string,
): Promise<PasskeyRow | undefined> {
  return db
    .deleteFrom('passkeys')
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', passkeyId)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Records a verified use. The counter moves only forward, checked in the same statement, so two
 * assertions raced with counters read before either landed cannot both pass; an authenticator
 * that keeps no counter reports 0 every time and stays at 0 (docs/api/passkeys.md). False: refused.
 */
export async function recordPasskeyUse(
  db: Kysely<DB>,
  scope: TenantScope,
  passkeyId: string,
  update: { counter: number; backedUp: boolean; at: Date },
): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ counter: update.counter, backed_up: update.backedUp, last_used_at: update.at })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', passkeyId)
    .where((eb) => (update.counter === 0 ? eb('counter', '=', 0) : eb('counter', '<', update.counter)))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Serializes the changes to one user's sign-in methods until the end of the transaction, so
 * "turn passwords off" and "remove the last passkey" cannot both pass their checks at once.
 */
export async function lockSignInMethods(trx: Kysely<DB>, userId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`hubgate:sign-in-methods:${userId}`}, 0))`.execute(
    trx,
  );
}

export async function passwordSignInEnabled(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
): Promise<boolean> {
  const row = await usersOf(db, scope)
    .select('password_sign_in_enabled')
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return row.password_sign_in_enabled;
}
