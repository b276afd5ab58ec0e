import { sql, type Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import { deleteInBatches } from '../db/delete-in-batches.js';
import type { DB } from '../db/schema.js';
import { errorFields } from '../logger.js';
import { RETENTION_INTERVAL_MS, runEvery } from '../periodic.js';

const DAY_MS = 86_400_000;

/**
 * How long a portal session or connect link is kept after it expired (docs/decisions/0077-…): lists
 * and reads show it as expired (or completed) for that long, then it is gone (404); the audit log
 * keeps its create, use and end for AUDIT_RETENTION_DAYS.
 */
export const PORTAL_RETENTION_DAYS = 30;

/**
 * Deletes the portal sessions and connect links that expired more than PORTAL_RETENTION_DAYS ago,
 * whatever else became of them (used, completed, ended): without it every session minted, one per
 * page view of a platform's customer, would stay a row for good.
 */
export async function purgePortalRecords(
  db: Kysely<DB>,
  now: Date,
): Promise<{ portalSessions: number; connectLinks: number }> {
  const cutoff = new Date(now.getTime() - PORTAL_RETENTION_DAYS * DAY_MS);
  const portalSessions = await deleteInBatches(
    db,
    (batch) => sql`
      delete from portal_sessions where id in (
        select id from portal_sessions where expires_at < ${cutoff} limit ${batch})`,
  );
  const connectLinks = await deleteInBatches(
    db,
    (batch) => sql`
      delete from connect_sessions where id in (
        select id from connect_sessions where expires_at < ${cutoff} limit ${batch})`,
  );
  return { portalSessions, connectLinks };
}

/** Runs the purge every `intervalMs` (hourly), as the access records' retention runs. */
export function startPortalRetention(
  ctx: Pick<AppContext, 'db' | 'log' | 'now'>,
  intervalMs = RETENTION_INTERVAL_MS,
): { stop(): Promise<void> } {
  return runEvery(intervalMs, () =>
    purgePortalRecords(ctx.db, ctx.now())
      .then((purged) => {
        if (purged.portalSessions + purged.connectLinks > 0)
          ctx.log.info(purged, 'expired portal sessions and connect links deleted');
      })
      .catch((error: unknown) => ctx.log.warn(errorFields(error), 'portal sessions purge failed')),
  );
}
