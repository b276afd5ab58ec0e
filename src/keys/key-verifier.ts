import type { Kysely } from 'kysely';
import type { TenantKeyPrincipal } from '../access/principal.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { findApiKeyByHash, recordLastUsed, type KeyForVerification } from './tenant-store.js';
import { createLastUsedRecorder, createTokenRowCache, memoizedTokenHash } from './token-cache.js';

export interface KeyVerifierTimings {
  /** How long a looked-up key is trusted without asking the database again. */
  cacheTtlMs: number;
  /** How often the batched last-used times are written. */
  lastUsedFlushMs: number;
}

// Revocation and rotation must reach every process within 1 s (docs/api/authentication.md). A cached answer lives
// at most half of that, so even a process that never hears of the change stops trusting it in time,
// with no dependency on a notification channel staying up. One lookup per key and half-second is
// what it costs the database under load.
export const DEFAULT_KEY_TIMINGS: KeyVerifierTimings = { cacheTtlMs: 500, lastUsedFlushMs: 5_000 };

export interface TenantKeyVerifier {
  /** A promise only when the key's row must be read: an answer from the cache comes without one. */
  verify(token: string, now: Date): Promise<TenantKeyPrincipal | null> | TenantKeyPrincipal | null;
  /** Drops cached answers at once (this process revoked or rotated a key). */
  forget(keyId: string): void;
  /** Writes pending last-used times now. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The principal a key row grants for a token with `hash` at `now`, or null when the key is revoked,
 * expired, or the token is a rotated-out secret past its grace period. Pure: no clock, no database.
 */
export function principalOf(found: KeyForVerification, hash: string, now: Date): TenantKeyPrincipal | null {
  const { row, entitlements } = found;
  const expiresAt = new Date(row.expires_at);
  if (row.revoked_at || expiresAt <= now) return null;
  const current = row.secret_hash === hash;
  if (!current && !(row.previous_valid_until && new Date(row.previous_valid_until) > now)) return null;
  return {
    kind: 'tenant_key',
    keyId: row.id,
    prefix: row.prefix,
    tenantId: row.tenant_id,
    scopes: row.scopes,
    entitlements,
    expiresAt,
    rateLimitPerMinute: row.rate_limit_per_minute,
  };
}

export function createTenantKeyVerifier(
  db: Kysely<DB>,
  keyring: Keyring,
  timings: KeyVerifierTimings = DEFAULT_KEY_TIMINGS,
  onFlushError: (error: unknown) => void = () => {},
): TenantKeyVerifier {
  const keys = createTokenRowCache((hash) => findApiKeyByHash(db, hash), timings.cacheTtlMs);
  const lastUsed = createLastUsedRecorder(
    (entries) => recordLastUsed(db, entries),
    timings.lastUsedFlushMs,
    onFlushError,
  );
  const tokenHash = memoizedTokenHash('tnt_', (token) => keyring.hashToken('token-hash', token));

  /** What the key's row grants at `now` (checked on every request, cached row or not). */
  const grant = (found: KeyForVerification | undefined, hash: string, now: Date) => {
    const principal = found ? principalOf(found, hash, now) : null;
    if (principal) lastUsed.note(principal.keyId, now);
    return principal;
  };

  return {
    // Not async: a key in the cache, as on nearly every request, is answered without a promise.
    verify(token, now) {
      const hash = tokenHash(token);
      if (hash === null) return null;
      const found = keys.lookup(hash, Date.now());
      return found instanceof Promise ? found.then((row) => grant(row, hash, now)) : grant(found, hash, now);
    },
    forget: keys.forget,
    flush: lastUsed.flush,
    close: lastUsed.close,
  };
}
