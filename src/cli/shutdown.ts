import type { Logger } from 'pino';
import type { Database } from '../db/database.js';

/** On SIGINT or SIGTERM, once: stop the work, then close the database whatever happened. */
export function closeOnSignal(logger: Logger, database: Database, stop: () => Promise<unknown>): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    try {
      await stop();
    } finally {
      await database.close();
    }
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}
