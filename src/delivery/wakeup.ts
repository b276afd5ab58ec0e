import { sql } from 'kysely';
import type { Database } from '../db/database.js';

/** Wakes the delivery workers of this process when there is new work, instead of waiting for a poll. */
export interface Wakeup {
  notify(): void;
  /** Resolves on the next notify, or after `ms`. */
  wait(ms: number): Promise<void>;
}

export function createWakeup(): Wakeup {
  let waiters: Array<() => void> = [];
  let pending = false;
  return {
    notify() {
      pending = true;
      const current = waiters;
      waiters = [];
      for (const wake of current) wake();
    },
    wait(ms) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== done);
          pending = false;
          resolve();
        }
        waiters.push(done);
      });
    },
  };
}

/** The channel on which PostgreSQL tells every process's workers that deliveries are due. */
export const DELIVERY_CHANNEL = 'hubgate_deliveries';

/**
 * Announces new deliveries: wakes this process's workers at once, and every other process's through
 * NOTIFY when the database is PostgreSQL (their LISTEN turns it into a local wake-up). Announcements
 * made while a NOTIFY is on its way are folded into one more after it: under load that is one round
 * trip for many publishes, not one each. A lost announcement costs a poll interval.
 */
export function createAnnouncer(
  database: Database,
  wakeup: Wakeup,
  onError: (error: unknown) => void,
): () => void {
  let sending = false;
  let again = false;
  const send = (): void => {
    sending = true;
    again = false;
    sql`select pg_notify(${DELIVERY_CHANNEL}, '')`
      .execute(database.kysely)
      .catch(onError)
      .finally(() => {
        sending = false;
        if (again) send();
      });
  };
  return () => {
    wakeup.notify();
    if (database.engine !== 'postgres') return;
    if (sending) again = true;
    else send();
  };
}
