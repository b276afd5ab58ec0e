import { sql, type Kysely } from 'kysely';
import { deleteInBatches } from '../db/delete-in-batches.js';
import { dropExpiredPartitions, ensurePartitions } from '../db/partitions.js';
import type { DB } from '../db/schema.js';
import { purgeFiltered } from './filtered-store.js';
import { purgePermits } from './throttle.js';

/** How long an Idempotency-Key answers its first result (docs/api/events.md). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Delivery retention (docs/configuration.md DELIVERY_RETENTION_DAYS) and the partitions it works by: makes the
 * coming days' partitions, drops whole the days that ended before the cutoff and have nothing left
 * to send, and deletes, in small batches, the expired rows of the default partitions (rows whose day
 * had no partition when they were written), the ordering heads of keys idle since the cutoff, and the
 * idempotency keys past their 24 hours.
 */
export async function purgeExpired(
  db: Kysely<DB>,
  now: Date,
  cutoff: Date,
  engine: 'pglite' | 'postgres' = 'postgres',
): Promise<{ days: string[]; deliveries: number; events: number; created: string[] }> {
  // PGlite has no day partitions: every row is in the default ones (layOutPartitions, partitions.ts).
  const created = engine === 'postgres' ? await ensurePartitions(db, now) : [];
  const days = await dropExpiredPartitions(db, cutoff);
  await purgePermits(db, now);
  // A delivery's attempts go with it (same key, same partition table).
  const deliveries = await deleteInBatches(
    db,
    (batch) => sql`
      with gone as (
        select id, created_at from deliveries_default
        where status in ('delivered', 'failed', 'cancelled', 'skipped') and updated_at < ${cutoff}
        limit ${batch}),
      attempts as (
        delete from delivery_attempts_default a using gone
        where a.delivery_id = gone.id and a.delivery_created_at = gone.created_at)
      delete from deliveries_default d using gone where d.id = gone.id and d.created_at = gone.created_at`,
  );
  const events = await deleteInBatches(
    db,
    (batch) => sql`
      delete from events_default where id in (
        select e.id from events_default e
        where e.created_at < ${cutoff}
          and not exists (select 1 from deliveries_default d where d.event_id = e.id)
        limit ${batch})`,
  );
  // An ordering key's head row (ordering.ts) is kept while its last delivery may still hold the key back:
  // one whose delivery has ended (or is gone) before the cutoff goes. A publish that locked the row
  // meanwhile makes it name a new delivery, which the delete re-reads and keeps.
  await deleteInBatches(
    db,
    (batch) => sql`
      delete from ordering_heads where (connection_id, ordering_key) in (
        select h.connection_id, h.ordering_key from ordering_heads h
        where h.delivery_created_at < ${cutoff}
          and not exists (select 1 from deliveries d where d.id = h.delivery_id
            and d.created_at = h.delivery_created_at
            and d.status not in ('delivered', 'failed', 'cancelled', 'skipped'))
        limit ${batch})
      and delivery_created_at < ${cutoff}`,
  );
  // What filters dropped (filtered-store.ts) is forgotten with the deliveries of the same days.
  await purgeFiltered(db, cutoff);
  await deleteInBatches(
    db,
    (batch) => sql`
      delete from event_idempotency_keys where (tenant_id, key) in (
        select tenant_id, key from event_idempotency_keys
        where created_at < ${new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)}
        limit ${batch})`,
  );
  return { days, deliveries, events, created };
}
