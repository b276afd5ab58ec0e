import { hash as sha256 } from 'node:crypto';
import { isWellFormedToken, type TokenPrefix } from '../crypto/api-tokens.js';

// What tenant keys' check (key-verifier.ts) and portal tokens' (portal/token-verifier.ts) share: the
// two bearer secrets of the tnt_ format are checked the same way, against different tables.

const MAX_CACHED = 10_000;

/**
 * The keyed hash of a well-formed token of `prefix` (`hashOf`), or null for a token that is not one.
 * Both are pure functions of the token, and cost more than the rest of the access check: a token
 * seen before is answered from memory. The memo is keyed by a plain SHA-256 of the token, so it
 * never holds a secret; it is bounded like the row cache.
 */
export function memoizedTokenHash(
  prefix: TokenPrefix,
  hashOf: (token: string) => string,
): (token: string) => string | null {
  const memo = new Map<string, string>();
  return (token) => {
    const fingerprint = sha256('sha256', token, 'base64');
    let hash = memo.get(fingerprint);
    if (hash === undefined) {
      if (!isWellFormedToken(prefix, token)) return null;
      hash = hashOf(token);
      if (memo.size >= MAX_CACHED) memo.clear();
      memo.set(fingerprint, hash);
    }
    return hash;
  };
}

export interface TokenRowCache<T> {
  /** A promise only when the row must be read: an answer from the cache comes without one. */
  lookup(hash: string, nowMs: number): Promise<T | undefined> | T | undefined;
  /** Drops the cached answers for the row with this ID at once, and any lookup in flight. */
  forget(id: string): void;
}

/**
 * Rows by token hash (`fetch`), trusted for `ttlMs`; a lookup per token and TTL is what the database
 * sees. What a row grants is decided by the caller on every request, cached row or not.
 */
export function createTokenRowCache<T extends { row: { id: string } }>(
  fetch: (hash: string) => Promise<T | undefined>,
  ttlMs: number,
): TokenRowCache<T> {
  const cache = new Map<string, { found: T | undefined; fetchedAt: number }>();
  // When a cached answer expires under load, every request in flight for that token would ask the
  // database at once; they wait for one lookup instead.
  const inFlight = new Map<string, Promise<T | undefined>>();
  // Bumped by forget(): a lookup that started before a revocation here must not cache what it read.
  let generation = 0;

  async function fetchAndCache(hash: string): Promise<T | undefined> {
    const fetchedAt = Date.now();
    const startedIn = generation;
    try {
      const found = await fetch(hash);
      if (startedIn !== generation) return found;
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(hash, { found, fetchedAt });
      return found;
    } finally {
      inFlight.delete(hash);
    }
  }

  return {
    lookup(hash, nowMs) {
      const hit = cache.get(hash);
      if (hit && nowMs - hit.fetchedAt < ttlMs) return hit.found;
      let pending = inFlight.get(hash);
      if (!pending) {
        pending = fetchAndCache(hash);
        inFlight.set(hash, pending);
      }
      return pending;
    },
    forget(id) {
      for (const [hash, entry] of cache) if (entry.found?.row.id === id) cache.delete(hash);
      generation += 1;
      inFlight.clear();
    },
  };
}

export interface LastUsedRecorder {
  /** Notes that the row `id` was used at `at`; written with the next flush. */
  note(id: string, at: Date): void;
  /** Writes what is noted now. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. */
  close(): Promise<void>;
}

/**
 * Last-used times, batched: one write per `intervalMs` for every token used since, not one per
 * request (a key's or a grant's "last used" is a minute-grained fact, read by people).
 */
export function createLastUsedRecorder(
  write: (entries: Array<[string, Date]>) => Promise<void>,
  intervalMs: number,
  onError: (error: unknown) => void,
): LastUsedRecorder {
  const pending = new Map<string, Date>();
  async function flush(): Promise<void> {
    if (pending.size === 0) return;
    const entries = [...pending];
    pending.clear();
    await write(entries);
  }
  const timer = setInterval(() => {
    flush().catch(onError);
  }, intervalMs);
  timer.unref();
  return {
    note: (id, at) => {
      pending.set(id, at);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
