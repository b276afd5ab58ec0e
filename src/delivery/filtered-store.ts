import { sql, type Kysely } from 'kysely';
import type { TenantScope } from '../access/scope.js';
import { deleteInBatches } from '../db/delete-in-batches.js';
import type { DB } from '../db/schema.js';
import { afterCursor, type Cursor } from '../http/pagination.js';

// The events a connection's payload filter dropped (docs/api/events.md, Filtered events;
// docs/decisions/0067-filtered-events-and-ordering-key-shown.md): a count per connection and a ring
// of its last RECENT_FILTERED events (migration 0021). Written by the publish, one statement for all
// the events of a group commit or a keyed publish, and only when a filter dropped something.

/** How many of a connection's filtered events are kept, most recent first. */
export const RECENT_FILTERED = 100;

/** An event one connection's filter dropped, as the publish saw it. */
export interface FilteredEvent {
  tenantId: string;
  connectionId: string;
  eventId: string;
  eventType: string;
  at: Date;
}

/**
 * Counts the events and keeps the last RECENT_FILTERED of each connection, in one statement. The
 * count row of a connection is updated first (rows in connection order, so two publishes never wait
 * on each other in a cycle) and answers the new total: the events counted take the ring's slots just
 * below it, in the order given, so a later publish, which waits for the row, overwrites the oldest.
 */
export async function recordFiltered(db: Kysely<DB>, events: readonly FilteredEvent[]): Promise<void> {
  if (events.length === 0) return;
  const counts = new Map<string, { tenantId: string; n: number; first: Date; last: Date }>();
  for (const e of events) {
    const count = counts.get(e.connectionId);
    if (!count) counts.set(e.connectionId, { tenantId: e.tenantId, n: 1, first: e.at, last: e.at });
    else {
      count.n += 1;
      if (e.at < count.first) count.first = e.at;
      if (e.at > count.last) count.last = e.at;
    }
  }
  // Each event's distance from its connection's last one here (0 for the last): its slot is counted
  // back from the new total. Only the last RECENT_FILTERED of a connection are written, each to its own slot.
  const seen = new Map<string, number>();
  const kept: Array<FilteredEvent & { back: number }> = [];
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    const back = seen.get(e.connectionId) ?? 0;
    seen.set(e.connectionId, back + 1);
    if (back < RECENT_FILTERED) kept.push({ ...e, back });
  }
  const connections = [...counts.keys()].sort();
  const of = <T>(pick: (c: { tenantId: string; n: number; first: Date; last: Date }) => T) =>
    connections.map((id) => pick(counts.get(id)!));
  const column = <T>(pick: (e: (typeof kept)[number]) => T) => kept.map(pick);
  await sql`
    with counted as (
      insert into filter_counts as c (connection_id, tenant_id, total, since, last_at)
      select connection_id, tenant_id, n, first_at, last_at
      from unnest(${connections}::text[], ${of((c) => c.tenantId)}::text[], ${of((c) => c.n)}::bigint[],
        ${of((c) => c.first)}::timestamptz[], ${of((c) => c.last)}::timestamptz[])
        as x(connection_id, tenant_id, n, first_at, last_at)
      order by connection_id
      on conflict (connection_id) do update
        set total = c.total + excluded.total, last_at = greatest(c.last_at, excluded.last_at)
      returning connection_id, tenant_id, total)
    insert into filtered_events as f (connection_id, slot, tenant_id, event_id, event_type, created_at)
    select r.connection_id, ((c.total - r.back - 1) % ${RECENT_FILTERED})::smallint, c.tenant_id,
      r.event_id, r.event_type, r.created_at
    from unnest(${column((e) => e.connectionId)}::text[], ${column((e) => e.back)}::int[],
      ${column((e) => e.eventId)}::text[], ${column((e) => e.eventType)}::text[],
      ${column((e) => e.at)}::timestamptz[]) as r(connection_id, back, event_id, event_type, created_at)
    join counted c on c.connection_id = r.connection_id
    on conflict (connection_id, slot) do update
      set tenant_id = excluded.tenant_id, event_id = excluded.event_id, event_type = excluded.event_type,
        created_at = excluded.created_at`.execute(db);
}

/** A connection's count of filtered events, or undefined before its filter dropped any. */
export function findFilterCount(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
): Promise<{ total: string; since: Date; last_at: Date } | undefined> {
  return db
    .selectFrom('filter_counts')
    .select(['total', 'since', 'last_at'])
    .where('tenant_id', '=', scope.tenantId)
    .where('connection_id', '=', connectionId)
    .executeTakeFirst();
}

/** A row of the list, shaped for listPage: the event's ID and publish time are the page's keys. */
export interface FilteredRow {
  id: string;
  event_type: string;
  created_at: Date;
}

/** One page of a connection's kept filtered events, newest first (`limit + 1` rows). */
export function listFilteredRows(
  db: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
  limit: number,
  after: Cursor | undefined,
): Promise<FilteredRow[]> {
  let query = db
    .selectFrom('filtered_events')
    .select(['event_id as id', 'event_type', 'created_at'])
    .where('tenant_id', '=', scope.tenantId)
    .where('connection_id', '=', connectionId);
  if (after) query = query.where(afterCursor('created_at', 'event_id', after));
  return query
    .orderBy('created_at', 'desc')
    .orderBy('event_id', 'desc')
    .limit(limit + 1)
    .execute();
}

/** Forgets the filtered events published before `cutoff` (delivery retention); answers how many. */
export function purgeFiltered(db: Kysely<DB>, cutoff: Date): Promise<number> {
  return deleteInBatches(
    db,
    (batch) => sql`
      delete from filtered_events where (connection_id, slot) in (
        select connection_id, slot from filtered_events where created_at < ${cutoff} limit ${batch})
      and created_at < ${cutoff}`,
  );
}
