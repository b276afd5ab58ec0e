import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import { signInScopeOf, type TenantScope } from '../access/scope.js';
import { clearFailures, reserveSignInAttempt, SIGN_IN_FAILURE_WINDOW_MS } from '../access/session-store.js';
import { startSession } from '../access/sessions.js';
import type { AppContext } from '../context.js';
import { decoyPasswordHash, verifyPassword } from '../crypto/passwords.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import { findUserForSignIn, normalizeEmail, type User } from '../tenants/tenants.js';

const MAX_FAILURES = 10;

/**
 * Reserves one check of a secret guessed for `account` (a password; a setup token, §13), counted as
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
  });
}

/** Forgets the failures of `account`, with `db` the transaction of the success that clears them. */
export const clearAttempts = (db: Kysely<DB>, account: string): Promise<void> => clearFailures(db, account);

export interface SignedIn {
  user: User;
  /** The signed-in user's tenant: what the sign-in answer reads its tenant with. */
  scope: TenantScope;
  sessionId: string;
  token: string;
  expiresAt: Date;
}

/**
 * Password sign-in (contract §4). An unknown address and a wrong password get the same answer in
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
  // the count first (contract §14); a success clears it with the other failures.
  await reserveAttempt(ctx.db, account, now, 'Too many failed sign-ins for this account; try again later.');

  const user = await findUserForSignIn(ctx, account);
  const hash = user?.passwordHash ?? null;
  const ok = await verifyPassword(hash ?? (await decoyPasswordHash()), input.password);
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
  // A correct password of a user who signs in with passkeys only (contract §10). It stays counted
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
  return ctx.db.transaction().execute(async (trx) => {
    await clearAttempts(trx, account);
    return startSignedInSession(trx, ctx, scope, origin, user, 'password');
  });
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
