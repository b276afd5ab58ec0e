import { hash as sha256 } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { PortalPrincipal } from '../access/principal.js';
import { isWellFormedToken } from '../crypto/api-tokens.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { portalTokenHashOf } from './sessions.js';
import { findPortalSessionByTokenHash, type PortalSessionForVerification } from './store.js';

const MAX_CACHED = 10_000;

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

/** The keyed hash of a well-formed token, memoized by a plain SHA-256 so the memo holds no secret. */
function memoizedTokenHash(keyring: Keyring): (token: string) => string | null {
  const hashes = new Map<string, string>();
  return (token) => {
    const fingerprint = sha256('sha256', token, 'base64');
    let hash = hashes.get(fingerprint);
    if (hash === undefined) {
      if (!isWellFormedToken('ptl_', token)) return null;
      hash = portalTokenHashOf(keyring, token);
      if (hashes.size >= MAX_CACHED) hashes.clear();
      hashes.set(fingerprint, hash);
    }
    return hash;
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
  const tokenHash = memoizedTokenHash(keyring);
  const cache = new Map<string, { found: PortalSessionForVerification | undefined; fetchedAt: number }>();
  const inFlight = new Map<string, Promise<PortalSessionForVerification | undefined>>();
  // Bumped by forget(): a lookup that started before a revocation here must not cache what it read.
  let generation = 0;

  async function fetchAndCache(hash: string): Promise<PortalSessionForVerification | undefined> {
    const fetchedAt = Date.now();
    const startedIn = generation;
    try {
      const found = await findPortalSessionByTokenHash(db, hash);
      if (startedIn !== generation) return found;
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(hash, { found, fetchedAt });
      return found;
    } finally {
      inFlight.delete(hash);
    }
  }

  function lookup(
    hash: string,
  ): Promise<PortalSessionForVerification | undefined> | PortalSessionForVerification | undefined {
    const hit = cache.get(hash);
    if (hit && Date.now() - hit.fetchedAt < cacheTtlMs) return hit.found;
    let pending = inFlight.get(hash);
    if (!pending) {
      pending = fetchAndCache(hash);
      inFlight.set(hash, pending);
    }
    return pending;
  }

  const grant = (found: PortalSessionForVerification | undefined, now: Date) =>
    found ? portalPrincipalOf(found, now) : null;

  return {
    verify(token, now) {
      const hash = tokenHash(token);
      if (hash === null) return null;
      const found = lookup(hash);
      return found instanceof Promise ? found.then((row) => grant(row, now)) : grant(found, now);
    },
    forget(sessionId) {
      for (const [hash, entry] of cache) if (entry.found?.row.id === sessionId) cache.delete(hash);
      generation += 1;
      inFlight.clear();
    },
  };
}
