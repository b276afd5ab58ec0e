import type { Kysely } from 'kysely';
import { type AuditOrigin, recordAudit } from '../access/audit.js';
import type { ModuleKey, Role } from '../access/catalog.js';
import type { AppContext } from '../context.js';
import { isIdOf, newId } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import { hashPassword } from '../crypto/passwords.js';
import { decodeCursor, type Page, type PageQuery, toPage } from '../http/pagination.js';
import { HttpProblem, notFound } from '../http/problem.js';
import {
  anyUserRow,
  entitlementsOf,
  findTenantRow,
  findUserRowByEmail,
  findUserRowById,
  insertTenant,
  insertUserRow,
  listTenantRows,
  replaceEntitlementRows,
  type TenantRow,
} from './store.js';

export interface Tenant {
  id: string;
  name: string;
  entitlements: string[];
  createdAt: string;
}

export interface User {
  id: string;
  email: string;
  role: Role;
  tenantId: string;
}

const toTenant = (row: TenantRow, entitlements: string[]): Tenant => ({
  id: row.id,
  name: row.name,
  entitlements,
  createdAt: new Date(row.created_at).toISOString(),
});

const unique = (modules: readonly ModuleKey[]): ModuleKey[] => [...new Set(modules)].sort();

export async function createTenant(
  ctx: AppContext,
  origin: AuditOrigin,
  input: { name: string; entitlements: ModuleKey[] },
): Promise<Tenant> {
  return ctx.db.transaction().execute((trx) => createTenantWith(trx, origin, input));
}

/** A new tenant and its audit row, written with `db`: the caller's transaction (first-run setup). */
export async function createTenantWith(
  db: Kysely<DB>,
  origin: AuditOrigin,
  input: { name: string; entitlements: readonly ModuleKey[] },
): Promise<Tenant> {
  const row: TenantRow = { id: newId('ten'), name: input.name, created_at: origin.at };
  const modules = unique(input.entitlements);
  await insertTenant(db, row, modules);
  await recordAudit(db, origin, {
    action: 'tenant.create',
    tenantId: row.id,
    targetType: 'tenant',
    targetId: row.id,
    metadata: { name: row.name, entitlements: modules },
  });
  return toTenant(row, modules);
}

export async function getTenant(ctx: AppContext, tenantId: string): Promise<Tenant> {
  const row = isIdOf('ten', tenantId) ? await findTenantRow(ctx.db, tenantId) : undefined;
  if (!row) throw notFound('tenant');
  const entitlements = await entitlementsOf(ctx.db, [row.id]);
  return toTenant(row, entitlements.get(row.id) ?? []);
}

export async function listTenants(ctx: AppContext, query: PageQuery): Promise<Page<Tenant>> {
  const limit = query.limit ?? 20;
  const rows = await listTenantRows(ctx.db, limit, decodeCursor(query.cursor, 'ten'));
  const entitlements = await entitlementsOf(
    ctx.db,
    rows.slice(0, limit).map((r) => r.id),
  );
  return toPage(rows, limit, (row) => toTenant(row, entitlements.get(row.id) ?? []));
}

export async function setEntitlements(
  ctx: AppContext,
  origin: AuditOrigin,
  tenantId: string,
  modules: ModuleKey[],
): Promise<Tenant> {
  const wanted = unique(modules);
  return ctx.db.transaction().execute(async (trx) => {
    const row = isIdOf('ten', tenantId) ? await findTenantRow(trx, tenantId) : undefined;
    if (!row) throw notFound('tenant');
    const before = (await entitlementsOf(trx, [tenantId])).get(tenantId) ?? [];
    await replaceEntitlementRows(trx, tenantId, wanted, origin.at);
    await recordAudit(trx, origin, {
      action: 'tenant.entitlements.update',
      tenantId,
      targetType: 'tenant',
      targetId: tenantId,
      metadata: { before, after: wanted },
    });
    return toTenant(row, wanted);
  });
}

export async function createUser(
  ctx: AppContext,
  origin: AuditOrigin,
  tenantId: string,
  input: { email: string; role: Role; password: string },
): Promise<User> {
  // Hashing is slow on purpose; do it before the transaction so no connection waits on it.
  const passwordHash = await hashPassword(input.password);
  return ctx.db.transaction().execute(async (trx) => {
    const tenant = isIdOf('ten', tenantId) ? await findTenantRow(trx, tenantId) : undefined;
    if (!tenant) throw notFound('tenant');
    return createUserWith(trx, origin, tenantId, { email: input.email, role: input.role, passwordHash });
  });
}

/**
 * A new user of an existing tenant and its audit row, written with `db` (the caller's transaction);
 * the password is hashed by the caller, outside any transaction. A taken e-mail address is a 409.
 * `id` when the caller needs it before (first-run setup's audit rows name the new user as actor).
 */
export async function createUserWith(
  db: Kysely<DB>,
  origin: AuditOrigin,
  tenantId: string,
  input: { email: string; role: Role; passwordHash: string; id?: string },
): Promise<User> {
  const email = normalizeEmail(input.email);
  const id = input.id ?? newId('usr');
  const inserted = await insertUserRow(db, tenantId, {
    id,
    email,
    role: input.role,
    password_hash: input.passwordHash,
    created_at: origin.at,
  });
  if (!inserted) throw new HttpProblem('conflict', 'A user with this e-mail address already exists.');
  await recordAudit(db, origin, {
    action: 'user.create',
    tenantId,
    targetType: 'user',
    targetId: id,
    metadata: { email, role: input.role },
  });
  return { id, email, role: input.role, tenantId };
}

/** Whether the database holds any user at all: until it does, first-run setup is open (§13). */
export function hasAnyUser(db: Kysely<DB>): Promise<boolean> {
  return anyUserRow(db);
}

/** E-mail addresses are stored trimmed and lower-cased; every lookup normalises the same way. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

export interface SignInUser extends User {
  passwordHash: string | null;
  passwordSignInEnabled: boolean;
}

/** The user an e-mail address signs in as, with what password sign-in needs; undefined if none. */
export async function findUserForSignIn(ctx: AppContext, email: string): Promise<SignInUser | undefined> {
  const row = await findUserRowByEmail(ctx.db, normalizeEmail(email));
  if (!row) return undefined;
  return {
    id: row.id,
    email: row.email,
    role: row.role as Role,
    tenantId: row.tenant_id,
    passwordHash: row.password_hash,
    passwordSignInEnabled: row.password_sign_in_enabled,
  };
}

/** A user by ID (a passkey names its owner by ID), or undefined if the user is gone. */
export async function findUserById(db: Kysely<DB>, userId: string): Promise<User | undefined> {
  const row = await findUserRowById(db, userId);
  return row && { id: row.id, email: row.email, role: row.role as Role, tenantId: row.tenant_id };
}
