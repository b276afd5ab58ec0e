import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB, SetupTokensTable } from '../db/schema.js';

export type SetupTokenRow = Selectable<SetupTokensTable>;

export async function insertSetupToken(db: Kysely<DB>, row: SetupTokenRow): Promise<void> {
  await db.insertInto('setup_tokens').values(row).execute();
}

/** Tokens past their expiry are useless; each start of `serve` that makes a new one sweeps them. */
export async function deleteExpiredSetupTokens(db: Kysely<DB>, now: Date): Promise<void> {
  await db.deleteFrom('setup_tokens').where('expires_at', '<=', now).execute();
}

/** Once setup is done every token is useless: none is kept. */
export async function deleteAllSetupTokens(db: Kysely<DB>): Promise<void> {
  await db.deleteFrom('setup_tokens').execute();
}

export async function isLiveSetupToken(db: Kysely<DB>, tokenHash: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('setup_tokens')
    .select('token_hash')
    .where('token_hash', '=', tokenHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Serializes first-run setups, in every process sharing the database, until the end of the
 * transaction: the second of two concurrent setups waits, then finds the user the first made.
 */
export async function lockSetup(trx: Kysely<DB>): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended('hubgate:first-run-setup', 0))`.execute(trx);
}
