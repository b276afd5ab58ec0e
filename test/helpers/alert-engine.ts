import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { waitUntil } from './wait.js';

/**
 * Waits until the alert engine has evaluated `count` more times and no notice is due unsent: the positive
 * signal a "nothing more was sent" check needs before it looks, instead of a sleep that hopes the engine ran.
 *
 * The process holding the engine's lease renews it at the start of every evaluation, and evaluations run one
 * after another: `count + 1` renewals seen means `count` whole evaluations ran since the call. Then no notice may
 * be due: one still due would be sent after the caller looked.
 */
export async function alertEvaluations(database: Database, count: number): Promise<void> {
  const renewals = new Set<string>();
  const lease = async () =>
    (
      await sql<{ until: Date }>`
        select lease_until as until from alert_leases where name = 'alert-engine'`.execute(database.kysely)
    ).rows[0]?.until;
  const first = await lease();
  await waitUntil(
    async () => {
      const until = await lease();
      if (until && until.getTime() !== first?.getTime()) renewals.add(until.toISOString());
      return renewals.size > count;
    },
    { message: () => `${count + 1} alert evaluations (${renewals.size} seen)`, intervalMs: 20 },
  );
  await waitUntil(
    async () =>
      (
        await sql<{ n: number }>`
          select count(*)::int as n from alert_notifications
          where state = 'pending' and next_attempt_at <= now()`.execute(database.kysely)
      ).rows[0]?.n === 0,
    { message: 'no alert notice due' },
  );
}
