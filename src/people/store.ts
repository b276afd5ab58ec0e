import { sql, type Kysely, type Selectable } from 'kysely';
import { KEY_MANAGING_ROLES } from '../access/catalog.js';
import type { TenantScope } from '../access/scope.js';
import type { DB, InvitationsTable, Role, UsersTable } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';

// The tenant's people and their invitations. Every query of people takes the scope and filters on
// its tenant; an invitation found by its token hash is tenant-agnostic by nature (the token names
// the tenant, as a session token does).

export type PersonRow = Pick<
  Selectable<UsersTable>,
  'id' | 'email' | 'role' | 'status' | 'created_at' | 'last_sign_in_at' | 'password_sign_in_enabled'
> & { passkeys: number };

const peopleOf = (db: Kysely<DB>, scope: TenantScope) =>
  db
    .selectFrom('users as u')
    .select([
      'u.id',
      'u.email',
      'u.role',
      'u.status',
      'u.created_at',
      'u.last_sign_in_at',
      'u.password_sign_in_enabled',
      sql<number>`(select count(*) from passkeys p where p.user_id = u.id)::int`.as('passkeys'),
    ])
    .where('u.tenant_id', '=', scope.tenantId);

/** One page of the tenant's people, newest first; `limit + 1` rows so the caller can tell whether more exist. */
export function listPersonRows(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: Cursor | undefined,
): Promise<PersonRow[]> {
  return newestFirstPage(peopleOf(db, scope), limit, after, 'u').execute();
}

export function findPersonRow(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
): Promise<PersonRow | undefined> {
  return peopleOf(db, scope).where('u.id', '=', userId).executeTakeFirst();
}

/**
 * Locks the tenant's active users who may manage keys, until the end of the transaction, and
 * answers them. Every change to who those are (a role change, a removal) takes this lock first, so
 * two of them cannot both see "one other manager is left" and both go through: the second waits,
 * then reads the rows as the first left them (PostgreSQL re-checks a locked row that changed).
 * In ID order, so two lockers never hold part of the set each. `FOR NO KEY UPDATE`, not `FOR
 * UPDATE`: sign-ins (a session row pointing at the user) take a key share lock and need not wait.
 */
export function lockActiveManagers(
  trx: Kysely<DB>,
  scope: TenantScope,
): Promise<{ id: string; role: Role }[]> {
  return trx
    .selectFrom('users')
    .select(['id', 'role'])
    .where('tenant_id', '=', scope.tenantId)
    .where('status', '=', 'active')
    .where('role', 'in', KEY_MANAGING_ROLES)
    .orderBy('id')
    .forNoKeyUpdate()
    .execute();
}

/**
 * Locks the person's passkeys until the end of the transaction, first thing in the one that removes
 * them. A passkey sign-in updates its passkey, then its user; a removal that took the user first
 * and the passkeys after (the cascade of its delete) would wait for that sign-in while it waits for
 * the removal: a deadlock, one of them a 500. Taken first, the sign-in waits for the removal and
 * then finds its passkey gone (`401 invalid_credentials`).
 */
