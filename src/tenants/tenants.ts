import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { ModuleKey, Role } from '../access/catalog.js';
import type { Principal } from '../access/principal.js';
import { platformScopeOf, type TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { isIdOf, newId } from '../crypto/ids.js';
import { hashPassword } from '../crypto/passwords.js';
import type { DB, UserStatus } from '../db/schema.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { HttpProblem, notFound } from '../http/problem.js';
import {
  activeUserHoldsEmail,
  anyUserRow,
  entitlementsOf,
  findActiveUserRowByEmail,
  findTenantRow,
  findUserRowById,
  insertTenant,
  insertUserRow,
  listTenantRows,
  lockEmailAddress,
  replaceEntitlementRows,
  type SignInUserRow,
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

/** A tenant by the ID a platform operator named: 404 for an unknown or malformed one. */
export async function getTenant(ctx: AppContext, id: string): Promise<Tenant> {
  const row = isIdOf('ten', id) ? await findTenantRow(ctx.db, id) : undefined;
  if (!row) throw notFound('tenant');
  const entitlements = await entitlementsOf(ctx.db, [row.id]);
  return toTenant(row, entitlements.get(row.id) ?? []);
}

/** The scope's own tenant, with its entitlements as they are now (the sign-in answer, the session). */
export function ownTenant(ctx: AppContext, scope: TenantScope): Promise<Tenant> {
  return getTenant(ctx, scope.tenantId);
}

/**
 * The scope a platform operator manages a tenant's users and entitlements in: the tenant the URL
 * names, found first (404 otherwise). Platform keys own no tenant; this is where they get one.
 */
export async function platformScopeFor(
  ctx: AppContext,
  principal: Principal | null,
  id: string,
): Promise<TenantScope> {
  return platformScopeOf(principal, await getTenant(ctx, id));
}

export async function listTenants(ctx: AppContext, query: PageQuery): Promise<Page<Tenant>> {
  return listPage(
    query,
    'ten',
    (limit, after) => listTenantRows(ctx.db, limit, after),
    async (rows) => {
      const entitlements = await entitlementsOf(
        ctx.db,
        rows.map((r) => r.id),
      );
      return rows.map((row) => toTenant(row, entitlements.get(row.id) ?? []));
    },
    { keyring: ctx.keyring, list: ['tenants'] },
  );
}

export async function setEntitlements(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  modules: ModuleKey[],
): Promise<Tenant> {
  const wanted = unique(modules);
  const { tenantId } = scope;
  return ctx.db.transaction().execute(async (trx) => {
    const row = await findTenantRow(trx, tenantId);
    if (!row) throw notFound('tenant');
    const before = (await entitlementsOf(trx, [tenantId])).get(tenantId) ?? [];
    await replaceEntitlementRows(trx, scope, wanted, origin.at);
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
  scope: TenantScope,
  origin: AuditOrigin,
  input: { email: string; role: Role; password: string },
): Promise<User> {
  // Hashing is slow on purpose; do it before the transaction so no connection waits on it.
  const passwordHash = await hashPassword(input.password);
  return ctx.db
    .transaction()
    .execute((trx) =>
      createUserWith(trx, scope, origin, { email: input.email, role: input.role, passwordHash }),
    );
}

// Says nothing of whose the address is: no answer names anything of another tenant.
const emailTaken = (): HttpProblem =>
  new HttpProblem('conflict', 'A user with this e-mail address already exists.');

/**
 * A new user of an existing tenant and its audit row, written with `db` (the caller's transaction);
 * the password is hashed by the caller, outside any transaction. An e-mail address held by an active
 * user of any tenant, or by a person of this tenant (active or invited), is a 409.
 * `id` when the caller needs it before (first-run setup's audit rows name the new user as actor).
 * An invited user (docs/api/people.md) has no password until they accept their invitation.
 */
export async function createUserWith(
  db: Kysely<DB>,
  scope: TenantScope,
  origin: AuditOrigin,
  input: { email: string; role: Role; id?: string } & (
    { passwordHash: string; status?: 'active' } | { passwordHash: null; status: 'invited' }
  ),
): Promise<User> {
  const email = normalizeEmail(input.email);
  const id = input.id ?? newId('usr');
  const { tenantId } = scope;
  const status: UserStatus = input.status ?? 'active';
  // An active user takes the address under its lock; an invited one reserves nothing and only needs
  // it free of active users (docs/decisions/0062-pending-invitations-reserve-nothing.md).
  if (status === 'active') await lockEmailAddress(db, email);
  if (await activeUserHoldsEmail(db, email)) throw emailTaken();
  const inserted = await insertUserRow(db, scope, {
    id,
    email,
    role: input.role,
    password_hash: input.passwordHash,
    created_at: origin.at,
    status,
  });
  if (!inserted) throw emailTaken();
  await recordAudit(db, origin, {
    action: 'user.create',
    tenantId,
    targetType: 'user',
    targetId: id,
    metadata: { email, role: input.role, ...(status === 'invited' && { status }) },
  });
  return { id, email, role: input.role, tenantId };
}

/**
 * Locks the address for the transaction that makes its user active, then answers whether it is
 * still free of active users (other than `userId`): see `lockEmailAddress`.
 */
export async function claimEmailAddress(db: Kysely<DB>, email: string, userId: string): Promise<boolean> {
  await lockEmailAddress(db, email);
  return !(await activeUserHoldsEmail(db, email, userId));
}

/** Whether an active user of any tenant holds the address: an invitation to it can no longer be accepted. */
export const isEmailActive = (db: Kysely<DB>, email: string): Promise<boolean> =>
  activeUserHoldsEmail(db, normalizeEmail(email));

/** Whether the database holds any user at all: until it does, first-run setup is open (docs/operators/setup.md). */
export function hasAnyUser(db: Kysely<DB>): Promise<boolean> {
  return anyUserRow(db);
}

/** E-mail addresses are stored trimmed and lower-cased; every lookup normalises the same way. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase();

/** A user as sign-in finds them, before any scope exists: what each way of signing in checks. */
export interface SignInUser extends User {
  status: UserStatus;
  passwordHash: string | null;
  passwordSignInEnabled: boolean;
  /** The WebAuthn user handle, null before their first passkey offer. */
  webauthnUserId: string | null;
  /** The tenant's entitlements, read with the user: what the scope of their session carries. */
  entitlements: string[];
}

const toSignInUser = (row: SignInUserRow): SignInUser => ({
  id: row.id,
  email: row.email,
  role: row.role,
  tenantId: row.tenant_id,
  status: row.status,
  passwordHash: row.password_hash,
  passwordSignInEnabled: row.password_sign_in_enabled,
  webauthnUserId: row.webauthn_user_id,
  entitlements: row.entitlements,
});

/**
 * The active user an e-mail address signs in as, with what password sign-in needs; undefined if
 * none. An invited user is none: they sign in first by accepting their invitation.
 */
export async function findUserForSignIn(ctx: AppContext, email: string): Promise<SignInUser | undefined> {
  const row = await findActiveUserRowByEmail(ctx.db, normalizeEmail(email));
  return row && toSignInUser(row);
}

/** A user by ID (a passkey names its owner by ID), or undefined if the user is gone. */
export async function findUserById(db: Kysely<DB>, userId: string): Promise<SignInUser | undefined> {
  const row = await findUserRowById(db, userId);
  return row && toSignInUser(row);
}
