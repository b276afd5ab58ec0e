import type { Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import { randomBase62 } from '../crypto/base62.js';
import { newId } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import type { SessionPrincipal } from './principal.js';
import type { TenantScope } from './scope.js';
import {
  findLiveSession,
  insertSession,
  recordSignInTime,
  revokeSessionRow,
  revokeUserSessionRows,
  touchSession,
} from './session-store.js';

// Failed sign-ins counted per account (docs/api/authentication.md): sign-in reserves a check before
// a guessed secret is verified and clears the failures on a success (sign-in/sign-in.ts).
export {
  clearFailures,
  releaseReservation,
  reserveSignInAttempt,
  SIGN_IN_FAILURE_WINDOW_MS,
  type SignInReservation,
} from './session-store.js';

export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
// Idle expiry is tracked to the minute: last_seen_at is written at most once a minute per session.
const TOUCH_INTERVAL_MS = 60 * 1000;

/**
 * A new server-side session; the token goes to the cookie and only its hash is stored. The user's
 * last sign-in becomes `at`, in the same transaction (`db`), before the session is written, which
 * locks the user's row first and their sessions after: the order a removal and turning password
 * sign-in off take them in (docs/decisions/0049-people-invitations-and-the-last-manager.md). So
 * either waits for a sign-in under way, or the sign-in for it: a user removed meanwhile is
 * `401 invalid_credentials` (not a session row pointing at nobody, a 500), and a password session
 * of a user who turned password sign-in off meanwhile is `403 password_sign_in_disabled`, checked
 * here on the locked row, not on the one read before the password was.
 */
export async function startSession(
  db: Kysely<DB>,
  ctx: AppContext,
  scope: TenantScope,
  userId: string,
  authMethod: string,
  at: Date,
): Promise<{ sessionId: string; token: string; expiresAt: Date }> {
  const user = await recordSignInTime(db, scope, userId, at);
  if (!user) throw new HttpProblem('invalid_credentials', 'This account was removed while signing in.');
  if (authMethod === 'password' && !user.passwordSignIn)
    throw new HttpProblem(
      'password_sign_in_disabled',
      'Password sign-in is turned off for this account: sign in with a passkey.',
    );
  const token = randomBase62(43);
  const sessionId = newId('ses');
  const expiresAt = new Date(at.getTime() + SESSION_ABSOLUTE_MS);
  await insertSession(db, scope, {
    id: sessionId,
    token_hash: ctx.keyring.hashToken('session-hash', token),
    user_id: userId,
    auth_method: authMethod,
    created_at: at,
    last_seen_at: at,
    expires_at: expiresAt,
    revoked_at: null,
  });
  return { sessionId, token, expiresAt };
}

/** The principal of a session cookie, or null when the session is unknown, revoked or expired. */
export async function resolveSession(
  ctx: AppContext,
  token: string,
  now: Date,
): Promise<SessionPrincipal | null> {
  if (!/^[0-9A-Za-z]{43}$/.test(token)) return null;
  const session = await findLiveSession(
    ctx.db,
    ctx.keyring.hashToken('session-hash', token),
    now,
    new Date(now.getTime() - SESSION_IDLE_MS),
  );
  if (!session) return null;
  if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS)
    await touchSession(ctx.db, session.id, now);
  return {
    kind: 'session',
    sessionId: session.id,
    userId: session.userId,
    email: session.email,
    role: session.role,
    tenantId: session.tenantId,
    entitlements: session.entitlements,
    authMethod: session.authMethod,
  };
}

export function endSession(ctx: AppContext, scope: TenantScope, sessionId: string, at: Date): Promise<void> {
  return revokeSessionRow(ctx.db, scope, sessionId, at);
}

/**
 * Ends a user's sessions at once (every request reads its session from the database): those that
 * started with `authMethod` when it is given, all but `exceptSessionId` when it is given. Answers
 * how many ended; `db` is the transaction of the change that ends them.
 */
export function endUserSessions(
  db: Kysely<DB>,
  scope: TenantScope,
  userId: string,
  at: Date,
  which: { authMethod?: string; exceptSessionId?: string } = {},
): Promise<number> {
  return revokeUserSessionRows(db, scope, userId, at, which);
}
