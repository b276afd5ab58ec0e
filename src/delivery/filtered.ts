import type { TenantScope } from '../access/scope.js';
import { connectionOr404, type ConnectionDeps } from '../connections/connections.js';
import { listPage, type Page, type PageQuery } from '../http/pagination.js';
import { findFilterCount, listFilteredRows, RECENT_FILTERED, type FilteredRow } from './filtered-store.js';

// What a connection's payload filter dropped (docs/api/events.md, Filtered events): a filtered event
// gets no delivery, so the event log cannot show it; this list and its count do.

export interface FilteredEventEntry {
  eventId: string;
  eventType: string;
  /** When the event was published. */
  createdAt: string;
}

/** A page of the kept events, newest first, with the connection's count of every event dropped. */
export interface FilteredEventsPage extends Page<FilteredEventEntry> {
  total: number;
  since: string | null;
  lastAt: string | null;
}

export { RECENT_FILTERED };

const toEntry = (row: FilteredRow): FilteredEventEntry => ({
  eventId: row.id,
  eventType: row.event_type,
  createdAt: new Date(row.created_at).toISOString(),
});

/**
 * The events connection `connectionId`'s filter dropped: its most recent ones (at most
 * RECENT_FILTERED, within delivery retention), newest first, and how many it dropped since the first.
 */
export async function connectionFilteredEvents(
  deps: ConnectionDeps,
  scope: TenantScope,
  connectionId: string,
  query: PageQuery,
): Promise<FilteredEventsPage> {
  const { db } = deps.ctx;
  const page = await listPage(
    query,
    'evt',
    async (limit, after) => {
      await connectionOr404(db, scope, connectionId);
      return listFilteredRows(db, scope, connectionId, limit, after);
    },
    (rows: FilteredRow[]) => rows.map(toEntry),
    { keyring: deps.ctx.keyring, list: ['connection-filtered-events', scope.tenantId, connectionId] },
  );
  const count = await findFilterCount(db, scope, connectionId);
  return {
    ...page,
    total: count ? Number(count.total) : 0,
    since: count ? new Date(count.since).toISOString() : null,
    lastAt: count ? new Date(count.last_at).toISOString() : null,
  };
}
