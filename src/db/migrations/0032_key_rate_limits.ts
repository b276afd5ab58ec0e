import { sql, type Kysely } from 'kysely';

// A tenant key's own requests per minute (docs/api/keys.md, docs/decisions/0091-…): null, as every
// existing key has, is the global RATE_LIMIT_PER_MINUTE. The bounds are the API's, kept by the
// database too.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table api_keys add column rate_limit_per_minute integer
    check (rate_limit_per_minute between 1 and 100000)`.execute(db);
}
