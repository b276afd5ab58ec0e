import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { notFound } from '../http/problem.js';
import type { IngestOutcome } from './ingest.js';
import { findSource, listRequestLog } from './store.js';

// A source's request log (docs/api/sources.md): what came to its ingest URL and what became of it.

export interface SourceRequestRecord {
  id: string;
  receivedAt: string;
  outcome: IngestOutcome;
  eventId: string | null;
  providerDeliveryId: string | null;
  eventType: string | null;
  headers: Record<string, string>;
  body: string;
  bodyTruncated: boolean;
}

export async function requestLogPage(
  ctx: AppContext,
  scope: TenantScope,
  sourceId: string,
  query: PageQuery & { outcome?: string; since?: string; until?: string },
): Promise<Page<SourceRequestRecord>> {
  if (!(await findSource(ctx.db, scope, sourceId))) throw notFound('source');
  const filters = {
    outcome: query.outcome,
    since: query.since ? new Date(query.since) : undefined,
    until: query.until ? new Date(query.until) : undefined,
  };
  const bound: Record<string, string> = {};
  if (filters.outcome) bound.outcome = filters.outcome;
  if (filters.since) bound.since = filters.since.toISOString();
  if (filters.until) bound.until = filters.until.toISOString();
  return listPage(
    query,
    'srq',
    (limit, after) => listRequestLog(ctx.db, scope, sourceId, filters, limit, after),
    (rows) =>
      rows.map((row) => ({
        id: row.id,
        receivedAt: row.received_at.toISOString(),
        outcome: row.outcome as IngestOutcome,
        eventId: row.event_id,
        providerDeliveryId: row.provider_delivery_id,
        eventType: row.event_type,
        headers: row.headers,
        body: row.body,
        bodyTruncated: row.body_truncated,
      })),
    { keyring: ctx.keyring, list: ['source-requests', scope.tenantId, sourceId], filters: bound },
  );
}
