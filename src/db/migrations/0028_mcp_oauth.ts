import { sql, type Kysely } from 'kysely';

// OAuth for MCP clients (docs/api/mcp.md, docs/decisions/0087-…): hubgate is the authorization
// server of its own MCP route. mcp-oauth/ owns these tables.
// - mcp_clients: dynamically registered public clients (RFC 7591); anyone may register, so rows
//   that never got a grant are purged after a day.
// - mcp_auth_requests: an /oauth/authorize request waiting for a person's consent (10 minutes).
// - mcp_grants: a consent: a tenant, the approving person, the scopes, and the one-use code (a
//   keyed hash) it was answered with. Revoking it ends every token of it.
// - mcp_tokens: access (1 hour) and refresh (30 days, rotated: a used one is kept to detect reuse)
//   tokens of a grant, as keyed hashes.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create table mcp_clients (
    id text primary key,
    name text not null,
    redirect_uris jsonb not null,
    created_at timestamptz not null
  )`);
  await run(sql`create index mcp_clients_created_at on mcp_clients (created_at)`);
  await run(sql`create table mcp_auth_requests (
    id text primary key,
    client_id text not null references mcp_clients (id) on delete cascade,
    redirect_uri text not null,
    state text,
    code_challenge text not null,
    scopes text[] not null,
    expires_at timestamptz not null
  )`);
  await run(sql`create index mcp_auth_requests_expires_at on mcp_auth_requests (expires_at)`);
  await run(sql`create table mcp_grants (
    id text primary key,
    tenant_id text not null references tenants (id) on delete cascade,
    client_id text not null references mcp_clients (id) on delete cascade,
    user_id text not null references users (id) on delete cascade,
    scopes text[] not null,
    redirect_uri text not null,
    code_hash text not null unique,
    code_challenge text not null,
    code_expires_at timestamptz not null,
    code_used_at timestamptz,
    created_at timestamptz not null,
    last_used_at timestamptz,
    revoked_at timestamptz
  )`);
  await run(sql`create index mcp_grants_tenant on mcp_grants (tenant_id, created_at)`);
  await run(sql`create index mcp_grants_client on mcp_grants (client_id)`);
  await run(sql`create table mcp_tokens (
    token_hash text primary key,
    grant_id text not null references mcp_grants (id) on delete cascade,
    kind text not null check (kind in ('access', 'refresh')),
    expires_at timestamptz not null,
    used_at timestamptz
  )`);
  await run(sql`create index mcp_tokens_grant on mcp_tokens (grant_id)`);
  await run(sql`create index mcp_tokens_expires_at on mcp_tokens (expires_at)`);
}
