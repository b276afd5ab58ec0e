import type { TenantScope } from '../access/scope.js';
import { connectionOr404, type ConnectionDeps } from '../connections/connections.js';
import type { DeliveryStatus } from '../db/schema.js';
import { listPage, type Cursor, type Page, type PageQuery } from '../http/pagination.js';
import { isoOrNull } from '../http/schemas.js';
import { attemptsOf, listDeliveryRows, type AttemptRow, type DeliveryRow } from './store.js';

export interface DeliveryLogEntry {
  id: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attemptCount: number;
  createdAt: string;
  updatedAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  attempts: Array<{
    number: number;
    startedAt: string;
    durationMs: number;
    remoteAddress: string | null;
    responseStatus: number | null;
    error: string | null;
    errorDetail: string | null;
  }>;
}

function toEntry(row: DeliveryRow & { event_type: string }, attempts: AttemptRow[]): DeliveryLogEntry {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    // A claim is an internal state until the attempt is under way; "delivering" is shown as is.
    status: row.status,
    attemptCount: row.attempt_count,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    nextAttemptAt: isoOrNull(row.next_attempt_at),
    deliveredAt: isoOrNull(row.delivered_at),
    attempts: attempts.map((a) => ({
      number: a.number,
      startedAt: new Date(a.started_at).toISOString(),
      durationMs: a.duration_ms,
      remoteAddress: a.remote_address,
      responseStatus: a.response_status,
      error: a.error,
      errorDetail: a.error_detail,
    })),
  };
}

/** The delivery log of one connection (contract §7); payload and response bodies are never in it. */
export async function connectionEventLog(
  deps: ConnectionDeps,
  scope: TenantScope,
  connectionId: string,
  query: PageQuery & { status?: DeliveryStatus },
): Promise<Page<DeliveryLogEntry>> {
  const { db } = deps.ctx;
  // listPage checks the cursor first: a bad one is a validation failure, which contract §3 answers
  // before the lookup's 404.
  const fetch = async (limit: number, after: Cursor | undefined) => {
    await connectionOr404(db, scope, connectionId);
    return listDeliveryRows(db, scope, connectionId, query.status, limit, after);
  };
  return listPage(query, 'dlv', fetch, async (rows) => {
    const attempts = await attemptsOf(db, rows);
    return rows.map((row) => toEntry(row, attempts.get(row.id) ?? []));
  });
}
