import type { AppContext } from '../context.js';
import { errorFields } from '../logger.js';
import { RETENTION_INTERVAL_MS, runEvery } from '../periodic.js';
import { DEDUPLICATION_MS } from './ingest.js';
import { purgeSourceRecords } from './store.js';

/**
 * Every `intervalMs` (hourly): the request log past DELIVERY_RETENTION_DAYS, as deliveries are
 * kept, and provider delivery IDs past their 7 days.
 */
export function startSourceRetention(
  ctx: Pick<AppContext, 'db' | 'log' | 'now' | 'config'>,
  intervalMs = RETENTION_INTERVAL_MS,
): { stop(): Promise<void> } {
  return runEvery(intervalMs, () =>
    purgeSourceRecords(ctx.db, ctx.now(), ctx.config.delivery.retentionDays, DEDUPLICATION_MS)
      .then((deleted) => {
        if (deleted > 0) ctx.log.info({ deleted }, 'old source requests and delivery IDs deleted');
      })
      .catch((error: unknown) => ctx.log.warn(errorFields(error), 'source records purge failed')),
  );
}