export async function lockPasskeysOf(trx: Kysely<DB>, scope: TenantScope, userId: string): Promise<void> {
  await trx
    .selectFrom('passkeys')
    .select('id')
    .where('tenant_id', '=', scope.tenantId)
    .where('user_id', '=', userId)
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** The person, locked until the end of the transaction (taken after `lockActiveManagers`). */
export function lockPersonRow(
  trx: Kysely<DB>,
  scope: TenantScope,
  userId: string,
): Promise<{ id: string; email: string; role: Role; status: 'active' | 'invited' } | undefined> {
  return trx
    .selectFrom('users')
    .select(['id', 'email', 'role', 'status'])
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', userId)
    .forNoKeyUpdate()
    .executeTakeFirst();
}

/** The address of an invited person of the tenant; undefined when they are not (any more) invited. */
export async function invitedEmailRow(
  trx: Kysely<DB>,
  scope: TenantScope,
  userId: string,
): Promise<string | undefined> {
  const row = await trx
    .selectFrom('users')
    .select('email')
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', userId)
    .where('status', '=', 'invited')
    .executeTakeFirst();
  return row?.email;
}

/**
 * Locks the invited person an accept is for, until the end of the transaction, before their
 * invitation is used; false when they are not (any more) an invited person. The person first, then
 * their invitation: the order a removal (the user, then what cascades from it) and a new link (the
 * person, then their invitations) take them in, so an accept racing either waits for it instead of
 * deadlocking. By ID alone: the token named them, as a session token names its user.
 */
export async function lockInvitedPersonRow(trx: Kysely<DB>, userId: string): Promise<boolean> {
  const row = await trx
    .selectFrom('users')
    .select('id')
    .where('id', '=', userId)
    .where('status', '=', 'invited')
    .forNoKeyUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

export type InvitationRow = Selectable<InvitationsTable>;

/** Deletes the person's invitations: no link made for them works any more. */
export async function deleteInvitationRows(
  trx: Kysely<DB>,
  scope: TenantScope,
  userId: string,
): Promise<void> {
  await trx
    .deleteFrom('invitations')
    .where('tenant_id', '=', scope.tenantId)
    .where('user_id', '=', userId)
    .execute();
}

/** A new invitation for the person; the ones made before for them are deleted: one link works. */
export async function replaceInvitationRow(
  trx: Kysely<DB>,
  scope: TenantScope,
  row: Omit<InvitationRow, 'tenant_id' | 'used_at'>,
): Promise<void> {
  await deleteInvitationRows(trx, scope, row.user_id);
  await trx
    .insertInto('invitations')
    .values({ ...row, tenant_id: scope.tenantId })
    .execute();
}

/**
 * How many invitations of the tenant are pending (unused, unexpired) at `now`, leaving out those of
 * `exceptUserId` (whose link a new one replaces). Counted in the transaction that adds one, under
 * the tenant's people lock (`lockActiveManagers`), so two invitations at the last place see each other.
 */
export async function countPendingInvitationRows(
  trx: Kysely<DB>,
  scope: TenantScope,
  now: Date,
  exceptUserId?: string,
): Promise<number> {
  let query = trx
    .selectFrom('invitations')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('tenant_id', '=', scope.tenantId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now);
  if (exceptUserId !== undefined) query = query.where('user_id', '!=', exceptUserId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface LinksMade {
  count: number;
  /** The first of them, from which the window's end is reckoned; null when none. */
  oldest: Date | null;
}

/** The links the tenant made since `since`: all of them, and those for `email`. */
export async function linksMadeSinceRows(
  trx: Kysely<DB>,
  scope: TenantScope,
  since: Date,
  email: string,
): Promise<{ tenant: LinksMade; address: LinksMade }> {
  const row = await trx
    .selectFrom('invitation_links')
    .select([
      sql<number>`count(*)::int`.as('n'),
      sql<Date | null>`min(made_at)`.as('oldest'),
      sql<number>`(count(*) filter (where email = ${email}))::int`.as('n_address'),
      sql<Date | null>`min(made_at) filter (where email = ${email})`.as('oldest_address'),
    ])
    .where('tenant_id', '=', scope.tenantId)
    .where('made_at', '>', since)
    .executeTakeFirstOrThrow();
  const at = (value: Date | string | null) => (value === null ? null : new Date(value));
  return {
    tenant: { count: Number(row.n), oldest: at(row.oldest) },
    address: { count: Number(row.n_address), oldest: at(row.oldest_address) },
  };
}

/**
 * Notes a link made for `email`, and forgets the tenant's links made before `forgetBefore`: the
 * table holds at most an hour of each tenant's links, with no sweeper.
 */
export async function recordInvitationLinkRow(
  trx: Kysely<DB>,
  scope: TenantScope,
  email: string,
  at: Date,
  forgetBefore: Date,
): Promise<void> {
  await trx
    .deleteFrom('invitation_links')
    .where('tenant_id', '=', scope.tenantId)
    .where('made_at', '<=', forgetBefore)
    .execute();
  await trx
    .insertInto('invitation_links')
    .values({ tenant_id: scope.tenantId, email, made_at: at })
    .execute();
}

export interface LiveInvitation {
  userId: string;
  tenantId: string;
  email: string;
  tenantName: string;
  expiresAt: Date;
  /** An active user (of any tenant) holds the address now: the invitation can never be accepted. */
  addressTaken: boolean;
}

/** The invitation behind a token hash, while it is unused and unexpired, with its person and tenant. */
export async function findLiveInvitationRow(
  db: Kysely<DB>,
  tokenHash: string,
  now: Date,
): Promise<LiveInvitation | undefined> {
  const row = await db
    .selectFrom('invitations as i')
    .innerJoin('users as u', 'u.id', 'i.user_id')
    .innerJoin('tenants as t', 't.id', 'i.tenant_id')
    .select(['i.user_id', 'i.tenant_id', 'i.expires_at', 'u.email', 't.name'])
    .select(
      sql<boolean>`exists (select 1 from users a where a.email = u.email and a.status = 'active')`.as(
        'address_taken',
      ),
    )
    .where('i.token_hash', '=', tokenHash)
    .where('i.used_at', 'is', null)
    .where('i.expires_at', '>', now)
    .where('u.status', '=', 'invited')
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    userId: row.user_id,
    tenantId: row.tenant_id,
    email: row.email,
    tenantName: row.name,
    expiresAt: new Date(row.expires_at),
    addressTaken: row.address_taken,
  };
}

/**
 * Uses the invitation up: the one statement that finds it unused and unexpired also marks it
 * used, so of two requests presenting the same token exactly one gets it back.
 */
export function useInvitationRow(
  trx: Kysely<DB>,
  tokenHash: string,
  now: Date,
): Promise<{ user_id: string; tenant_id: string } | undefined> {
  return trx
    .updateTable('invitations')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['user_id', 'tenant_id'])
    .executeTakeFirst();
}
