import { loadConnectorCatalog } from '../connections/catalog.js';
import type { Config } from '../config.js';
import { createWakeup } from '../delivery/wakeup.js';
import { startDeliveryWorkers } from '../delivery/worker.js';
import { openStorage } from '../db/storage.js';
import { createLogger } from '../logger.js';
import { createMetrics } from '../platform/metrics.js';
import { closeOnSignal } from './shutdown.js';

/** `hubgate worker`: delivery workers only, until SIGINT or SIGTERM (contract §1). */
export async function worker(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const { database, keyring } = await openStorage(config, logger);
  const catalog = await loadConnectorCatalog(config.disabledConnectors);
  const ctx = {
    config,
    db: database.kysely,
    keyring,
    log: logger,
    metrics: createMetrics(),
    now: () => new Date(),
  };
  const workers = await startDeliveryWorkers({ ctx, catalog }, database, createWakeup(), {});
  closeOnSignal(logger, database, () => workers.stop());
  logger.info({ engine: database.engine }, 'hubgate worker running');
}
