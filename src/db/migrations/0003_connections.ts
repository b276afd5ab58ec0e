import type { Kysely } from 'kysely';

// Integration connections (issue: integration hub). Secrets live only in the sealed columns.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('connections')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('connector_key', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('config', 'jsonb', (c) => c.notNull())
    // AES-256-GCM under the connection-credentials key, bound to the connection ID.
    .addColumn('credentials_sealed', 'text')
    .addColumn('credentials_bound_at', 'timestamptz')
    // A re-bound webhook signing secret stays valid for a while so receivers can switch over.
    .addColumn('previous_credentials_sealed', 'text')
    .addColumn('previous_valid_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('revoked_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('connections_tenant_idx')
    .on('connections')
    .columns(['tenant_id', 'created_at', 'id'])
    .execute();
}
