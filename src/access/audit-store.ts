import type { Kysely, Selectable } from 'kysely';
import type { AuditLogTable, DB } from '../db/schema.js';
import { newestFirstPage, type Cursor } from '../http/pagination.js';
import type { TenantScope } from './scope.js';

export type AuditRow = Selectable<AuditLogTable>;

/** One page of the scope's audit rows, newest first; rows of no tenant (platform actions) never appear. */
export function listAuditRows(
  db: Kysely<DB>,
  scope: TenantScope,
  limit: number,
  after: Cursor | undefined,
): Promise<AuditRow[]> {
  return newestFirstPage(
    db.selectFrom('audit_log').selectAll().where('tenant_id', '=', scope.tenantId),
    limit,
    after,
  ).execute();
}
