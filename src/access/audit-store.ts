import type { Kysely, Selectable } from 'kysely';
import type { AuditLogTable, DB } from '../db/schema.js';
import { afterCursor, type Cursor } from '../http/pagination.js';

export type AuditRow = Selectable<AuditLogTable>;

export function listAuditRows(
  db: Kysely<DB>,
  tenantId: string,
  limit: number,
  after: Cursor | undefined,
): Promise<AuditRow[]> {
  let query = db.selectFrom('audit_log').selectAll().where('tenant_id', '=', tenantId);
  if (after) query = query.where(afterCursor('created_at', 'id', after));
  return query
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}
