import { buildApp } from '../app.js';
import type { Config } from '../config.js';
import { openStorage } from '../db/storage.js';
import { createLogger } from '../logger.js';
import { closeOnSignal } from './shutdown.js';

/** `hubgate serve`: the API and web UI in one process, until SIGINT or SIGTERM. */
export async function serve(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  const { database, keyring } = await openStorage(config, logger);
  const app = await buildApp(config, { database, keyring, logger, workers: {} });
  closeOnSignal(logger, database, () => app.close());
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await database.close();
    throw error;
  }
  logger.info(
    { engine: database.engine, publicUrl: config.publicUrl.origin },
    `hubgate listening on http://${config.host}:${(app.server.address() as { port: number }).port}`,
  );
}
