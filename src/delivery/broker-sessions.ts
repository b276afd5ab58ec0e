import { createHash } from 'node:crypto';

// A broker destination's sessions (docs/decisions/0080): at most one per hubgate connection and
// process, shared by that connection's attempts, found by the connection's ID and a fingerprint of
// where and as whom it logs in. An edit or a re-binding changes the fingerprint, so the next attempt
// opens a new session and closes the old one; a session no attempt used for `idleMs` is closed, which
// is how a pause or a revoke (after which nothing is attempted, decision 0043) closes it in time.

/** What a pool keeps: one open session with a broker. */
export interface BrokerSession {
  /** False once the broker closed it or it failed: the next attempt opens another. */
  isOpen(): boolean;
  close(): Promise<void>;
}

export interface SessionPoolOptions {
  /** A session unused this long is closed (§21: within 5 s of a revoke, pause or edit, with `sweepMs`). */
  idleMs: number;
  /** How often idle sessions are looked for. */
  sweepMs: number;
  /**
   * Sessions kept at most; past it the least recently used of those no attempt is using is closed
   * (one in use is never closed under its attempt: while more connections than `max` have attempts
   * in flight at once, the pool holds one session for each of them).
   */
  max: number;
}

// 3 s idle + a 0.5 s sweep + closeWithin's 1 s at most: closed 4.5 s after the last attempt ended, with
// half a second for a busy event loop before §21's 5 s.
export const DEFAULT_SESSION_POOL: SessionPoolOptions = { idleMs: 3_000, sweepMs: 500, max: 256 };

interface Entry<S> {
  fingerprint: string;
  /** Settles once the session is open; shared by every attempt that wants it meanwhile. */
  opening: Promise<S>;
  /** When an attempt last took or gave back the session. */
  lastUsed: number;
  /** Attempts using the session now: while any is, it is neither idle nor evicted. */
  users: number;
}

/** A fingerprint of where and as whom a session logs in: no secret can be read back from it. */
export function sessionFingerprint(...parts: ReadonlyArray<string | undefined>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part === undefined ? '-' : `+${part}`}\u0000`);
  return hash.digest('hex');
}

export interface SessionPool<S extends BrokerSession> {
  /**
   * Runs `work` on the connection's session for this fingerprint: the open one, the one being opened,
   * or a new one from `open`. A session of another fingerprint (an edit, a re-binding) or one no longer
   * open is closed and replaced. Until `work` settles the session is in use: the idle sweep and the
   * bound leave it open. Rejects when opening fails (nothing is kept then), or as `work` does.
   */
  use<T>(
    connectionId: string,
    fingerprint: string,
    open: () => Promise<S>,
    work: (session: S) => Promise<T>,
  ): Promise<T>;
  /** Closes the connection's session if it is this one (it failed mid-publish). */
  discard(connectionId: string, session: S): void;
  /** How many sessions are kept. */
  size(): number;
  /** Closes every session and stops looking for idle ones. */
  close(): Promise<void>;
}

/** Closes a session once it is open (one that failed to open has nothing to close). */
const closeWhenOpen = <S extends BrokerSession>(opening: Promise<S>): Promise<void> =>
  opening.then(
    (session) => session.close().catch(() => undefined),
    () => undefined,
  );

/** The pool's entries, how attempts take and give them back, and how one leaves: idle, past the bound, or replaced. */
function entriesOf<S extends BrokerSession>(options: SessionPoolOptions) {
  const entries = new Map<string, Entry<S>>();
  const drop = (connectionId: string, entry: Entry<S>) => {
    if (entries.get(connectionId) === entry) entries.delete(connectionId);
    void closeWhenOpen(entry.opening);
  };
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [connectionId, entry] of entries) {
      if (entry.users === 0 && now - entry.lastUsed >= options.idleMs) drop(connectionId, entry);
    }
  }, options.sweepMs);
  sweep.unref();
  // Only a session no attempt uses is evicted: closing one under its attempts would fail them (another
  // tenant's, as likely as not), and their retries would wait the retry schedule for a fault of nobody's.
  const evictBeyondMax = () => {
    while (entries.size > options.max) {
      let oldest: [string, Entry<S>] | undefined;
      for (const each of entries) {
        if (each[1].users === 0 && (!oldest || each[1].lastUsed < oldest[1].lastUsed)) oldest = each;
      }
      if (!oldest) return;
      drop(...oldest);
    }
  };
  /** The connection's entry for this fingerprint, taken by one more user (a new one if need be). */
  const take = (connectionId: string, fingerprint: string, open: () => Promise<S>) => {
    const kept = entries.get(connectionId);
    let entry = kept;
    if (!entry || entry.fingerprint !== fingerprint) {
      if (kept) drop(connectionId, kept);
      entry = { fingerprint, opening: open(), lastUsed: performance.now(), users: 0 };
      entries.set(connectionId, entry);
    }
    entry.users += 1;
    entry.lastUsed = performance.now();
    evictBeyondMax();
    return entry;
  };
  const giveBack = (entry: Entry<S>) => {
    entry.users -= 1;
    // Idle from now: an attempt longer than idleMs does not make its session look unused.
    entry.lastUsed = performance.now();
    // Sessions kept past the bound while all were in use: the first given back goes now.
    evictBeyondMax();
  };
  return { entries, drop, sweep, take, giveBack };
}

export function createSessionPool<S extends BrokerSession>(
  options: SessionPoolOptions = DEFAULT_SESSION_POOL,
): SessionPool<S> {
  const { entries, drop, sweep, take, giveBack } = entriesOf<S>(options);
  return {
    async use(connectionId, fingerprint, open, work) {
      for (;;) {
        const entry = take(connectionId, fingerprint, open);
        let session: S;
        try {
          session = await entry.opening;
        } catch (error) {
          giveBack(entry);
          if (entries.get(connectionId) === entry) entries.delete(connectionId);
          throw error;
        }
        if (!session.isOpen()) {
          // The broker went away since: this attempt opens the next session (unless another did).
          giveBack(entry);
          if (entries.get(connectionId) === entry) drop(connectionId, entry);
          continue;
        }
        try {
          return await work(session);
        } finally {
          giveBack(entry);
        }
      }
    },
    discard(connectionId, session) {
      const kept = entries.get(connectionId);
      void session.close().catch(() => undefined);
      if (!kept) return;
      void kept.opening.then(
        (open) => {
          if (open === session && entries.get(connectionId) === kept) entries.delete(connectionId);
        },
        () => undefined,
      );
    },
    size: () => entries.size,
    async close() {
      clearInterval(sweep);
      const all = [...entries.values()];
      entries.clear();
      await Promise.all(all.map((entry) => closeWhenOpen(entry.opening)));
    },
  };
}
