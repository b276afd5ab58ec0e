import type { Kysely } from 'kysely';

// Audit entries are purged by age (AUDIT_RETENTION_DAYS): without an index on the time alone, each
// hourly purge would scan the whole log, which is the largest table a long-lived hub has.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('audit_log_created_at_idx').on('audit_log').column('created_at').execute();
}
