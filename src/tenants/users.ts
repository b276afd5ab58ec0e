import type { Kysely } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DB, Role } from '../db/schema.js';
import {
  activateInvitedRow,
  deleteUserRow,
  setLastSignInRow,
  setPasswordSignInRow,
  setRoleRow,
  userHandleRow,
} from './store.js';

// The changes other folders make to a user: `users` is this folder's table (src/db/owners.ts), so
// sign-in, passkeys and people change it through these (decision 0071). Each writes with `db`, the
// caller's transaction, which holds the locks the caller's rule needs and the other writes of the
// change (its audit row, its sessions), as it did when the caller wrote the row itself.

/**
 * When a session of the user last started: what the tenant's people list shows (docs/api/people.md).
 * Locks the user's row; answers, from it, whether the user may sign in with a password now, or
 * undefined when the user is gone (removed while they were signing in).
 */
export function recordSignIn(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  at: Date,
): Promise<{ passwordSignIn: boolean } | undefined> {
  return setLastSignInRow(db, scope, userId, at);
}

/** The user's WebAuthn handle, `fresh` made theirs if they had none (the first of two offers wins). */
export function userHandleOf(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  fresh: string,
): Promise<string> {
  return userHandleRow(db, scope, userId, fresh);
}

/** Turns the user's password sign-in on or off (docs/api/passkeys.md: passkeys decide when it may be off). */
export function setPasswordSignIn(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  enabled: boolean,
): Promise<void> {
  return setPasswordSignInRow(db, scope, userId, enabled);
}

/** Gives the user another role (people/ decides who may, under its lock of the tenant's managers). */
export function setUserRole(trx: Kysely<DB>, scope: TenantScope, userId: string, role: Role): Promise<void> {
  return setRoleRow(trx, scope, userId, role);
}

/** Deletes the user; their sessions, passkeys and invitations go with them (foreign keys cascade). */
export function deleteUser(trx: Kysely<DB>, scope: TenantScope, userId: string): Promise<void> {
  return deleteUserRow(trx, scope, userId);
}

/**
 * Makes an invited user active with the password they chose; false when they are not (any more) an
 * invited user of the tenant. The caller has claimed their address (`claimEmailAddress`).
 */
export function makeInvitedUserActive(
  trx: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  passwordHash: string,
): Promise<boolean> {
  return activateInvitedRow(trx, scope, userId, passwordHash);
}
