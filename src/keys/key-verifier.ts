import { hash as sha256 } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { TenantKeyPrincipal } from '../access/principal.js';
import { isWellFormedToken } from '../crypto/api-tokens.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { findApiKeyByHash, recordLastUsed, type KeyForVerification } from './tenant-store.js';

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
const MAX_CACHED = 10_000;

/**
 * The keyed hash of a well-formed `tnt_` token (HMAC-SHA256 under the token-hash key), or null for
 * a token that is not one. Both are pure functions of the token, and cost more than the rest of the
 * access check: a token seen before is answered from memory. The memo is keyed by a plain SHA-256
 * of the token, so it never holds a secret; it is bounded like the key cache.
 */
function memoizedTokenHash(keyring: Keyring): (token: string) => string | null {
  const memo = new Map<string, string>();
  return (token) => {
    const fingerprint = sha256('sha256', token, 'base64');
    let hash = memo.get(fingerprint);
    if (hash === undefined) {
      if (!isWellFormedToken('tnt_', token)) return null;
      hash = keyring.hashToken('token-hash', token);
      if (memo.size >= MAX_CACHED) memo.clear();
      memo.set(fingerprint, hash);
    }
    return hash;
  };
}

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
  };
}

/** Key rows by token hash, trusted for `ttlMs`; a lookup per key and TTL is what the database sees. */
function createKeyCache(db: Kysely<DB>, ttlMs: number) {
  const cache = new Map<string, { found: KeyForVerification | undefined; fetchedAt: number }>();
  // When a cached answer expires under load, every request in flight for that key would ask the
  // database at once; they wait for one lookup instead.
  const inFlight = new Map<string, Promise<KeyForVerification | undefined>>();
  // Bumped by forget(): a lookup that started before a revocation here must not cache what it read.
  let generation = 0;

  async function fetchAndCache(hash: string): Promise<KeyForVerification | undefined> {
    const fetchedAt = Date.now();
    const startedIn = generation;
    try {
      const found = await findApiKeyByHash(db, hash);
      if (startedIn !== generation) return found;
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(hash, { found, fetchedAt });
      return found;
    } finally {
      inFlight.delete(hash);
    }
  }

  return {
    lookup(
      hash: string,
      nowMs: number,
    ): Promise<KeyForVerification | undefined> | KeyForVerification | undefined {
      const hit = cache.get(hash);
      if (hit && nowMs - hit.fetchedAt < ttlMs) return hit.found;
      let pending = inFlight.get(hash);
      if (!pending) {
        pending = fetchAndCache(hash);
        inFlight.set(hash, pending);
      }
      return pending;
    },
    forget(keyId: string): void {
      for (const [hash, entry] of cache) if (entry.found?.row.id === keyId) cache.delete(hash);
      generation += 1;
      inFlight.clear();
    },
  };
}

export function createTenantKeyVerifier(
  db: Kysely<DB>,
  keyring: Keyring,
  timings: KeyVerifierTimings = DEFAULT_KEY_TIMINGS,
  onFlushError: (error: unknown) => void = () => {},
): TenantKeyVerifier {
  const keys = createKeyCache(db, timings.cacheTtlMs);
  const lastUsed = new Map<string, Date>();
  const tokenHash = memoizedTokenHash(keyring);

  async function flush(): Promise<void> {
    if (lastUsed.size === 0) return;
    const entries = [...lastUsed];
    lastUsed.clear();
    await recordLastUsed(db, entries);
  }

  const timer = setInterval(() => {
    flush().catch(onFlushError);
  }, timings.lastUsedFlushMs);
  timer.unref();

  /** What the key's row grants at `now` (checked on every request, cached row or not). */
  const grant = (found: KeyForVerification | undefined, hash: string, now: Date) => {
    const principal = found ? principalOf(found, hash, now) : null;
    if (principal) lastUsed.set(principal.keyId, now);
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
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
