import type { Server } from 'node:http';
import type { Kysely } from 'kysely';
import { buildApp } from '../app.js';
import type { Config } from '../config.js';
import type { Keyring } from '../crypto/keyring.js';
import type { DB } from '../db/schema.js';
import { openStorage } from '../db/storage.js';
import { createLogger, LogOutput } from '../logger.js';
import { createServices, startBackground } from '../services.js';
import { issueSetupToken, setupUrl } from '../setup/setup.js';
import { closeOnSignal } from './shutdown.js';

/** `hubgate serve`: the API and web UI in one process, until SIGINT or SIGTERM. */
export async function serve(config: Config): Promise<void> {
  // Standard output, as createLogger would make it; kept at hand for announceSetup.
  const logOutput = new LogOutput();
  const logger = createLogger(config.logLevel, logOutput);
  const { database, keyring } = await openStorage(config, logger);
  const services = await createServices(config, { database, keyring, logger, workers: {} });
  const app = await buildApp(config, services);
  const stopBackground = await startBackground(services, { role: 'serve' });
  closeOnSignal({
    logger,
    database,
    graceMs: config.shutdownGraceMs,
    // The listening socket closes at once, idle keep-alive connections with it; the requests in
    // flight end with `Connection: close`, and the delivery worker stops claiming meanwhile, not
    // once the last request has ended (docs/decisions/0054-graceful-shutdown.md).
    stop: async () => {
      const background = stopBackground();
      await Promise.all([app.close(), background]);
      await services.close();
    },
    inFlight: async () => ({ openConnections: await openConnections(app.server) }),
  });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await stopBackground();
    await services.close();
    await database.close();
    throw error;
  }
  logger.info(
    { engine: database.engine, publicUrl: config.publicUrl.origin },
    `hubgate listening on http://${config.host}:${(app.server.address() as { port: number }).port}`,
  );
  await announceSetup(config, database.kysely, keyring, logOutput);
}

/** Connections the server still holds (each with a request in flight, once it stopped listening). */
function openConnections(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.getConnections((error, count) => (error ? reject(error) : resolve(count)));
  });
}

/**
 * While no user exists, a new one-time setup token and the one line that carries it (docs/operators/setup.md):
 * on standard output after the log lines so far, and never through the logger, so that no log
 * pipeline ever keeps it. The only secret serve prints; nothing at all once a user exists.
 */
async function announceSetup(config: Config, db: Kysely<DB>, keyring: Keyring, logOutput: LogOutput) {
  const issued = await issueSetupToken(db, keyring, new Date());
  if (!issued) return;
  const url = setupUrl(config.publicUrl.origin, issued.token);
  // Into the log lines' own output, behind every line so far (it gathers lines before it writes
  // them: a line written beside it could overtake them), and on its way at once.
  logOutput.write(`Set up hubgate in your browser: ${url}  (valid 24 hours, once)\n`);
  logOutput.flush();
}
