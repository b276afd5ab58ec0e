import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { signInScopeOf, type TenantScope } from '../access/scope.js';
import {
  clearFailures,
  createSession,
  releaseReservation,
  reserveSignInAttempt,
  SIGN_IN_FAILURE_WINDOW_MS,
} from '../access/sessions.js';
import type { AppContext } from '../context.js';
import {
  decoyPasswordHash,
  hashPassword,
  isPasswordHashingBusy,
  verifyPassword,
} from '../crypto/passwords.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import {
  activateInvitedUser,
  findInvitation,
  lockInvitedPerson,
  useInvitation,
} from '../people/invitations.js';
import type { InvitationLookup } from '../people/schemas.js';
import { findUserById, findUserForSignIn, normalizeEmail, type User } from '../tenants/tenants.js';
import { recordSignIn } from '../tenants/users.js';

const MAX_FAILURES = 10;

/**
 * Reserves one check of a secret guessed for `account` (a password; a setup token, docs/operators/setup.md), counted as
 * a failure until a success clears it (`clearAttempts`): ten failures within 15 minutes and the
 * account answers `429 rate_limited`, with Retry-After, until the oldest of them leaves the window.
 */
export async function reserveAttempt(
  db: Kysely<DB>,
  account: string,
  now: Date,
  tooMany: string,
): Promise<void> {
  const reservation = await reserveSignInAttempt(
    db,
    account,
    now,
    new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS),
    MAX_FAILURES,
  );
  if (reservation.reserved) return;
  const unlockAt = (reservation.oldestFailure?.getTime() ?? now.getTime()) + SIGN_IN_FAILURE_WINDOW_MS;
  throw new HttpProblem('rate_limited', tooMany, {
    headers: { 'retry-after': String(Math.max(1, Math.ceil((unlockAt - now.getTime()) / 1000))) },
    limit: { policy: 'sign-in', quota: MAX_FAILURES, windowSeconds: SIGN_IN_FAILURE_WINDOW_MS / 1000 },
  });
}

/** Forgets the failures of `account`, with `db` the transaction of the success that clears them. */
export const clearAttempts = (db: Kysely<DB>, account: string): Promise<void> => clearFailures(db, account);

/**
 * Runs `check` (a password hash or verification) for the attempt reserved for `account` at `now`.
 * When the process's bound on hashing refuses it (503), nothing was checked: the reservation is
 * given back, so a burst of load cannot lock an account out.
 */
async function hashingFor<T>(
  db: Kysely<DB>,
  account: string,
  now: Date,
  check: () => Promise<T>,
): Promise<T> {
  try {
    return await check();
  } catch (error) {
    if (isPasswordHashingBusy(error)) await releaseReservation(db, account, now);
    throw error;
  }
}

export interface SignedIn {
  user: User;
  /** The signed-in user's tenant: what the sign-in answer reads its tenant with. */
  scope: TenantScope;
  sessionId: string;
  token: string;
  expiresAt: Date;
}

/**
 * Password sign-in (docs/api/authentication.md). An unknown address and a wrong password get the same answer in
 * about the same time (a decoy hash is verified); ten failures for one address within 15 minutes
 * lock that address, known or not, so the lock does not reveal which addresses exist.
 */
export async function signInWithPassword(
  ctx: AppContext,
  origin: AuditOrigin,
  input: { email: string; password: string },
): Promise<SignedIn> {
  const account = normalizeEmail(input.email);
  const now = origin.at;
  // The check is reserved before the password is verified, so concurrent guesses cannot all pass
  // the count first (docs/api/limits.md); a success clears it with the other failures.
  await reserveAttempt(ctx.db, account, now, 'Too many failed sign-ins for this account; try again later.');

  const user = await findUserForSignIn(ctx, account);
  const hash = user?.passwordHash ?? null;
  const ok = await hashingFor(ctx.db, account, now, async () =>
    verifyPassword(hash ?? (await decoyPasswordHash()), input.password),
  );
  const refuse = async (reason: string) =>
    recordAudit(ctx.db, origin, {
      action: 'sign_in.failure',
      tenantId: user?.tenantId ?? null,
      targetType: user ? 'user' : undefined,
      targetId: user?.id,
      metadata: { email: account, method: 'password', reason },
    });
  if (!user || !hash || !ok) {
    await refuse('invalid_credentials');
    throw new HttpProblem('invalid_credentials', 'The e-mail address or password is wrong.');
  }
  // A correct password of a user who signs in with passkeys only (docs/api/passkeys.md). It stays counted
  // as a failure: the answer tells a guesser the password was right, so guessing stays limited.
  if (!user.passwordSignInEnabled) {
    await refuse('password_sign_in_disabled');
    throw new HttpProblem(
      'password_sign_in_disabled',
      'Password sign-in is turned off for this account: sign in with a passkey.',
    );
  }

  // The password verified: the account's tenant is the one this sign-in acts for.
  const scope = signInScopeOf(user);
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      await clearAttempts(trx, account);
      return startSignedInSession(trx, ctx, scope, origin, user, 'password');
    });
  } catch (error) {
    // Turned off, or the user removed, while the password was being checked: startSession reads
    // the user's row again, locked.
    const late = error instanceof HttpProblem ? error.code : undefined;
    if (late === 'password_sign_in_disabled' || late === 'invalid_credentials') await refuse(late);
    throw error;
  }
}

