import type { AppContext } from '../context.js';
import { errorFields } from '../logger.js';
import { RETENTION_INTERVAL_MS, runEvery } from '../periodic.js';
import { purgeUsage } from './store.js';

/** Usage is kept this long, whatever DELIVERY_RETENTION_DAYS says (docs/api/usage.md). */
export const USAGE_RETENTION_DAYS = 400;

const DAY_MS = 86_400_000;

/** Every `intervalMs` (hourly): the usage hours older than 400 days. */
export function startUsageRetention(
  ctx: Pick<AppContext, 'db' | 'log' | 'now'>,
  intervalMs = RETENTION_INTERVAL_MS,
): { stop(): Promise<void> } {
  return runEvery(intervalMs, () =>
    purgeUsage(ctx.db, new Date(ctx.now().getTime() - USAGE_RETENTION_DAYS * DAY_MS))
      .then((deleted) => {
        if (deleted > 0) ctx.log.info({ deleted }, 'usage hours past 400 days deleted');
      })
      .catch((error: unknown) => ctx.log.warn(errorFields(error), 'usage purge failed')),
  );
}
