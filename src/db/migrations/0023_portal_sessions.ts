import { sql, type Kysely } from 'kysely';

// Portal sessions (docs/api/portal.md): a person of the platform's own system looks after one
// tenant's connections for a while, by link. The link's code and the token it is exchanged for are
// stored as keyed hashes only, as tenant keys are; each is unique while it is set. `connection_ids`
// null means every connection of the tenant, now and later.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create table portal_sessions (
    id text primary key,
    tenant_id text not null references tenants (id) on delete cascade,
    subject text not null,
    access text not null,
    connection_ids text[],
    code_hash text unique,
    code_expires_at timestamptz not null,
    token_hash text unique,
    expires_at timestamptz not null,
    created_at timestamptz not null,
    created_by_type text not null,
    created_by text,
    exchanged_at timestamptz,
    revoked_at timestamptz
  )`);
  await run(
    sql`create index portal_sessions_tenant_created on portal_sessions (tenant_id, created_at desc, id desc)`,
  );
}
