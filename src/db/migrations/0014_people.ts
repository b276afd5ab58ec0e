import { sql, type Kysely } from 'kysely';

// The tenant's people (docs/api/people.md): a user is `invited` until they accept the invitation
// link (then `active`), and when each last signed in. Invitations keep a keyed hash of their token,
// never the token: single use (`used_at`), seven days; deleted with their user.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`alter table users
    add column status text not null default 'active' check (status in ('active', 'invited')),
    add column last_sign_in_at timestamptz`);
  // Users who signed in before this column existed: their newest session still kept says when.
  await run(sql`update users u set last_sign_in_at = s.last
    from (select user_id, max(created_at) as last from sessions group by user_id) s
    where s.user_id = u.id`);
  await run(sql`create table invitations (
    token_hash text primary key,
    tenant_id text not null references tenants (id) on delete cascade,
    user_id text not null references users (id) on delete cascade,
    created_at timestamptz not null,
    expires_at timestamptz not null,
    used_at timestamptz
  )`);
  await run(sql`create index invitations_user_idx on invitations (user_id)`);
}
