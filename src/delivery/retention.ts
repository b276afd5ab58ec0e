import { type Kysely, sql } from 'kysely';
import { deleteInBatches } from '../db/delete-in-batches.js';
import type { DB } from '../db/schema.js';

/**
 * Deletes finished deliveries (delivered, failed, cancelled) last changed before the cutoff, then
 * events older than it that have no delivery left, in small batches so no long lock holds up the
 * workers (contract §1 DELIVERY_RETENTION_DAYS). Attempts go with their delivery.
 */
export async function purgeExpired(
  db: Kysely<DB>,
  cutoff: Date,
): Promise<{ deliveries: number; events: number }> {
  const deliveries = await deleteInBatches(
    db,
    (batch) => sql`
      delete from deliveries where id in (
        select id from deliveries
        where status in ('delivered', 'failed', 'cancelled') and updated_at < ${cutoff}
        limit ${batch})`,
  );
  const events = await deleteInBatches(
    db,
    (batch) => sql`
      delete from events where id in (
        select e.id from events e
        where e.created_at < ${cutoff}
          and not exists (select 1 from deliveries d where d.event_id = e.id)
        limit ${batch})`,
  );
  return { deliveries, events };
}
