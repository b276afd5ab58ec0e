import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

export interface FiringAlert {
  fingerprint: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
}

/** The alerts firing now, the most recent first (a platform has a handful; at most `limit`). */
export async function firingAlerts(db: Kysely<DB>, limit: number): Promise<FiringAlert[]> {
  const rows = await db
    .selectFrom('alerts')
    .select(['fingerprint', 'labels', 'annotations', 'starts_at'])
    .where('status', '=', 'firing')
    .orderBy('starts_at', 'desc')
    .orderBy('fingerprint')
    .limit(limit)
    .execute();
  return rows.map((row) => ({
    fingerprint: row.fingerprint,
    labels: row.labels,
    annotations: row.annotations,
    startsAt: new Date(row.starts_at).toISOString(),
  }));
}
