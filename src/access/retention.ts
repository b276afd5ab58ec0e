import { sql, type Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import { deleteInBatches } from '../db/delete-in-batches.js';
import type { DB } from '../db/schema.js';
import { errorFields } from '../logger.js';
import { RETENTION_INTERVAL_MS, runEvery } from '../periodic.js';
import { SIGN_IN_FAILURE_WINDOW_MS } from './session-store.js';

const DAY_MS = 86_400_000;

/**
 * Deletes sign-in failures whose window has passed (they lock nothing any more) and audit entries
 * older than AUDIT_RETENTION_DAYS (docs/api/limits.md).
 */
export async function purgeAccessRecords(
  db: Kysely<DB>,
  now: Date,
  auditRetentionDays: number,
): Promise<{ signInFailures: number; auditEntries: number }> {
  const windowStart = new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS);
  // The table has no key of its own; a row's ctid names it for the statement's duration.
  const signInFailures = await deleteInBatches(
    db,
    (batch) => sql`
      delete from sign_in_failures where ctid = any(array(
        select ctid from sign_in_failures where failed_at <= ${windowStart} limit ${batch}))`,
  );
  const auditCutoff = new Date(now.getTime() - auditRetentionDays * DAY_MS);
  const auditEntries = await deleteInBatches(
    db,
    (batch) => sql`
      delete from audit_log where id in (
        select id from audit_log where created_at < ${auditCutoff} limit ${batch})`,
  );
  return { signInFailures, auditEntries };
}

/**
 * Runs the purge every `intervalMs` (hourly) beside the delivery workers, as their own retention
 * does; several processes may run it at once. One run at a time per process.
 */
export function startAccessRetention(
  ctx: Pick<AppContext, 'config' | 'db' | 'log' | 'now'>,
  intervalMs = RETENTION_INTERVAL_MS,
): { stop(): Promise<void> } {
  return runEvery(intervalMs, () =>
    purgeAccessRecords(ctx.db, ctx.now(), ctx.config.auditRetentionDays)
      .then((purged) => {
        if (purged.signInFailures + purged.auditEntries > 0)
          ctx.log.info(purged, 'expired access records deleted');
      })
      .catch((error: unknown) => ctx.log.warn(errorFields(error), 'access records purge failed')),
  );
}
