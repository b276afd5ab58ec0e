import { sql, type Kysely, type RawBuilder } from 'kysely';
import { deleteInBatches } from '../db/delete-in-batches.js';
import { dropExpiredPartitions, ensurePartitions } from '../db/partitions.js';
import type { DB } from '../db/schema.js';
import { purgeFiltered } from './filtered-store.js';
import { purgePermits } from './throttle.js';

/** How long an Idempotency-Key answers its first result (docs/api/events.md). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

const DAY_MS = 86_400_000;

/** A tenant whose quotas set its own retention (docs/api/quotas.md), and the cutoff that makes. */
interface TenantRetention {
  tenantId: string;
  cutoff: Date;
}

/** Tenants with a `retentionDays` quota: read from quotas/' table, which this job only reads. */
async function tenantRetentions(db: Kysely<DB>, now: Date): Promise<TenantRetention[]> {
  const rows = await db
    .selectFrom('tenant_quotas')
    .select(['tenant_id', 'retention_days'])
    .where('retention_days', 'is not', null)
    .execute();
  return rows.map((row) => ({
    tenantId: row.tenant_id,
    cutoff: new Date(now.getTime() - (row.retention_days ?? 0) * DAY_MS),
  }));
}

/**
 * Delivery retention (docs/configuration.md DELIVERY_RETENTION_DAYS) and the partitions it works by: makes the
 * coming days' partitions, drops whole the days that ended before the cutoff and have nothing left
 * to send, and deletes, in small batches, the expired rows of the default partitions (rows whose day
 * had no partition when they were written), the ordering heads of keys idle since the cutoff, and the
 * idempotency keys past their 24 hours.
 *
 * A tenant's `retentionDays` quota (docs/api/quotas.md) replaces the global days for its rows. Days are
 * dropped whole only once every tenant's retention has passed them; a tenant with fewer days has its
 * ended rows deleted in batches by its own cutoff (the tenant's index), and when some tenant keeps rows
 * longer than the global days, everyone else's between the two cutoffs are deleted in batches too.
 */
export async function purgeExpired(
  db: Kysely<DB>,
  now: Date,
  cutoff: Date,
  engine: 'pglite' | 'postgres' = 'postgres',
): Promise<{ days: string[]; deliveries: number; events: number; created: string[] }> {
  // PGlite has no day partitions: every row is in the default ones (layOutPartitions, partitions.ts).
  const created = engine === 'postgres' ? await ensurePartitions(db, now) : [];
  const own = await tenantRetentions(db, now);
  const longest = new Date(Math.min(cutoff.getTime(), ...own.map((t) => t.cutoff.getTime())));
  const days = await dropExpiredPartitions(db, longest);
  await purgePermits(db, now);
  const counts = await purgeByTenant(db, cutoff, own, longest);
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
  return { days, ...counts, created };
}

/**
 * Ended deliveries and their events by the global cutoff and by each tenant's own (`retentionDays`),
 * in batches; returns how many went.
 */
async function purgeByTenant(
  db: Kysely<DB>,
  cutoff: Date,
  own: readonly TenantRetention[],
  longest: Date,
): Promise<{ deliveries: number; events: number }> {
  const counts = { deliveries: 0, events: 0 };
  // Everyone by the global cutoff but the tenants that keep their rows longer than it. With such a
  // tenant, days past the global cutoff are still there whole: the rows go from every partition.
  const keepLonger = own.filter((t) => t.cutoff < cutoff).map((t) => t.tenantId);
  const everywhere = longest < cutoff;
  await purgeRows(db, counts, {
    deliveries: everywhere ? 'deliveries' : 'deliveries_default',
    attempts: everywhere ? 'delivery_attempts' : 'delivery_attempts_default',
    events: everywhere ? 'events' : 'events_default',
    cutoff,
    tenant: keepLonger.length > 0 ? sql`and tenant_id not in (${sql.join(keepLonger)})` : sql``,
  });
  // Each tenant with days of its own, by its own cutoff, through its index, from every partition.
  for (const tenant of own.filter((t) => t.cutoff.getTime() !== cutoff.getTime())) {
    await purgeRows(db, counts, {
      deliveries: 'deliveries',
      attempts: 'delivery_attempts',
      events: 'events',
      cutoff: tenant.cutoff,
      tenant: sql`and tenant_id = ${tenant.tenantId}`,
    });
  }
  return counts;
}

/** Ended deliveries (with their attempts), then events with no delivery left, older than `cutoff`, in batches. */
async function purgeRows(
  db: Kysely<DB>,
  counts: { deliveries: number; events: number },
  where: { deliveries: string; attempts: string; events: string; cutoff: Date; tenant: RawBuilder<unknown> },
): Promise<void> {
  const { cutoff, tenant } = where;
  // A delivery's attempts go with it (same key, same partition table).
  counts.deliveries += await deleteInBatches(
    db,
    (batch) => sql`
      with gone as (
        select id, created_at from ${sql.table(where.deliveries)}
        where status in ('delivered', 'failed', 'cancelled', 'skipped') and updated_at < ${cutoff}
          and created_at < ${cutoff} ${tenant}
        limit ${batch}),
      attempts as (
        delete from ${sql.table(where.attempts)} a using gone
        where a.delivery_id = gone.id and a.delivery_created_at = gone.created_at)
      delete from ${sql.table(where.deliveries)} d using gone where d.id = gone.id and d.created_at = gone.created_at`,
  );
  counts.events += await deleteInBatches(
    db,
    (batch) => sql`
      delete from ${sql.table(where.events)} where id in (
        select e.id from ${sql.table(where.events)} e
        where e.created_at < ${cutoff} ${tenant}
          and not exists (select 1 from ${sql.table(where.deliveries)} d where d.event_id = e.id)
        limit ${batch})`,
  );
}
