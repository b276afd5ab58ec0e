import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import { deleteInBatches } from '../db/delete-in-batches.js';
import type { DB, SourcesTable } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';

// The tables of incoming webhooks (src/db/migrations/0029_sources.ts). A tenant's reads and writes
// take its scope; the ingest route finds a source by its ID alone (the URL is the address, the
// signature the proof), as a key is found by its secret.

export type SourceRow = Selectable<SourcesTable>;

/** How long a claimed delivery ID may wait for its event before another request takes it over. */
const ABANDONED_CLAIM_MS = 120_000;
export type NewSource = Omit<SourceRow, 'config'> & { config: Record<string, unknown> };

export async function insertSource(db: Kysely<DB>, scope: TenantScope, row: NewSource): Promise<void> {
  await db
    .insertInto('sources')
    .values({ ...row, tenant_id: scope.tenantId, config: JSON.stringify(row.config) })
    .execute();
}

export async function findSource(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
): Promise<SourceRow | undefined> {
  return db
    .selectFrom('sources')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The ingest route's lookup: a source by the ID in its URL, whatever its tenant, with its tenant's entitlements. */
export async function findSourceForIngest(
  db: Kysely<DB>,
  id: string,
): Promise<{ row: SourceRow; entitlements: string[] } | undefined> {
  const found = await db
    .selectFrom('sources as s')
    .selectAll('s')
    .select(
      sql<
        string[]
      >`coalesce((select json_agg(e.module_key order by e.module_key) from tenant_entitlements e where e.tenant_id = s.tenant_id), '[]'::json)`.as(
        'entitlements',
      ),
    )
    .where('s.id', '=', id)
    .executeTakeFirst();
  if (!found) return undefined;
  const { entitlements, ...row } = found;
  return { row, entitlements };
}

export async function listSources(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: Cursor | undefined,
): Promise<SourceRow[]> {
  return newestFirstPage(
    db.selectFrom('sources').selectAll().where('tenant_id', '=', scope.tenantId),
    limit,
    after,
  ).execute();
}

export async function updateSource(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  changes: Partial<Omit<NewSource, 'id' | 'tenant_id' | 'created_at'>>,
): Promise<SourceRow | undefined> {
  const { config, ...rest } = changes;
  return db
    .updateTable('sources')
    .set({ ...rest, ...(config ? { config: JSON.stringify(config) } : {}) })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteSource(db: Kysely<DB>, scope: TenantScope, id: string): Promise<boolean> {
  const deleted = await db
    .deleteFrom('sources')
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(deleted.numDeletedRows) > 0;
}

/**
 * Claims a provider delivery ID for this request: `first` when no request had it in the last 7 days
 * (then this request publishes it), else the event the first one became (null while it is being
 * published, or if it was refused). One statement: the primary key decides between two processes.
 * A claim older than 7 days is taken over as new, as is one left without its event for 2 minutes.
 */
export async function claimDelivery(
  db: Kysely<DB>,
  sourceId: string,
  deliveryId: string,
  now: Date,
  windowMs: number,
): Promise<{ first: boolean; eventId: string | null }> {
  const expired = new Date(now.getTime() - windowMs);
  // A claim still without its event after the longest a publish can take (the request timeout is
  // far shorter) was left by a process that died publishing it: taken over, not waited for.
  const abandoned = new Date(now.getTime() - ABANDONED_CLAIM_MS);
  const claimed = await sql<{ event_id: string | null; fresh: boolean }>`
    insert into source_deliveries (source_id, provider_delivery_id, event_id, received_at)
      values (${sourceId}, ${deliveryId}, null, ${now})
    on conflict (source_id, provider_delivery_id) do update
      set event_id = null, received_at = excluded.received_at
      where source_deliveries.received_at <= ${expired}
        or (source_deliveries.event_id is null and source_deliveries.received_at <= ${abandoned})
    returning event_id, true as fresh`.execute(db);
  if (claimed.rows.length > 0) return { first: true, eventId: null };
  const existing = await db
    .selectFrom('source_deliveries')
    .select('event_id')
    .where('source_id', '=', sourceId)
    .where('provider_delivery_id', '=', deliveryId)
    .executeTakeFirst();
  return { first: false, eventId: existing?.event_id ?? null };
}

export async function settleDelivery(
  db: Kysely<DB>,
  sourceId: string,
  deliveryId: string,
  eventId: string,
): Promise<void> {
  await db
    .updateTable('source_deliveries')
    .set({ event_id: eventId })
    .where('source_id', '=', sourceId)
    .where('provider_delivery_id', '=', deliveryId)
    .execute();
}

/** Gives a delivery ID back when its publish was refused: the provider's retry may publish it. */
export async function releaseDelivery(db: Kysely<DB>, sourceId: string, deliveryId: string): Promise<void> {
  await db
    .deleteFrom('source_deliveries')
    .where('source_id', '=', sourceId)
    .where('provider_delivery_id', '=', deliveryId)
    .where('event_id', 'is', null)
    .execute();
}

export interface RequestLogRow {
  id: string;
  tenant_id: string;
  source_id: string;
  received_at: Date;
  outcome: string;
  event_id: string | null;
  provider_delivery_id: string | null;
  event_type: string | null;
  headers: Record<string, string>;
  body: string;
  body_truncated: boolean;
}

export async function insertRequestLog(db: Kysely<DB>, row: RequestLogRow): Promise<void> {
  await db
    .insertInto('source_requests')
    .values({ ...row, headers: JSON.stringify(row.headers) })
    .execute();
}

export async function listRequestLog(
  db: Kysely<DB>,
  scope: TenantScope,
  sourceId: string,
  filters: { outcome?: string; since?: Date; until?: Date },
  limit: number,
  after: Cursor | undefined,
): Promise<Array<RequestLogRow & { created_at: Date }>> {
  let query = db
    .selectFrom('source_requests')
    .selectAll()
    .select('received_at as created_at')
    .where('tenant_id', '=', scope.tenantId)
    .where('source_id', '=', sourceId);
  if (filters.outcome) query = query.where('outcome', '=', filters.outcome);
  if (filters.since) query = query.where('received_at', '>=', filters.since);
  if (filters.until) query = query.where('received_at', '<', filters.until);
  const from = after
    ? query.where(sql<boolean>`(received_at, id) < (${after.createdAt}, ${after.id})`)
    : query;
  const rows = await from
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return rows.map((row) => ({
    ...row,
    received_at: new Date(row.received_at),
    created_at: new Date(row.created_at),
  }));
}

/** Hourly: the log past the deliveries' retention, and delivery IDs past their 7 days. */
export async function purgeSourceRecords(
  db: Kysely<DB>,
  now: Date,
  retentionDays: number,
  windowMs: number,
): Promise<number> {
  const logCutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  const idCutoff = new Date(now.getTime() - windowMs);
  const log = await deleteInBatches(
    db,
    (batch) => sql`delete from source_requests where id in (
      select id from source_requests where received_at < ${logCutoff} limit ${batch})`,
  );
  const ids = await deleteInBatches(
    db,
    (batch) => sql`delete from source_deliveries where (source_id, provider_delivery_id) in (
      select source_id, provider_delivery_id from source_deliveries where received_at < ${idCutoff} limit ${batch})`,
  );
  return log + ids;
}
