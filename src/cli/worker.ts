import type { Config } from '../config.js';
import { openStorage } from '../db/storage.js';
import { createLogger } from '../logger.js';
import { createServices, startBackground } from '../services.js';
import { closeOnSignal } from './shutdown.js';

/** `hubgate worker`: the background jobs of its role, until SIGINT or SIGTERM (docs/operators/deployment.md). */
export async function worker(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const { database, keyring } = await openStorage(config, logger);
  const services = await createServices(config, { database, keyring, logger, workers: {} });
  const stopBackground = await startBackground(services, { role: 'worker' });
  const stop = () => stopBackground().then(() => services.close());
  const inFlight = async () => ({ deliveriesInFlight: services.workers?.inFlight() ?? [] });
  closeOnSignal({ logger, database, graceMs: config.shutdownGraceMs, stop, inFlight });
  logger.info({ engine: database.engine }, 'hubgate worker running');
}
