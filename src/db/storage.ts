import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { createKeyring, type Keyring } from '../crypto/keyring.js';
import { resolveMasterKey } from '../crypto/master-key.js';
import { openDatabase, type Database } from './database.js';
import { migrateToLatest, pendingMigrations } from './migrate.js';

export class SchemaOutdatedError extends Error {}

/**
 * The database and keyring every command starts from, checked up front (fail fast): the embedded
 * database is locked, created and migrated on first use; PostgreSQL must already be migrated by
 * `hubgate migrate`, so that several processes never race to change the schema on start-up.
 */
export async function openStorage(
  config: Config,
  logger?: Logger,
  options: { migrate?: boolean } = {},
): Promise<{ database: Database; keyring: Keyring }> {
  const keyring = createKeyring(resolveMasterKey(config));
  const database = await openDatabase(config.database, logger);
  try {
    if (config.database.kind === 'embedded' || options.migrate) {
      const applied = await migrateToLatest(database);
      if (applied.length > 0) logger?.info({ applied }, 'migrations applied');
    } else {
      const pending = await pendingMigrations(database);
      if (pending.length > 0) {
        throw new SchemaOutdatedError(
          `the database schema is not up to date (${pending.length} pending migration${pending.length === 1 ? '' : 's'}): run \`hubgate migrate\` first`,
        );
      }
    }
    return { database, keyring };
  } catch (error) {
    await database.close();
    throw error;
  }
}
