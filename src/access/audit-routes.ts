import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { AppContext } from '../context.js';
import { decodeCursor, PageQueryFields, toPage } from '../http/pagination.js';
import { Nullable, PageOf, StrictObject, Timestamp } from '../http/schemas.js';
import { listAuditRows } from './audit-store.js';
import { KEY_MANAGING_ROLES } from './catalog.js';
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

/** The tenant's audit log (contract §12), newest first. */
export function auditRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/v1/company/audit-log',
      {
        config: { access: { class: 'session', roles: KEY_MANAGING_ROLES } },
        schema: {
          tags: ['audit'],
          summary: "The tenant's audit log, newest first",
          querystring: StrictObject(PageQueryFields),
          response: { 200: PageOf(AuditEntry) },
        },
      },
      async (request) => {
        const limit = request.query.limit ?? 20;
        const rows = await listAuditRows(
          ctx.db,
          requestScope(request),
          limit,
          decodeCursor(request.query.cursor, 'aud'),
        );
        return toPage(rows, limit, (row) => ({
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
        }));
      },
    );
  };
}
