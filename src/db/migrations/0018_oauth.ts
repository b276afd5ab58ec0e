import { sql, type Kysely } from 'kysely';

// OAuth2 connectors (docs/api/oauth.md, docs/decisions/0060-oauth2-connections.md). Providers are the
// operator's, for every tenant; their client secret is sealed. A connection of a provider keeps its
// tokens where every connection keeps its credentials (`credentials_sealed`), and what the API may
// show of its authorization in three new columns, null for connectors that have none. An
// authorization in progress is a single-use `state`, kept as a keyed hash with its PKCE verifier
// sealed, bound to the user and connection that started it. A refresh of a connection's tokens holds
// a lease on it (`authorization_refreshing_until`) rather than a transaction across the provider's call.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create table oauth_providers (
    key text primary key,
    name text not null,
    authorization_url text,
    token_url text not null,
    api_base_url text not null,
    client_id text not null,
    client_secret_sealed text not null,
    scopes jsonb not null,
    grant_type text not null,
    created_at timestamptz not null,
    updated_at timestamptz not null
  )`);
  await run(sql`alter table connections
    add column authorization_status text,
    add column authorization_scopes jsonb,
    add column authorization_expires_at timestamptz,
    add column authorization_refreshing_until timestamptz`);
  await run(sql`create table oauth_states (
    state_hash text primary key,
    tenant_id text not null references tenants (id) on delete cascade,
    connection_id text not null references connections (id) on delete cascade,
    user_id text not null,
    verifier_sealed text not null,
    created_at timestamptz not null,
    expires_at timestamptz not null
  )`);
  await run(sql`create index oauth_states_expires_idx on oauth_states (expires_at)`);
}
