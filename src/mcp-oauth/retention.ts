import type { AppContext } from '../context.js';
import { errorFields } from '../logger.js';
import { RETENTION_INTERVAL_MS, runEvery } from '../periodic.js';
import { purgeMcpOAuth } from './store.js';

/** Runs the MCP clients' OAuth purge (store.ts) every `intervalMs` (hourly), as the other retentions run. */
export function startMcpOAuthRetention(
  ctx: Pick<AppContext, 'db' | 'log' | 'now'>,
  intervalMs = RETENTION_INTERVAL_MS,
): { stop(): Promise<void> } {
  return runEvery(intervalMs, () =>
    purgeMcpOAuth(ctx.db, ctx.now())
      .then((deleted) => {
        if (deleted > 0) ctx.log.info({ deleted }, 'expired MCP client requests, tokens and grants deleted');
      })
      .catch((error: unknown) => ctx.log.warn(errorFields(error), 'MCP client OAuth purge failed')),
  );
}
