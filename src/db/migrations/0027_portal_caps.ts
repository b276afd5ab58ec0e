import { sql, type Kysely } from 'kysely';

// Caps and retention of portal sessions and connect links (docs/decisions/0077-…). Every create
// counts the tenant's sessions or links that still work (portal/caps.ts): the partial indexes hold
// only rows not ended, so the count reads the live rows and the recently lapsed ones, not the weeks
// of ended ones retention keeps. The hourly purge deletes by expiry alone, and needs the time alone.
export async function up(db: Kysely<unknown>): Promise<void> {
  const run = (statement: ReturnType<typeof sql>) => statement.execute(db);
  await run(sql`create index portal_sessions_tenant_live on portal_sessions (tenant_id, expires_at)
    where revoked_at is null`);
  await run(sql`create index portal_sessions_expires_at on portal_sessions (expires_at)`);
  await run(sql`create index connect_sessions_tenant_pending on connect_sessions (tenant_id, expires_at)
    where revoked_at is null and completed_at is null`);
  await run(sql`create index connect_sessions_expires_at on connect_sessions (expires_at)`);
}
