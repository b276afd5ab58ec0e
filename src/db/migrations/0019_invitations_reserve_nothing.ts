import { sql, type Kysely } from 'kysely';

// A pending invitation reserves no e-mail address (docs/api/people.md,
// docs/decisions/0062-pending-invitations-reserve-nothing.md). An address is unique among active
// users only, across the service, and among a tenant's people, active or invited; several tenants
// may have invited one address. The pending invitations of a tenant are counted for the cap (the
// partial index), and each link made is written down for an hour for the rate of links.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create unique index users_active_email_idx on users (email) where status = 'active'`);
  await run(sql`create unique index users_tenant_email_idx on users (tenant_id, email)`);
  await run(sql`alter table users drop constraint users_email_key`);
  await run(sql`create index invitations_pending_idx on invitations (tenant_id, expires_at)
    where used_at is null`);
  await run(sql`create table invitation_links (
    tenant_id text not null references tenants (id) on delete cascade,
    email text not null,
    made_at timestamptz not null
  )`);
  await run(sql`create index invitation_links_tenant_idx on invitation_links (tenant_id, made_at)`);
}
