import { type Kysely, type RawBuilder } from 'kysely';
import type { DB } from './schema.js';

const BATCH = 1_000;

/**
 * Runs a delete of at most `batch` rows (`… where id in (select id … limit ${batch})`) until one
 * deletes less than a batch, so no long lock holds up the writers of the table. Returns the count.
 */
export async function deleteInBatches(
  db: Kysely<DB>,
  statement: (batch: number) => RawBuilder<unknown>,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const result = await statement(BATCH).execute(db);
    const n = Number(result.numAffectedRows ?? 0);
    deleted += n;
    if (n < BATCH) return deleted;
  }
}
