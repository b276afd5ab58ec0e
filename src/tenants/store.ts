import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DB, ModuleKey, Role, TenantsTable, UsersTable, UserStatus } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';

export type TenantRow = Selectable<TenantsTable>;
export type UserRow = Selectable<UsersTable>;

export async function insertTenant(
  db: Kysely<DB>,
  row: TenantRow,
  modules: readonly ModuleKey[],
): Promise<void> {
  await db.insertInto('tenants').values(row).execute();
  // A tenant being created has no scope yet: its entitlements are written by ID, here only.
  await insertEntitlementRows(db, row.id, modules, row.created_at);
}

/**
 * A tenant by ID: how a platform route checks that the tenant its URL names exists before it makes
 * a scope for it, and how a scope's own tenant is read. The tenants table itself is not tenant data.
 */
export function findTenantRow(db: Kysely<DB>, id: string): Promise<TenantRow | undefined> {
  return db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst();
}

/** One page of tenants, newest first; `limit + 1` rows so the caller can tell whether more exist. */
export function listTenantRows(
  db: Kysely<DB>,
  limit: number,
  after: Cursor | undefined,
): Promise<TenantRow[]> {
  return newestFirstPage(db.selectFrom('tenants').selectAll(), limit, after).execute();
}

/** Entitlements of several tenants at once, in one query: the platform's tenant list and lookups. */
export async function entitlementsOf(db: Kysely<DB>, tenantIds: string[]): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>(tenantIds.map((id) => [id, []]));
  if (tenantIds.length === 0) return result;
  const rows = await db
    .selectFrom('tenant_entitlements')
    .select(['tenant_id', 'module_key'])
    .where('tenant_id', 'in', tenantIds)
    .orderBy('module_key')
    .execute();
  for (const row of rows) result.get(row.tenant_id)?.push(row.module_key);
  return result;
}

export async function replaceEntitlementRows(
  db: Kysely<DB>,
  scope: TenantScope,
  modules: readonly ModuleKey[],
  at: Date,
): Promise<void> {
  await db.deleteFrom('tenant_entitlements').where('tenant_id', '=', scope.tenantId).execute();
  await insertEntitlementRows(db, scope.tenantId, modules, at);
}

async function insertEntitlementRows(
  db: Kysely<DB>,
  tenantId: string,
  modules: readonly ModuleKey[],
  at: Date,
): Promise<void> {
  if (modules.length === 0) return;
  await db
    .insertInto('tenant_entitlements')
    .values(modules.map((module_key) => ({ tenant_id: tenantId, module_key, granted_at: at })))
    .execute();
}

/** What a new user row is given; the rest takes the column defaults (`status` is `active` unless said). */
export type NewUserRow = Pick<UserRow, 'id' | 'email' | 'role' | 'password_hash' | 'created_at'> & {
  status?: UserStatus;
};

/**
 * Inserts a user; false when the e-mail address is taken: by an active user of any tenant (an
 * address is unique among active users), or by a person of this tenant, active or invited.
 */
export async function insertUserRow(db: Kysely<DB>, scope: TenantScope, row: NewUserRow): Promise<boolean> {
  const inserted = await db
    .insertInto('users')
    .values({ ...row, tenant_id: scope.tenantId })
    // Either unique index (users_active_email_idx, users_tenant_email_idx): no target, both count.
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Locks an e-mail address until the end of the transaction, in every process: whatever makes a
 * user active with an address (a new active user, an accepted invitation) takes it first, then
 * checks that no active user holds the address. Without it, an accept and a create of the same
 * address would both pass the check and the second would fail at the unique index (a 500).
 * Tenant-agnostic by nature: an address is unique among active users across the service.
 */
export async function lockEmailAddress(db: Kysely<DB>, email: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`hubgate:user-email:${email}`}, 0))`.execute(db);
}

/** Whether an active user of any tenant holds the address (other than `exceptUserId`). */
export async function activeUserHoldsEmail(
  db: Kysely<DB>,
  email: string,
  exceptUserId?: string,
): Promise<boolean> {
  let query = db.selectFrom('users').select('id').where('email', '=', email).where('status', '=', 'active');
  if (exceptUserId !== undefined) query = query.where('id', '!=', exceptUserId);
  return (await query.executeTakeFirst()) !== undefined;
}

/** A user row with its tenant's entitlements, read in the same query: what sign-in starts from. */
export type SignInUserRow = UserRow & { entitlements: string[] };

// Tenant-agnostic by nature: sign-in knows no tenant until the credential has named the user.
const signInUsers = (db: Kysely<DB>) =>
  db
    .selectFrom('users as u')
    .selectAll('u')
    .select(
      sql<
        string[]
      >`coalesce((select json_agg(e.module_key order by e.module_key) from tenant_entitlements e where e.tenant_id = u.tenant_id), '[]'::json)`.as(
        'entitlements',
      ),
    );

/** An active user by e-mail address: an invited one has no way to sign in until they accept. */
export function findActiveUserRowByEmail(db: Kysely<DB>, email: string): Promise<SignInUserRow | undefined> {
  return signInUsers(db).where('u.email', '=', email).where('u.status', '=', 'active').executeTakeFirst();
}

export function findUserRowById(db: Kysely<DB>, userId: string): Promise<SignInUserRow | undefined> {
  return signInUsers(db).where('u.id', '=', userId).executeTakeFirst();
}

export async function anyUserRow(db: Kysely<DB>): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  return row !== undefined;
}

// A user's columns that other folders change (tenants/users.ts), each in the scope of its tenant
// and with the caller's transaction: the caller holds whatever locks its rule needs.

/** The user's last sign-in; answers, from the row it locked, whether password sign-in is on. */
export async function setLastSignInRow(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  at: Date,
): Promise<{ passwordSignIn: boolean } | undefined> {
  const row = await db
    .updateTable('users')
    .set({ last_sign_in_at: at })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', userId)
    .returning('password_sign_in_enabled')
    .executeTakeFirst();
  return row && { passwordSignIn: row.password_sign_in_enabled };
}

/** The user's WebAuthn handle, made once (the first writer wins when two offers race). */
export async function userHandleRow(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  fresh: string,
): Promise<string> {
  await db
    .updateTable('users')
    .set({ webauthn_user_id: fresh })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', userId)
    .where('webauthn_user_id', 'is', null)
    .execute();
  const row = await db
    .selectFrom('users')
    .select('webauthn_user_id')
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  return row.webauthn_user_id ?? fresh;
}

export async function setPasswordSignInRow(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  enabled: boolean,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_sign_in_enabled: enabled })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', userId)
    .execute();
}

export async function setRoleRow(
  trx: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  role: Role,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ role })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', userId)
    .execute();
}

/** Deletes the user; their sessions, passkeys and invitations go with them (foreign keys cascade). */
export async function deleteUserRow(trx: Kysely<DB>, scope: TenantScope, userId: string): Promise<void> {
  await trx.deleteFrom('users').where('tenant_id', '=', scope.tenantId).where('id', '=', userId).execute();
}

/**
 * Makes an invited user active with the password they chose; false when they are not (any more)
 * an invited user of the tenant.
 */
export async function activateInvitedRow(
  trx: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  passwordHash: string,
): Promise<boolean> {
  const result = await trx
    .updateTable('users')
    .set({ status: 'active', password_hash: passwordHash })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', userId)
    .where('status', '=', 'invited')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
