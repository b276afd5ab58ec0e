import { sql, type Kysely } from 'kysely';

// Connect links (docs/api/connect-links.md): one new connection of a tenant, made by a person with no
// hubgate account who holds the link. Only a keyed hash of the link's code is kept. `config` holds
// the connector fields the link fixed in advance. A complete claims the link for a moment
// (`completing_until`) while it creates the connection, so two completes cannot both make one, and
// a process that dies meanwhile does not hold it for good; `connection_id` is set once completed.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create table connect_sessions (
    id text primary key,
    tenant_id text not null references tenants (id) on delete cascade,
    connector_key text not null,
    subject text not null,
    display_name text,
    config jsonb not null,
    code_hash text not null unique,
    expires_at timestamptz not null,
    created_at timestamptz not null,
    created_by_type text not null,
    created_by text,
    completing_until timestamptz,
    completed_at timestamptz,
    connection_id text,
    revoked_at timestamptz
  )`);
  await run(
    sql`create index connect_sessions_tenant_created on connect_sessions (tenant_id, created_at desc, id desc)`,
  );
}
