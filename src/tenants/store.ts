import type { Kysely, Selectable } from 'kysely';
import type { DB, TenantsTable, UsersTable } from '../db/schema.js';
import { type Cursor, newestFirstPage } from '../http/pagination.js';

export type TenantRow = Selectable<TenantsTable>;
export type UserRow = Selectable<UsersTable>;

export async function insertTenant(db: Kysely<DB>, row: TenantRow, modules: string[]): Promise<void> {
  await db.insertInto('tenants').values(row).execute();
  await replaceEntitlementRows(db, row.id, modules, row.created_at);
}

export function findTenantRow(db: Kysely<DB>, tenantId: string): Promise<TenantRow | undefined> {
  return db.selectFrom('tenants').selectAll().where('id', '=', tenantId).executeTakeFirst();
}

/** One page of tenants, newest first; `limit + 1` rows so the caller can tell whether more exist. */
export function listTenantRows(
  db: Kysely<DB>,
  limit: number,
  after: Cursor | undefined,
): Promise<TenantRow[]> {
  return newestFirstPage(db.selectFrom('tenants').selectAll(), limit, after).execute();
}

/** Entitlements of several tenants at once, in one query. */
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
  tenantId: string,
  modules: string[],
  at: Date,
): Promise<void> {
  await db.deleteFrom('tenant_entitlements').where('tenant_id', '=', tenantId).execute();
  if (modules.length === 0) return;
  await db
    .insertInto('tenant_entitlements')
    .values(modules.map((module_key) => ({ tenant_id: tenantId, module_key, granted_at: at })))
    .execute();
}

/** Inserts a user; false when the e-mail address is taken (by any tenant: e-mail is global). */
export async function insertUserRow(
  db: Kysely<DB>,
  tenantId: string,
  row: Omit<UserRow, 'tenant_id' | 'password_sign_in_enabled' | 'webauthn_user_id'>,
): Promise<boolean> {
  const inserted = await db
    .insertInto('users')
    .values({ ...row, tenant_id: tenantId })
    .onConflict((oc) => oc.column('email').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export function findUserRowByEmail(db: Kysely<DB>, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findUserRowById(db: Kysely<DB>, userId: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
}

export async function anyUserRow(db: Kysely<DB>): Promise<boolean> {
  const row = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  return row !== undefined;
}
