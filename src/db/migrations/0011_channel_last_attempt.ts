import type { Kysely } from 'kysely';

// The last delivery attempt of each alerting channel (a notification or a test), for the operator
// console: when, whether it was taken, the answer's status and the error in words, never a secret.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('alert_channels').addColumn('last_attempt', 'jsonb').execute();
}
