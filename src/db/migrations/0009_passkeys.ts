import type { Kysely } from 'kysely';

// Passkeys (docs/api/passkeys.md): what verifying a WebAuthn assertion needs, never anything that could sign,
// and the single-use challenges of the ceremonies, kept in the database so any process can finish
// a ceremony another one started.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One stable random user handle per user (base64url), made when the first passkey is offered.
  await db.schema
    .alterTable('users')
    .addColumn('webauthn_user_id', 'text', (c) => c.unique())
    .execute();

  await db.schema
    .createTable('passkeys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tenant_id', 'text', (c) => c.notNull().references('tenants.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('credential_id', 'text', (c) => c.notNull().unique())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('counter', 'bigint', (c) => c.notNull())
    .addColumn('transports', 'jsonb', (c) => c.notNull())
    .addColumn('backup_eligible', 'boolean', (c) => c.notNull())
    .addColumn('backed_up', 'boolean', (c) => c.notNull())
    .addColumn('aaguid', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_used_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('passkeys_user_idx')
    .on('passkeys')
    .columns(['user_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('webauthn_challenges')
    .addColumn('challenge', 'text', (c) => c.primaryKey())
    .addColumn('ceremony', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.references('sessions.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webauthn_challenges_expiry_idx')
    .on('webauthn_challenges')
    .column('expires_at')
    .execute();
}
