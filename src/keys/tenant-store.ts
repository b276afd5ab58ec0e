import { sql, type Kysely, type Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { ApiKeysTable, DB } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

// Every function takes the tenant's scope first and filters on it: no key of one tenant is reachable by another.

export async function insertApiKey(
  db: Kysely<DB>,
  scope: TenantScope,
  row: Omit<ApiKeyRow, 'tenant_id'>,
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({ ...row, tenant_id: scope.tenantId, scopes: JSON.stringify(row.scopes) })
    .execute();
}

export function listApiKeyRows(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: Cursor | undefined,
): Promise<ApiKeyRow[]> {
  return newestFirstPage(
    db.selectFrom('api_keys').selectAll().where('tenant_id', '=', scope.tenantId),
    limit,
    after,
  ).execute();
}

export function findApiKeyRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  lock = false,
): Promise<ApiKeyRow | undefined> {
  const query = db
    .selectFrom('api_keys')
    .selectAll()
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id);
  return (lock ? query.forUpdate() : query).executeTakeFirst();
}

export async function updateApiKeyRow(
  db: Kysely<DB>,
  scope: TenantScope,
  id: string,
  changes: Partial<Omit<ApiKeyRow, 'id' | 'tenant_id' | 'scopes'>>,
): Promise<ApiKeyRow> {
  return db
    .updateTable('api_keys')
    .set(changes)
    .where('tenant_id', '=', scope.tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface KeyForVerification {
  row: ApiKeyRow;
  entitlements: string[];
}

/**
 * The key whose current secret, or previous secret within its overlap, has this hash, with its
 * tenant's entitlements. Tenant-agnostic by nature: the secret is what identifies the tenant.
 */
export async function findApiKeyByHash(
  db: Kysely<DB>,
  secretHash: string,
): Promise<KeyForVerification | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .selectAll('k')
    .select(
      sql<
        string[]
      >`coalesce((select json_agg(e.module_key order by e.module_key) from tenant_entitlements e where e.tenant_id = k.tenant_id), '[]'::json)`.as(
        'entitlements',
      ),
    )
    .where((eb) =>
      eb.or([eb('k.secret_hash', '=', secretHash), eb('k.previous_secret_hash', '=', secretHash)]),
    )
    .executeTakeFirst();
  if (!row) return undefined;
  const { entitlements, ...key } = row;
  return { row: key, entitlements };
}

/** Writes a batch of last-used times in one statement; never moves a time backwards. */
export async function recordLastUsed(db: Kysely<DB>, entries: Array<[string, Date]>): Promise<void> {
  if (entries.length === 0) return;
  const values = sql.join(entries.map(([id, at]) => sql`(${id}, ${at.toISOString()}::timestamptz)`));
  await sql`update api_keys set last_used_at = v.at
    from (values ${values}) as v(id, at)
    where api_keys.id = v.id and (api_keys.last_used_at is null or api_keys.last_used_at < v.at)`.execute(db);
}
