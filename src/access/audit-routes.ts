import { Type, type Static } from 'typebox';
import { listPage, PageQueryFields, type Cursor } from '../http/pagination.js';
import { Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { listAuditRows, type AuditRow } from './audit-store.js';
import { KEY_MANAGING_ROLES } from './catalog.js';
import { sessionRule } from './rules.js';
import { requestScope } from './scope.js';

export const AuditEntry = Type.Object({
  id: Type.String(),
  action: Type.String(),
  actorType: Type.String(),
  actorId: Nullable(Type.String()),
  targetType: Nullable(Type.String()),
  targetId: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  requestId: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
});

/** The tenant's audit log (docs/api/keys.md), newest first. */
export const auditRoutes: RoutePlugin = async (app, services) => {
  const { ctx } = services;
  app.get(
    '/api/v1/company/audit-log',
    {
      config: sessionRule(KEY_MANAGING_ROLES),
      schema: {
        tags: ['audit'],
        summary: "The tenant's audit log, newest first",
        querystring: StrictObject(PageQueryFields),
        response: { 200: PageOf(AuditEntry) },
      },
    },
    async (request) => {
      const scope = requestScope(request);
      const fetch = (limit: number, after: Cursor | undefined) => listAuditRows(ctx.db, scope, limit, after);
      return listPage(request.query, 'aud', fetch, (rows) => rows.map(toAuditEntry), {
        keyring: ctx.keyring,
        list: ['audit-log', scope.tenantId],
      });
    },
  );
};

function toAuditEntry(row: AuditRow): Static<typeof AuditEntry> {
  return {
    id: row.id,
    action: row.action,
    actorType: row.actor_type,
    actorId: row.actor_id,
    targetType: row.target_type,
    targetId: row.target_id,
    ip: row.ip,
    requestId: row.request_id,
    metadata: row.metadata,
    createdAt: new Date(row.created_at).toISOString(),
  };
}
