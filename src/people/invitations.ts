import type { Kysely } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import { randomBase62 } from '../crypto/base62.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import { claimEmailAddress } from '../tenants/tenants.js';
import { makeInvitedUserActive } from '../tenants/users.js';
import {
  countPendingInvitationRows,
  findLiveInvitationRow,
  invitedEmailRow,
  linksMadeSinceRows,
  lockInvitedPersonRow,
  recordInvitationLinkRow,
  replaceInvitationRow,
  useInvitationRow,
  type LinksMade,
  type LiveInvitation,
} from './store.js';

/** How long an invitation link works (docs/api/people.md). */
export const INVITATION_LIFETIME_MS = 7 * 24 * 60 * 60 * 1000;
/** Pending (unused, unexpired) invitations a tenant may hold at once (docs/api/people.md). */
export const MAX_PENDING_INVITATIONS = 100;
/**
 * Links a tenant may make within an hour, and for one address within an hour: each is an e-mail
 * when SMTP_URL is set (docs/decisions/0062-pending-invitations-reserve-nothing.md).
 */
export const LINKS_PER_TENANT_PER_HOUR = 100;
export const LINKS_PER_ADDRESS_PER_HOUR = 3;
const LINK_WINDOW_MS = 60 * 60 * 1000;
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

const overRate = (what: string, made: LinksMade, at: Date): HttpProblem => {
  const freeAt = (made.oldest ?? at).getTime() + LINK_WINDOW_MS;
  return new HttpProblem('rate_limited', `${what}; try again later.`, {
    headers: { 'retry-after': String(Math.max(1, Math.ceil((freeAt - at.getTime()) / 1000))) },
  });
};

/**
 * Refuses a new link for `email` when the tenant holds its most pending invitations (409; the link
 * `replacing` a person's own pending one takes no new place), or made its most links within the
 * hour, in all or for this address (429 with Retry-After: when the oldest of them leaves the hour).
 * Run in the transaction that makes the link, under the tenant's people lock (`underPeopleLock`):
 * two requests at the last place wait for each other and the second sees the first's invitation.
 */
export async function checkRoomForLink(
  trx: Kysely<DB>,
  scope: TenantScope,
  email: string,
  at: Date,
  replacing?: string,
): Promise<void> {
  if ((await countPendingInvitationRows(trx, scope, at, replacing)) >= MAX_PENDING_INVITATIONS)
    throw new HttpProblem(
      'conflict',
      `The organization has ${MAX_PENDING_INVITATIONS} pending invitations, the most it may have. ` +
        'Remove people who have not accepted yet, or wait until they accept or their links expire.',
    );
  const made = await linksMadeSinceRows(trx, scope, new Date(at.getTime() - LINK_WINDOW_MS), email);
  if (made.tenant.count >= LINKS_PER_TENANT_PER_HOUR)
    throw overRate(
      `The organization made ${LINKS_PER_TENANT_PER_HOUR} invitation links within the hour`,
      made.tenant,
      at,
    );
  if (made.address.count >= LINKS_PER_ADDRESS_PER_HOUR)
    throw overRate(
      `This address was sent ${LINKS_PER_ADDRESS_PER_HOUR} invitation links within the hour`,
      made.address,
      at,
    );
}

/**
 * A new invitation link for an invited person (`email`), written with `trx` (the transaction of the
 * change that invites them, which checked `checkRoomForLink`); any link made before for them stops
 * working. The link is noted for the rate of links.
 */
export async function issueInvitation(
  trx: Kysely<DB>,
  keyring: Keyring,
  publicOrigin: string,
  scope: TenantScope,
  person: { userId: string; email: string },
  at: Date,
): Promise<NewInvitation> {
  const token = randomBase62(TOKEN_LENGTH);
  const expiresAt = new Date(at.getTime() + INVITATION_LIFETIME_MS);
  await replaceInvitationRow(trx, scope, {
    token_hash: hashOf(keyring, token),
    user_id: person.userId,
    created_at: at,
    expires_at: expiresAt,
  });
  await recordInvitationLinkRow(trx, scope, person.email, at, new Date(at.getTime() - LINK_WINDOW_MS));
  return { token, url: invitationUrl(publicOrigin, token), expiresAt };
}

/**
 * The invitation a token names while it is unused and unexpired; undefined for anything else. An
 * invitation whose address an active user holds now (another tenant's invitation accepted first,
 * or the platform's user) is used up here, unanswered: it can never make its person, and must not
 * come back to life should that user be removed.
 */
export async function findInvitation(
  db: Kysely<DB>,
  keyring: Keyring,
  token: string,
  now: Date,
): Promise<Omit<LiveInvitation, 'addressTaken'> | undefined> {
  // The shape check spares a lookup: what cannot be a token is no invitation.
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const tokenHash = hashOf(keyring, token);
  const found = await findLiveInvitationRow(db, tokenHash, now);
  if (!found?.addressTaken) return found;
  await useInvitationRow(db, tokenHash, now);
  return undefined;
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

/**
 * The invited person becomes active with the password they chose; false when they are not invited,
 * or when an active user holds their address by now (a pending invitation reserves nothing: the
 * first one accepted makes the user). The address is locked first, so that of two accepts for one
 * address in two tenants the second waits and then finds it taken, instead of failing at the index.
 */
export async function activateInvitedUser(
  trx: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  passwordHash: string,
): Promise<boolean> {
  const email = await invitedEmailRow(trx, scope, userId);
  if (email === undefined || !(await claimEmailAddress(trx, email, userId))) return false;
  return makeInvitedUserActive(trx, scope, userId, passwordHash);
}
