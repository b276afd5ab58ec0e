import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.js';

const BATCH = 1_000;

/**
 * Deletes finished deliveries (delivered, failed, cancelled) last changed before the cutoff, then
 * events older than it that have no delivery left, in small batches so no long lock holds up the
 * workers (contract §1 DELIVERY_RETENTION_DAYS). Attempts go with their delivery.
 */
export async function purgeExpired(
  db: Kysely<DB>,
  cutoff: Date,
): Promise<{ deliveries: number; events: number }> {
  let deliveries = 0;
  for (;;) {
    const result = await sql`
      delete from deliveries where id in (
        select id from deliveries
        where status in ('delivered', 'failed', 'cancelled') and updated_at < ${cutoff}
        limit ${BATCH})`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deliveries += n;
    if (n < BATCH) break;
  }
  let events = 0;
  for (;;) {
    const result = await sql`
      delete from events where id in (
        select e.id from events e
        where e.created_at < ${cutoff}
          and not exists (select 1 from deliveries d where d.event_id = e.id)
        limit ${BATCH})`.execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    events += n;
    if (n < BATCH) break;
  }
  return { deliveries, events };
}
