import { sql, type Kysely } from 'kysely';

// Forward-only: a shipped migration is never edited; a change is a new numbered file.
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const step of steps) await step(db);
}

/** The statements, in order: one table or index each. */
const steps: Array<(db: Kysely<unknown>) => Promise<unknown>> = [
  (db) =>
    db.schema
      .createTable('tenants')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute(),
  (db) => db.schema.createIndex('tenants_created_idx').on('tenants').columns(['created_at', 'id']).execute(),
  (db) =>
    db.schema
      .createTable('tenant_entitlements')
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('module_key', 'text', (c) => c.notNull())
      .addColumn('granted_at', 'timestamptz', (c) => c.notNull())
      .addPrimaryKeyConstraint('tenant_entitlements_pk', ['tenant_id', 'module_key'])
      .execute(),
  (db) =>
    db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('role', 'text', (c) =>
        c.notNull().check(sql`role in ('COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN', 'MEMBER')`),
      )
      .addColumn('password_hash', 'text')
      .addColumn('password_sign_in_enabled', 'boolean', (c) => c.notNull().defaultTo(true))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute(),
  (db) =>
    db.schema.createIndex('users_tenant_idx').on('users').columns(['tenant_id', 'created_at']).execute(),
  (db) =>
    db.schema
      .createTable('platform_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .addColumn('expires_at', 'timestamptz')
      .addColumn('revoked_at', 'timestamptz')
      .addColumn('last_used_at', 'timestamptz')
      .execute(),
  (db) =>
    db.schema
      .createTable('audit_log')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('tenant_id', 'text')
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text')
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target_type', 'text')
      .addColumn('target_id', 'text')
      .addColumn('ip', 'text')
      .addColumn('request_id', 'text')
      .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
      .addColumn('created_at', 'timestamptz', (c) => c.notNull())
      .execute(),
  (db) =>
    db.schema
      .createIndex('audit_log_tenant_idx')
      .on('audit_log')
      .columns(['tenant_id', 'created_at', 'id'])
      .execute(),
];
