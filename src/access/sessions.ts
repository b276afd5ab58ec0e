import type { Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import { randomBase62 } from '../crypto/base62.js';
import { newId } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import type { SessionPrincipal } from './principal.js';
import type { TenantScope } from './scope.js';
import {
  findLiveSession,
  insertSession,
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
 * A new server-side session, written with `db`; the token goes to the cookie and only its hash is
 * stored. Only for a user whose row `db` has locked already, by recording the sign-in on it:
 * sign-in's `startSession` (src/sign-in/sign-in.ts) does both, in that order.
 */
export async function createSession(
  db: Kysely<DB>,
  ctx: AppContext,
  scope: TenantScope,
  userId: string,
  authMethod: string,
  at: Date,
): Promise<{ sessionId: string; token: string; expiresAt: Date }> {
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
