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
  /** Sessions kept at most; past it the least recently used is closed. */
  max: number;
}

export const DEFAULT_SESSION_POOL: SessionPoolOptions = { idleMs: 4_000, sweepMs: 500, max: 256 };

interface Entry<S> {
  fingerprint: string;
  /** Settles once the session is open; shared by every attempt that wants it meanwhile. */
  opening: Promise<S>;
  lastUsed: number;
}

/** A fingerprint of where and as whom a session logs in: no secret can be read back from it. */
export function sessionFingerprint(...parts: ReadonlyArray<string | undefined>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part === undefined ? '-' : `+${part}`}\u0000`);
  return hash.digest('hex');
}

export interface SessionPool<S extends BrokerSession> {
  /**
   * The connection's session for this fingerprint: the open one, the one being opened, or a new one
   * from `open`. A session of another fingerprint (an edit, a re-binding) or one no longer open is
   * closed and replaced. Rejects when opening fails (nothing is kept then).
   */
  acquire(connectionId: string, fingerprint: string, open: () => Promise<S>): Promise<S>;
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

/** The pool's entries and how one leaves: idle, past the bound, or replaced. */
function entriesOf<S extends BrokerSession>(options: SessionPoolOptions) {
  const entries = new Map<string, Entry<S>>();
  const drop = (connectionId: string, entry: Entry<S>) => {
    if (entries.get(connectionId) === entry) entries.delete(connectionId);
    void closeWhenOpen(entry.opening);
  };
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const [connectionId, entry] of entries) {
      if (now - entry.lastUsed >= options.idleMs) drop(connectionId, entry);
    }
  }, options.sweepMs);
  sweep.unref();
  const evictBeyondMax = () => {
    while (entries.size > options.max) {
      let oldest: [string, Entry<S>] | undefined;
      for (const each of entries) if (!oldest || each[1].lastUsed < oldest[1].lastUsed) oldest = each;
      if (!oldest) return;
      drop(...oldest);
    }
  };
  return { entries, drop, sweep, evictBeyondMax };
}

export function createSessionPool<S extends BrokerSession>(
  options: SessionPoolOptions = DEFAULT_SESSION_POOL,
): SessionPool<S> {
  const { entries, drop, sweep, evictBeyondMax } = entriesOf<S>(options);
  return {
    async acquire(connectionId, fingerprint, open) {
      const kept = entries.get(connectionId);
      if (kept && kept.fingerprint === fingerprint) {
        kept.lastUsed = performance.now();
        const session = await kept.opening;
        if (session.isOpen()) return session;
        // The broker went away since: this attempt opens the next session (unless another did).
        if (entries.get(connectionId) === kept) drop(connectionId, kept);
        return this.acquire(connectionId, fingerprint, open);
      }
      if (kept) drop(connectionId, kept);
      const entry: Entry<S> = { fingerprint, opening: open(), lastUsed: performance.now() };
      entries.set(connectionId, entry);
      evictBeyondMax();
      try {
        return await entry.opening;
      } catch (error) {
        if (entries.get(connectionId) === entry) entries.delete(connectionId);
        throw error;
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
