import type { Kysely, Selectable } from 'kysely';
import type { AuditLogTable, DB } from '../db/schema.js';
import { type Cursor, newestFirstPage } from '../http/pagination.js';

export type AuditRow = Selectable<AuditLogTable>;

export function listAuditRows(
  db: Kysely<DB>,
  tenantId: string,
  limit: number,
  after: Cursor | undefined,
): Promise<AuditRow[]> {
  return newestFirstPage(
    db.selectFrom('audit_log').selectAll().where('tenant_id', '=', tenantId),
    limit,
    after,
  ).execute();
}
