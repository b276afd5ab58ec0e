import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

// The routing document lives in one row; this is its key.
const ROUTING_ROW_ID = 1;

export interface RoutingRow {
  revision: number;
  document: Record<string, unknown>;
}

export function findRoutingRow(db: Kysely<DB>): Promise<RoutingRow | undefined> {
  return db
    .selectFrom('alert_routing')
    .select(['revision', 'document'])
    .where('id', '=', ROUTING_ROW_ID)
    .executeTakeFirst();
}

/**
 * The row, locked until the transaction ends. On the very first write there is none yet: the
 * initial document is inserted (a concurrent first writer's insert makes this one do nothing),
 * so there is always a row to lock and two writers never both see the same revision.
 */
export async function lockRoutingRow(
  trx: Kysely<DB>,
  initial: RoutingRow & { updatedAt: Date },
): Promise<RoutingRow> {
  await trx
    .insertInto('alert_routing')
    .values({
      id: ROUTING_ROW_ID,
      revision: initial.revision,
      document: JSON.stringify(initial.document),
      updated_at: initial.updatedAt,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  return trx
    .selectFrom('alert_routing')
    .select(['revision', 'document'])
    .where('id', '=', ROUTING_ROW_ID)
    .forUpdate()
    .executeTakeFirstOrThrow();
}

export async function updateRoutingRow(
  trx: Kysely<DB>,
  row: RoutingRow & { updatedAt: Date },
): Promise<void> {
  await trx
    .updateTable('alert_routing')
    .set({ revision: row.revision, document: JSON.stringify(row.document), updated_at: row.updatedAt })
    .where('id', '=', ROUTING_ROW_ID)
    .execute();
}

/**
 * Which of these channel IDs exist. Their rows are key-share locked until the transaction ends, so
 * a channel cannot be deleted between this check and the commit. Taken before the routing row,
 * the order a channel DELETE takes them in too (channel, then routing row), so the two never deadlock.
 */
export async function lockExistingChannelIds(trx: Kysely<DB>, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await trx
    .selectFrom('alert_channels')
    .select('id')
    .where('id', 'in', [...new Set(ids)].sort())
    .orderBy('id')
    .forKeyShare()
    .execute();
  return new Set(rows.map((r) => r.id));
}
