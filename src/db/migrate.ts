import { Migrator } from 'kysely/migration';
import type { Database } from './database.js';
import { MIGRATIONS } from './migrations/index.js';
import { layOutPartitions } from './partitions.js';

function migrator(database: Database): Migrator {
  return new Migrator({
    db: database.kysely,
    provider: { getMigrations: async () => MIGRATIONS },
    migrationTableName: 'hubgate_migrations',
    migrationLockTableName: 'hubgate_migrations_lock',
  });
}

/**
 * Applies every pending migration, and lays out the delivery partitions (on PostgreSQL the coming
 * days', which the workers then keep ahead; see partitions.ts); returns the names applied. Safe to run from several processes.
 */
export async function migrateToLatest(database: Database): Promise<string[]> {
  const { error, results } = await migrator(database).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  await layOutPartitions(database.kysely, database.engine, new Date());
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

export async function pendingMigrations(database: Database): Promise<string[]> {
  const all = await migrator(database).getMigrations();
  return all.filter((m) => m.executedAt === undefined).map((m) => m.name);
}
