import type { AppContext } from '../context.js';
import { decoyPasswordHash, verifyPassword } from '../crypto/passwords.js';
import { HttpProblem } from '../http/problem.js';
import { findUserForSignIn, normalizeEmail, type User } from '../tenants/tenants.js';
import { type AuditOrigin, recordAudit } from './audit.js';
import { clearFailures, reserveSignInAttempt } from './session-store.js';
import { startSession } from './sessions.js';

/** How long a failed sign-in counts against its account (contract §4). */
export const SIGN_IN_FAILURE_WINDOW_MS = 15 * 60 * 1000;
const MAX_FAILURES = 10;

export interface SignedIn {
  user: User;
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
  const reservation = await reserveSignInAttempt(
    ctx.db,
    account,
    now,
    new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS),
    MAX_FAILURES,
  );
  if (!reservation.reserved) {
    const unlockAt = (reservation.oldestFailure?.getTime() ?? now.getTime()) + SIGN_IN_FAILURE_WINDOW_MS;
    throw new HttpProblem('rate_limited', 'Too many failed sign-ins for this account; try again later.', {
      headers: { 'retry-after': String(Math.max(1, Math.ceil((unlockAt - now.getTime()) / 1000))) },
    });
  }

  const user = await findUserForSignIn(ctx, account);
  const usable = user?.passwordSignInEnabled && user.passwordHash ? user.passwordHash : null;
  const ok = await verifyPassword(usable ?? (await decoyPasswordHash()), input.password);
  if (!user || !usable || !ok) {
    await recordAudit(ctx.db, origin, {
      action: 'sign_in.failure',
      tenantId: user?.tenantId ?? null,
      targetType: user ? 'user' : undefined,
      targetId: user?.id,
      metadata: { email: account, method: 'password' },
    });
    throw new HttpProblem('invalid_credentials', 'The e-mail address or password is wrong.');
  }

  return ctx.db.transaction().execute(async (trx) => {
    await clearFailures(trx, account);
    const session = await startSession(trx, ctx, user, 'password', now);
    await recordAudit(
      trx,
      { ...origin, actorType: 'user', actorId: user.id },
      {
        action: 'sign_in.success',
        tenantId: user.tenantId,
        targetType: 'session',
        targetId: session.sessionId,
        metadata: { email: user.email, method: 'password' },
      },
    );
    return {
      user: { id: user.id, email: user.email, role: user.role, tenantId: user.tenantId },
      ...session,
    };
  });
}
