import type { Kysely, Selectable } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import type { DB, PortalSettingsTable } from '../db/schema.js';

export type PortalSettingsRow = Selectable<PortalSettingsTable>;

/**
 * A tenant's row, by a bare tenant ID: the portal page's framing is read for whatever ID its URL
 * names, before anyone is signed in, and a portal session's branding for the session's tenant. The
 * row holds nothing secret (what the tenant shows and which sites may frame it); writes take a scope.
 */
export function findPortalSettingsRow(
  db: Kysely<DB>,
  tenantId: string,
): Promise<PortalSettingsRow | undefined> {
  return db.selectFrom('portal_settings').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

/** Replaces the scope's tenant's row whole (a PUT), making it if the tenant had none. */
export async function upsertPortalSettingsRow(
  db: Kysely<DB>,
  scope: TenantScope,
  row: Omit<PortalSettingsRow, 'tenant_id'>,
): Promise<void> {
  const values = { ...row, frame_ancestors: JSON.stringify(row.frame_ancestors) };
  await db
    .insertInto('portal_settings')
    .values({ tenant_id: scope.tenantId, ...values })
    .onConflict((conflict) => conflict.column('tenant_id').doUpdateSet(values))
    .execute();
}
