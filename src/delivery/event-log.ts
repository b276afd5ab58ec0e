import type { TenantScope } from '../access/scope.js';
import { connectionOr404, type ConnectionDeps } from '../connections/connections.js';
import { isIdOf } from '../crypto/ids.js';
import type { DeliveryStatus } from '../db/schema.js';
import { listPage, type Cursor, type Page, type PageFilters, type PageQuery } from '../http/pagination.js';
import { fieldProblem, notFound } from '../http/problem.js';
import { isoOrNull } from '../http/schemas.js';
import { timeField } from '../http/time.js';
import {
  findEventTime,
  findLogRow,
  listLogRows,
  logAttemptsOf,
  type LogAttemptRow,
  type LogFilters,
  type LogRow,
} from './log-store.js';
import { openBoundCredentials, openEvent } from './prepare.js';

// The tenant's deliveries of the last 24 hours by outcome: the hub overview's figures, read here.
export { deliveryCounts24h } from './store.js';

/** What an attempt sent (docs/api/events.md): method, URL and headers, a credential header's value redacted. */
export interface AttemptRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
}

/** What an attempt was answered: some headers and the start of the body. */
export interface AttemptResponse {
  headers: Record<string, string>;
  body: string | null;
  bodyTruncated: boolean;
}

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
  test: boolean;
  /** The key the delivery is ordered by on a `per-key` connection; else null. */
  orderingKey: string | null;
  waitingFor: string | null;
  attempts: Array<{
    number: number;
    startedAt: string;
    durationMs: number;
    remoteAddress: string | null;
    responseStatus: number | null;
    error: string | null;
    errorDetail: string | null;
    request: AttemptRequest | null;
    response: AttemptResponse | null;
  }>;
}

/** One delivery's read: its log entry and the body it was (or will be) sent with. */
export interface DeliveryDetail extends DeliveryLogEntry {
  payload: Record<string, unknown>;
}

// The request and the answer are stored as JSON text by the worker (record.ts); attempts recorded
// before they were kept have neither.
const parsed = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

function toEntry(row: LogRow, attempts: LogAttemptRow[]): DeliveryLogEntry {
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
    test: row.test,
    // The event's `orderingKey` as its per-key connection orders by it (ordering.ts); null on others.
    orderingKey: row.ordering_key,
    // Per-key ordering (docs/api/events.md): the delivery of its key it waits for, until that one ends.
    waitingFor: row.waiting_for,
    attempts: attempts.map((a) => ({
      number: a.number,
      startedAt: new Date(a.started_at).toISOString(),
      durationMs: a.duration_ms,
      remoteAddress: a.remote_address,
      responseStatus: a.response_status,
      error: a.error,
      errorDetail: a.error_detail,
      request: parsed<AttemptRequest>(a.request),
      response: parsed<AttemptResponse>(a.response),
    })),
  };
}

/** The log's query string (docs/api/events.md), as the route's schema let it through. */
export interface LogQuery extends PageQuery {
  status?: string;
  eventType?: string;
  eventId?: string;
  since?: string;
  until?: string;
  test?: boolean;
  responseStatus?: string;
}

/**
 * The delivery log of one connection (docs/api/events.md), newest first, narrowed by the filters;
 * the payload is in one delivery's read only. Every filter is checked before the connection is
 * looked up (validation before 404, docs/api/errors.md), the cursor with them: it carries the filters it
 * was made with and is refused with any others.
 */
export async function connectionEventLog(
  deps: ConnectionDeps,
  scope: TenantScope,
  connectionId: string,
  query: LogQuery,
): Promise<Page<DeliveryLogEntry>> {
  const { db } = deps.ctx;
  const { filters, eventId, bound } = logFilters(query);
  const fetch = async (limit: number, after: Cursor | undefined) => {
    await connectionOr404(db, scope, connectionId);
    if (eventId === undefined) return listLogRows(db, scope, connectionId, filters, limit, after);
    const createdAt = await findEventTime(db, scope, eventId);
    // An unknown event, or another tenant's, has no deliveries here: an empty list, like any filter.
    if (!createdAt) return [];
    return listLogRows(
      db,
      scope,
      connectionId,
      { ...filters, event: { id: eventId, createdAt } },
      limit,
      after,
    );
  };
  const toItems = async (rows: LogRow[]) => {
    const attempts = await logAttemptsOf(db, rows);
    return rows.map((row) => toEntry(row, attempts.get(row.id) ?? []));
  };
  return listPage(query, 'dlv', fetch, toItems, {
    keyring: deps.ctx.keyring,
    list: ['connection-events', scope.tenantId, connectionId],
    filters: bound,
  });
}

