import type { Kysely } from 'kysely';
import type { PortalPrincipal } from '../access/principal.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { createTokenRowCache, memoizedTokenHash } from '../keys/token-cache.js';
import { portalTokenHashOf } from './sessions.js';
import { findPortalSessionByTokenHash, type PortalSessionForVerification } from './store.js';

export interface PortalTokenVerifier {
  /** A promise only when the session's row must be read: an answer from the cache comes without one. */
  verify(token: string, now: Date): Promise<PortalPrincipal | null> | PortalPrincipal | null;
  /** Drops cached answers for a session at once (this process revoked it, or changed its connections). */
  forget(sessionId: string): void;
}

/** What a session's row grants at `now`: nothing once it is revoked or past its end. Pure. */
export function portalPrincipalOf(found: PortalSessionForVerification, now: Date): PortalPrincipal | null {
  const { row, entitlements } = found;
  const expiresAt = new Date(row.expires_at);
  if (row.revoked_at || expiresAt <= now) return null;
  return {
    kind: 'portal',
    sessionId: row.id,
    tenantId: row.tenant_id,
    subject: row.subject,
    access: row.access,
    connectionIds: row.connection_ids,
    entitlements,
    expiresAt,
  };
}

/**
 * Checks `ptl_` tokens as tenant keys are checked (keys/key-verifier.ts): a session's row is trusted
 * for `cacheTtlMs`, half of the second within which a revocation must reach every process
 * (docs/api/portal.md), so a process that never hears of it stops trusting the token in time.
 * The expiry is checked on every request, cached row or not.
 */
export function createPortalTokenVerifier(
  db: Kysely<DB>,
  keyring: Keyring,
  cacheTtlMs: number,
): PortalTokenVerifier {
  const tokenHash = memoizedTokenHash('ptl_', (token) => portalTokenHashOf(keyring, token));
  const sessions = createTokenRowCache((hash) => findPortalSessionByTokenHash(db, hash), cacheTtlMs);

  const grant = (found: PortalSessionForVerification | undefined, now: Date) =>
    found ? portalPrincipalOf(found, now) : null;

  return {
    verify(token, now) {
      const hash = tokenHash(token);
      if (hash === null) return null;
      const found = sessions.lookup(hash, Date.now());
      return found instanceof Promise ? found.then((row) => grant(row, now)) : grant(found, now);
    },
    forget: sessions.forget,
  };
}
