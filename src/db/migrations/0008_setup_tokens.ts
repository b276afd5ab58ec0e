import type { Kysely } from 'kysely';

// First-run setup (docs/operators/setup.md): the one-time tokens `serve` prints while no user exists. Only a
// keyed hash of each token is kept; a row is usable until it expires or setup is done.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('setup_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
}