/**
 * The filters as the query applies them, and as the cursor binds them: each given one in one
 * spelling (statuses sorted without repeats, times as toISOString writes the instant), so that a
 * cursor stays valid with the same filter written another way.
 */
function logFilters(query: LogQuery): { filters: LogFilters; eventId?: string; bound: PageFilters } {
  const filters: LogFilters = {};
  const bound: Record<string, string> = {};
  if (query.status !== undefined) {
    const statuses = [...new Set(query.status.split(','))].sort() as DeliveryStatus[];
    filters.statuses = statuses;
    bound.status = statuses.join(',');
  }
  if (query.eventType !== undefined) {
    filters.eventTypeLike = likePattern(query.eventType);
    bound.eventType = query.eventType;
  }
  if (query.eventId !== undefined) bound.eventId = query.eventId;
  for (const name of ['since', 'until'] as const) {
    const text = query[name];
    if (text === undefined) continue;
    filters[name] = instant(text, name);
    bound[name] = filters[name].toISOString();
  }
  if (filters.since && filters.until && filters.since > filters.until) {
    throw fieldProblem('querystring.since', 'is after until');
  }
  if (query.test !== undefined) {
    filters.test = query.test;
    bound.test = String(query.test);
  }
  if (query.responseStatus !== undefined) {
    filters.responseStatus = statusRange(query.responseStatus);
    bound.responseStatus = query.responseStatus;
  }
  return { filters, eventId: query.eventId, bound };
}

/** `employee.*` → `employee.%`: `*` any run, and LIKE's own wildcards (and its escape) taken literally. */
export function likePattern(pattern: string): string {
  return pattern.replace(/[\\%_]/g, '\\$&').replaceAll('*', '%');
}

/** `5xx` → 500–599, `404` → 404–404 (the schema let only these forms through). */
function statusRange(value: string): { min: number; max: number } {
  if (value.endsWith('xx')) {
    const min = Number(value[0]) * 100;
    return { min, max: min + 99 };
  }
  return { min: Number(value), max: Number(value) };
}

// No delivery was created before the Unix epoch or after 9999 (the service's clock stamps them), so a
// bound outside those years means the same as the nearest end; both ends are times PostgreSQL and
// every driver write and read alike.
const EARLIEST = Date.parse('1970-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * The instant an RFC 3339 time names (http/time.ts, which refuses a leap second, a space, a day its
 * month lacks), for `[since, until)` on the deliveries' millisecond times: a fraction finer than a
 * millisecond is rounded up, which keeps the same deliveries on each side.
 */
function instant(text: string, name: 'since' | 'until'): Date {
  const at = timeField(text, `querystring.${name}`, 'up');
  return new Date(Math.min(LATEST, Math.max(EARLIEST, at.getTime())));
}

/**
 * One delivery of the connection (docs/api/events.md): its log entry and `payload`, the body its
 * connector sends, rendered from the event as the worker renders it (prepare.ts). Rendering needs
 * the credentials of some connectors (a Slack webhook's URL is one), but only the body is kept, and
 * no connector puts a credential in the body, so none leaves. An unbound connection renders with none.
 */
export async function deliveryDetail(
  deps: ConnectionDeps,
  scope: TenantScope,
  connectionId: string,
  deliveryId: string,
): Promise<DeliveryDetail> {
  const { db } = deps.ctx;
  const connection = await connectionOr404(db, scope, connectionId);
  const row = isIdOf('dlv', deliveryId) ? await findLogRow(db, scope, connectionId, deliveryId) : undefined;
  if (!row) throw notFound('delivery');
  const attempts = await logAttemptsOf(db, [row]);
  return { ...toEntry(row, attempts.get(row.id) ?? []), payload: renderPayload(deps, connection, row) };
}

function renderPayload(
  deps: ConnectionDeps,
  connection: Awaited<ReturnType<typeof connectionOr404>>,
  row: LogRow & { payload_sealed: string },
): Record<string, unknown> {
  const { keyring } = deps.ctx;
  const definition = deps.catalog.get(connection.connector_key);
  // Connectors are files of this build; a connection of one that is not here is a broken deployment.
  if (!definition) throw new Error(`connector ${connection.connector_key} is not in the catalog`);
  // Only the body is shown: a credential the connector puts in a header or the URL never leaves.
  const credentials = openBoundCredentials(keyring, connection.credentials_sealed, connection.id);
  const event = openEvent(keyring, {
    id: row.event_id,
    type: row.event_type,
    createdAt: row.created_at,
    payloadSealed: row.payload_sealed,
  });
  const rendered = definition.render(event, connection.config, credentials);
  return JSON.parse(rendered.body) as Record<string, unknown>;
}
