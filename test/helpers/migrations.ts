import type { Kysely } from 'kysely';
import { Migrator } from 'kysely/migration';
import { MIGRATIONS } from '../../src/db/migrations/index.js';
import type { DB } from '../../src/db/schema.js';

/**
 * Migrates an empty database up to, not including, the migration whose name starts with `first`
 * (`'0022'`): the schema an older release left, for a test that writes rows there and then checks
 * what the migrations from `first` on make of them. Throws, naming `first`, when one of them fails.
 */
export async function migrateBefore(db: Kysely<DB>, first: string): Promise<void> {
  const before = Object.fromEntries(Object.entries(MIGRATIONS).filter(([name]) => name < first));
  const { error } = await new Migrator({
    db,
    provider: { getMigrations: async () => before },
    migrationTableName: 'hubgate_migrations',
    migrationLockTableName: 'hubgate_migrations_lock',
  }).migrateToLatest();
  if (error) throw new Error(`the migrations before ${first} fail on an empty database`, { cause: error });
}
