import { sql, type Kysely } from 'kysely';

// OAuth2 authorizations started without a signed-in user (docs/decisions/0076-oauth-from-portal-and-links.md):
// a state is owned by exactly one of a user, a portal session or a connect link, and goes with its
// owner. A portal session may now hold several tokens, one per code exchanged: the code a callback
// hands back to the portal opens a second tab without ending the first one's token.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`alter table oauth_states
    alter column user_id drop not null,
    add column portal_session_id text references portal_sessions (id) on delete cascade,
    add column connect_session_id text references connect_sessions (id) on delete cascade`);
  await run(sql`alter table oauth_states add constraint oauth_states_one_owner
    check (num_nonnulls(user_id, portal_session_id, connect_session_id) = 1)`);
  await run(sql`create table portal_session_tokens (
    token_hash text primary key,
    session_id text not null references portal_sessions (id) on delete cascade,
    created_at timestamptz not null
  )`);
  await run(sql`create index portal_session_tokens_session on portal_session_tokens (session_id)`);
  await run(sql`insert into portal_session_tokens (token_hash, session_id, created_at)
    select token_hash, id, coalesce(exchanged_at, created_at) from portal_sessions where token_hash is not null`);
  await run(sql`alter table portal_sessions drop column token_hash`);
}