/**
 * A new session of the user, written by `trx`. The user's last sign-in becomes `at` first, which
 * locks the user's row before the session is written, so their row first and their sessions after:
 * the order a removal and turning password sign-in off take them in
 * (docs/decisions/0049-people-invitations-and-the-last-manager.md). So either waits for a sign-in
 * under way, or the sign-in for it: a user removed meanwhile is `401 invalid_credentials` (not a
 * session row pointing at nobody, a 500), and a password session of a user who turned password
 * sign-in off meanwhile is `403 password_sign_in_disabled`, checked here on the locked row, not on
 * the one read before the password was. First-run setup starts its first session with it too.
 */
export async function startSession(
  trx: Kysely<DB>,
  ctx: AppContext,
  scope: TenantScope,
  userId: string,
  authMethod: string,
  at: Date,
): Promise<{ sessionId: string; token: string; expiresAt: Date }> {
  const user = await recordSignIn(trx, scope, userId, at);
  if (!user) throw new HttpProblem('invalid_credentials', 'This account was removed while signing in.');
  if (authMethod === 'password' && !user.passwordSignIn)
    throw new HttpProblem(
      'password_sign_in_disabled',
      'Password sign-in is turned off for this account: sign in with a passkey.',
    );
  return createSession(trx, ctx, scope, userId, authMethod, at);
}

/**
 * The end of every successful sign-in (password, passkey, single sign-on): a new session and its
 * `sign_in.success` audit entry, written by `trx`, the transaction of whatever else the sign-in changes.
 */
export async function startSignedInSession(
  trx: Kysely<DB>,
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  user: User,
  method: string,
  metadata: Record<string, unknown> = {},
): Promise<SignedIn> {
  const session = await startSession(trx, ctx, scope, user.id, method, origin.at);
  await recordAudit(
    trx,
    { ...origin, actorType: 'user', actorId: user.id },
    {
      action: 'sign_in.success',
      tenantId: scope.tenantId,
      targetType: 'session',
      targetId: session.sessionId,
      metadata: { email: user.email, method, ...metadata },
    },
  );
  return {
    user: { id: user.id, email: user.email, role: user.role, tenantId: scope.tenantId },
    scope,
    ...session,
  };
}

const invalidInvitation = (): HttpProblem =>
  new HttpProblem('invalid_credentials', 'This invitation link is wrong, used or expired.');
const TOO_MANY_INVITATION_TRIES = 'Too many wrong invitation links from this address; try again later.';

/**
 * What an invitation link is for, before the person chooses a password (docs/api/people.md).
 * `throttleKey` names the client (its address bucket): wrong tokens count as sign-in failures do,
 * ten within 15 minutes and it gets 429; a token that works is not counted.
 */
export async function lookUpInvitation(
  ctx: AppContext,
  now: Date,
  throttleKey: string,
  token: string,
): Promise<InvitationLookup> {
  await reserveAttempt(ctx.db, throttleKey, now, TOO_MANY_INVITATION_TRIES);
  const found = await findInvitation(ctx.db, ctx.keyring, token, now);
  if (!found) throw invalidInvitation();
  await releaseReservation(ctx.db, throttleKey, now);
  return { email: found.email, tenant: { name: found.tenantName }, expiresAt: found.expiresAt.toISOString() };
}

/** Thrown inside the transaction of an accept to undo it: the invitation was not usable after all. */
class InvitationRefused extends Error {}

/**
 * Accepting an invitation (docs/api/people.md) is the invited person's first sign-in: the link is
 * used up, they become `active` with the password they chose, and a password session starts, all
 * in one transaction. An unknown, used or expired token is `401 invalid_credentials`, counted per
 * client address as `lookUpInvitation` counts; the password is hashed only for a live invitation.
 */
export async function signInWithInvitation(
  ctx: AppContext,
  origin: AuditOrigin,
  throttleKey: string,
  input: { token: string; password: string },
): Promise<SignedIn> {
  const now = origin.at;
  await reserveAttempt(ctx.db, throttleKey, now, TOO_MANY_INVITATION_TRIES);
  const refuse = async () => {
    await recordAudit(ctx.db, origin, {
      action: 'sign_in.failure',
      tenantId: null,
      metadata: { method: 'invitation', reason: 'invalid_invitation' },
    });
    return invalidInvitation();
  };
  const found = await findInvitation(ctx.db, ctx.keyring, input.token, now);
  if (!found) throw await refuse();

  // Hashing is slow on purpose; done before the transaction so no connection waits on it.
  const passwordHash = await hashingFor(ctx.db, throttleKey, now, () => hashPassword(input.password));
  try {
    return await ctx.db.transaction().execute(async (trx) => {
      // The person before their invitation, as a removal or a new link takes them: the race with
      // either waits instead of deadlocking (docs/decisions/0049-people-invitations-and-the-last-manager.md).
      if (!(await lockInvitedPerson(trx, found.userId))) throw new InvitationRefused();
      const used = await useInvitation(trx, ctx.keyring, input.token, now);
      const user = used?.userId === found.userId ? await findUserById(trx, used.userId) : undefined;
      if (!user || user.status !== 'invited') throw new InvitationRefused();
      // The token verified and names this person: their tenant is the one this sign-in acts for.
      const scope = signInScopeOf(user);
      if (!(await activateInvitedUser(trx, scope, user.id, passwordHash))) throw new InvitationRefused();
      const actor: AuditOrigin = { ...origin, actorType: 'user', actorId: user.id };
      await recordAudit(trx, actor, {
        action: 'user.activate',
        tenantId: scope.tenantId,
        targetType: 'user',
        targetId: user.id,
        metadata: { email: user.email, role: user.role },
      });
      await clearAttempts(trx, throttleKey);
      return startSignedInSession(trx, ctx, scope, origin, user, 'password', { invitation: true });
    });
  } catch (error) {
    // Used or removed between the look and the transaction (a concurrent accept won).
    if (error instanceof InvitationRefused) throw await refuse();
    throw error;
  }
}
