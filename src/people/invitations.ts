import type { Kysely } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import { randomBase62 } from '../crypto/base62.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import {
  activateInvitedRow,
  findLiveInvitationRow,
  lockInvitedPersonRow,
  replaceInvitationRow,
  useInvitationRow,
  type LiveInvitation,
} from './store.js';

/** How long an invitation link works (docs/api/people.md). */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
const TOKEN_LENGTH = 32;
const TOKEN_SHAPE = new RegExp(`^[0-9A-Za-z]{${TOKEN_LENGTH}}$`);

/**
 * Only a keyed hash of a token is stored. The key is the one setup tokens are hashed with (the same
 * kind of secret: a one-time link), the input marked as an invitation's, so no setup token can
 * ever match an invitation's hash or the other way round.
 */
const hashOf = (keyring: Keyring, token: string): string =>
  keyring.hashToken('setup-token-hash', `invitation:${token}`);

/** The link: the token travels in the fragment, which browsers never send to a server. */
export const invitationUrl = (publicOrigin: string, token: string): string =>
  `${publicOrigin}/invite#token=${token}`;

export interface NewInvitation {
  token: string;
  url: string;
  expiresAt: Date;
}

/**
 * A new invitation link for an invited person, written with `trx` (the transaction of the change
 * that invites them); any link made before for them stops working.
 */
export async function issueInvitation(
  trx: Kysely<DB>,
  keyring: Keyring,
  publicOrigin: string,
  scope: TenantScope,
  userId: string,
  at: Date,
): Promise<NewInvitation> {
  const token = randomBase62(TOKEN_LENGTH);
  const expiresAt = new Date(at.getTime() + INVITATION_LIFETIME_MS);
  await replaceInvitationRow(trx, scope, {
    token_hash: hashOf(keyring, token),
    user_id: userId,
    created_at: at,
    expires_at: expiresAt,
  });
  return { token, url: invitationUrl(publicOrigin, token), expiresAt };
}

/** The invitation a token names while it is unused and unexpired; undefined for anything else. */
export async function findInvitation(
  db: Kysely<DB>,
  keyring: Keyring,
  token: string,
  now: Date,
): Promise<LiveInvitation | undefined> {
  // The shape check spares a lookup: what cannot be a token is no invitation.
  if (!TOKEN_SHAPE.test(token)) return undefined;
  return findLiveInvitationRow(db, hashOf(keyring, token), now);
}

/**
 * Locks the invited person `userId` (the one a live invitation named) for the transaction that
 * accepts it, before the invitation is used (see `lockInvitedPersonRow`); false when they are not
 * invited any more (removed, or accepted meanwhile).
 */
export const lockInvitedPerson = (trx: Kysely<DB>, userId: string): Promise<boolean> =>
  lockInvitedPersonRow(trx, userId);

/**
 * Uses the invitation a token names, once: the person and tenant it was for, or undefined when it
 * is unknown, used or expired. Written with `trx`, the transaction that signs the person in.
 */
export async function useInvitation(
  trx: Kysely<DB>,
  keyring: Keyring,
  token: string,
  now: Date,
): Promise<{ userId: string; tenantId: string } | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const used = await useInvitationRow(trx, hashOf(keyring, token), now);
  return used && { userId: used.user_id, tenantId: used.tenant_id };
}

/** The invited person becomes active with the password they chose; false when they are not invited. */
export const activateInvitedUser = (
  trx: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  passwordHash: string,
): Promise<boolean> => activateInvitedRow(trx, scope, userId, passwordHash);
