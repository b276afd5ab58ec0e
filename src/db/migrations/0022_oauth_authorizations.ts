import { sql, type Kysely } from 'kysely';

// An OAuth2 connection's authorization and its refresh lease move from four columns of `connections`
// to a table of their own, which oauth/ owns (docs/decisions/0070-oauth-authorizations-table.md):
// `connections` is written by connections/ alone again. One row per connection of an OAuth2
// connector, which goes with the connection; a connection without one shows `authorization: null`.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create table oauth_authorizations (
    connection_id text primary key references connections (id) on delete cascade,
    tenant_id text not null,
    status text not null,
    scopes jsonb not null,
    expires_at timestamptz,
    refreshing_until timestamptz
  )`);
  // Every connection that had an authorization keeps it as it was; a lease still held is copied
  // too, so a refresh started before the upgrade is still the only one until its lease runs out.
  await run(sql`insert into oauth_authorizations
      (connection_id, tenant_id, status, scopes, expires_at, refreshing_until)
    select id, tenant_id, authorization_status, coalesce(authorization_scopes, '[]'::jsonb),
      authorization_expires_at, authorization_refreshing_until
    from connections
    where authorization_status is not null`);
  await run(sql`alter table connections
    drop column authorization_status,
    drop column authorization_scopes,
    drop column authorization_expires_at,
    drop column authorization_refreshing_until`);
}
