import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import { deleteInBatches } from '../db/delete-in-batches.js';
import type { DB, McpAuthRequestsTable, McpClientsTable, McpGrantsTable } from '../db/schema.js';

// The tables of OAuth for MCP clients (src/db/migrations/0028_mcp_oauth.ts). Clients and pending
// requests belong to no tenant yet (anyone may register and ask); a grant and its tokens belong to
// the tenant of the person who approved it, and every read of them by a tenant takes its scope.

export type McpClient = Selectable<McpClientsTable>;
export type McpAuthRequest = Selectable<McpAuthRequestsTable>;
export type McpGrant = Selectable<McpGrantsTable>;

export async function insertClient(db: Kysely<DB>, client: McpClient): Promise<void> {
  await db
    .insertInto('mcp_clients')
    .values({ ...client, redirect_uris: JSON.stringify(client.redirect_uris) })
    .execute();
}

export async function findClient(db: Kysely<DB>, id: string): Promise<McpClient | undefined> {
  return db.selectFrom('mcp_clients').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertAuthRequest(db: Kysely<DB>, request: McpAuthRequest): Promise<void> {
  await db.insertInto('mcp_auth_requests').values(request).execute();
}

/** A pending request with its client, while it has not expired. */
export async function findAuthRequest(
  db: Kysely<DB>,
  id: string,
  now: Date,
): Promise<(McpAuthRequest & { client_name: string }) | undefined> {
  return db
    .selectFrom('mcp_auth_requests as r')
    .innerJoin('mcp_clients as c', 'c.id', 'r.client_id')
    .selectAll('r')
    .select('c.name as client_name')
    .where('r.id', '=', id)
    .where('r.expires_at', '>', now)
    .executeTakeFirst();
}

/** Takes a pending request: answered once, by whoever approves or denies it first. */
export async function takeAuthRequest(
  db: Kysely<DB>,
  id: string,
  now: Date,
): Promise<McpAuthRequest | undefined> {
  return db
    .deleteFrom('mcp_auth_requests')
    .where('id', '=', id)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

export async function insertGrant(db: Kysely<DB>, scope: TenantScope, grant: McpGrant): Promise<void> {
  await db
    .insertInto('mcp_grants')
    .values({ ...grant, tenant_id: scope.tenantId })
    .execute();
}

/**
 * Uses a grant's code: the grant when the code is unused and unexpired (now used), else what the
 * code belonged to, so that a replay can end the grant (`replayed`).
 */
export async function useCode(
  db: Kysely<DB>,
  codeHash: string,
  now: Date,
): Promise<{ grant: McpGrant; first: boolean } | undefined> {
  const used = await db
    .updateTable('mcp_grants')
    .set({ code_used_at: now })
    .where('code_hash', '=', codeHash)
    .where('code_used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('code_expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
  if (used) return { grant: used, first: true };
  const grant = await db
    .selectFrom('mcp_grants')
    .selectAll()
    .where('code_hash', '=', codeHash)
    .executeTakeFirst();
  return grant ? { grant, first: false } : undefined;
}

/** Ends a grant and every token of it, whoever asks (a replayed code or refresh token). */
export async function revokeGrantById(db: Kysely<DB>, grantId: string, now: Date): Promise<void> {
  await db
    .updateTable('mcp_grants')
    .set({ revoked_at: now })
    .where('id', '=', grantId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** A tenant revokes its grant; false when the tenant has no such grant still in force. */
export async function revokeGrant(
  db: Kysely<DB>,
  scope: TenantScope,
  grantId: string,
  now: Date,
): Promise<McpGrant | undefined> {
  return db
    .updateTable('mcp_grants')
    .set({ revoked_at: now })
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', grantId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export interface GrantListing extends McpGrant {
  client_name: string;
  user_email: string;
}

/** The tenant's grants in force (their code exchanged), newest first. */
export async function listGrants(db: Kysely<DB>, scope: TenantScope): Promise<GrantListing[]> {
  return db
    .selectFrom('mcp_grants as g')
    .innerJoin('mcp_clients as c', 'c.id', 'g.client_id')
    .innerJoin('users as u', 'u.id', 'g.user_id')
    .selectAll('g')
    .select(['c.name as client_name', 'u.email as user_email'])
    .where('g.tenant_id', '=', scope.tenantId)
    .where('g.revoked_at', 'is', null)
    .where('g.code_used_at', 'is not', null)
    .orderBy('g.created_at', 'desc')
    .limit(200)
    .execute();
}

export async function insertTokens(
  db: Kysely<DB>,
  grantId: string,
  tokens: Array<{ hash: string; kind: 'access' | 'refresh'; expiresAt: Date }>,
): Promise<void> {
  await db
    .insertInto('mcp_tokens')
    .values(
      tokens.map((t) => ({ token_hash: t.hash, grant_id: grantId, kind: t.kind, expires_at: t.expiresAt })),
    )
    .execute();
}

/**
 * Uses a refresh token: its grant when the token is unused, unexpired and the grant in force (the
 * token now used); `first: false` with the grant when it was used before (a replay).
 */
export async function useRefreshToken(
  db: Kysely<DB>,
  hash: string,
  now: Date,
): Promise<{ grant: McpGrant; first: boolean } | undefined> {
  const used = await db
    .updateTable('mcp_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', hash)
    .where('kind', '=', 'refresh')
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning('grant_id')
    .executeTakeFirst();
  const grantId =
    used?.grant_id ??
    (
      await db
        .selectFrom('mcp_tokens')
        .select('grant_id')
        .where('token_hash', '=', hash)
        .where('kind', '=', 'refresh')
        .where('used_at', 'is not', null)
        .executeTakeFirst()
    )?.grant_id;
  if (grantId === undefined) return undefined;
  const grant = await db
    .selectFrom('mcp_grants')
    .selectAll()
    .where('id', '=', grantId)
    .executeTakeFirstOrThrow();
  return { grant, first: used !== undefined };
}

/** What an access token is checked against: its grant, client, approving person and tenant. */
export interface AccessTokenForVerification {
  row: {
    id: string;
    tenant_id: string;
    scopes: string[];
    expires_at: Date;
    revoked_at: Date | null;
    client_name: string;
    user_role: string;
    user_status: string;
  };
  entitlements: string[];
}

/** An access token's grant by the token's keyed hash; tenant-agnostic: the secret names the tenant. */
export async function findAccessToken(
  db: Kysely<DB>,
  hash: string,
): Promise<AccessTokenForVerification | undefined> {
  const row = await db
    .selectFrom('mcp_tokens as t')
    .innerJoin('mcp_grants as g', 'g.id', 't.grant_id')
    .innerJoin('mcp_clients as c', 'c.id', 'g.client_id')
    .innerJoin('users as u', 'u.id', 'g.user_id')
    .select([
      'g.id',
      'g.tenant_id',
      'g.scopes',
      't.expires_at',
      'g.revoked_at',
      'c.name as client_name',
      'u.role as user_role',
      'u.status as user_status',
    ])
    .select(
      sql<
        string[]
      >`coalesce((select json_agg(e.module_key order by e.module_key) from tenant_entitlements e where e.tenant_id = g.tenant_id), '[]'::json)`.as(
        'entitlements',
      ),
    )
    .where('t.token_hash', '=', hash)
    .where('t.kind', '=', 'access')
    .executeTakeFirst();
  if (!row) return undefined;
  const { entitlements, ...grant } = row;
  return { row: grant, entitlements };
}

/** Writes a batch of last-used times in one statement; never moves a time backwards. */
export async function recordGrantsUsed(db: Kysely<DB>, entries: Array<[string, Date]>): Promise<void> {
  if (entries.length === 0) return;
  const values = sql.join(entries.map(([id, at]) => sql`(${id}, ${at.toISOString()}::timestamptz)`));
  await sql`update mcp_grants set last_used_at = v.at
    from (values ${values}) as v(id, at)
    where mcp_grants.id = v.id and (mcp_grants.last_used_at is null or mcp_grants.last_used_at < v.at)`.execute(
    db,
  );
}

/**
 * Hourly: requests past their 10 minutes, tokens past their end (a used refresh token too: it is
 * kept only while a replay of it could still be told apart), grants revoked a week ago or never
 * exchanged, and clients a day old that no grant names (anyone may register one). In batches, as
 * every purge: registrations from many addresses can make many rows.
 */
export async function purgeMcpOAuth(db: Kysely<DB>, now: Date): Promise<number> {
  const dayAgo = new Date(now.getTime() - 86_400_000);
  const weekAgo = new Date(now.getTime() - 7 * 86_400_000);
  const statements = [
    (batch: number) => sql`delete from mcp_auth_requests where id in (
      select id from mcp_auth_requests where expires_at <= ${now} limit ${batch})`,
    (batch: number) => sql`delete from mcp_tokens where token_hash in (
      select token_hash from mcp_tokens where expires_at <= ${now} limit ${batch})`,
    (batch: number) => sql`delete from mcp_grants where id in (
      select id from mcp_grants where revoked_at <= ${weekAgo}
        or (code_used_at is null and code_expires_at <= ${dayAgo}) limit ${batch})`,
    (batch: number) => sql`delete from mcp_clients where id in (
      select c.id from mcp_clients c where c.created_at <= ${dayAgo}
        and not exists (select 1 from mcp_grants g where g.client_id = c.id) limit ${batch})`,
  ];
  let deleted = 0;
  for (const statement of statements) deleted += await deleteInBatches(db, statement);
  return deleted;
}
