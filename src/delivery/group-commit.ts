import type { ConnectionDeps } from '../connections/connections.js';
import type { TenantScope } from '../tenants/scope.js';
import { activeConnectionsOf, eventRows } from './publish.js';
import { type EventRow, insertEventGroup } from './store.js';

/** An event without an idempotency key, checked and ready to be written. */
export interface EventDraft {
  scope: TenantScope;
  at: Date;
  type: string;
  payload: string;
}

export interface GroupCommitOptions {
  /** Events written by one group at most (its statements are split further by size). */
  maxEvents: number;
  /** Groups being written at once; drafts that arrive meanwhile wait and form the next group. */
  maxInFlight: number;
}

export const DEFAULT_GROUP_COMMIT: GroupCommitOptions = { maxEvents: 500, maxInFlight: 4 };

interface Waiting {
  draft: EventDraft;
  done: (error: unknown, row?: EventRow) => void;
}

/**
 * Group commit for publishing (PostgreSQL's own commit_delay, Kafka's linger.ms): events published
 * by concurrent requests are written together, one read of the connections of every tenant in the
 * group and one statement for all their events and deliveries, and each request is answered when
 * that statement commits. A draft never waits for a timer: it is written at the next turn of the
 * event loop when fewer than `maxInFlight` groups are being written, so a request alone costs what
 * it did; under load drafts gather while earlier groups are in flight, and the group size follows
 * the load by itself. Events without a key are independent (contract §7), so sharing a statement
 * changes nothing a client can see; if a group's statement fails, each of its events is written
 * alone, so one event's problem (its tenant deleted meanwhile) never fails another request.
 */
export function createEventWriter(deps: ConnectionDeps, options: GroupCommitOptions = DEFAULT_GROUP_COMMIT) {
  const { db } = deps.ctx;
  let queue: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;

  function schedule(): void {
    if (scheduled || queue.length === 0 || inFlight >= options.maxInFlight) return;
    scheduled = true;
    setImmediate(flush);
  }

  function flush(): void {
    scheduled = false;
    if (inFlight >= options.maxInFlight || queue.length === 0) return;
    const group = queue.length <= options.maxEvents ? queue : queue.slice(0, options.maxEvents);
    queue = queue.length <= options.maxEvents ? [] : queue.slice(options.maxEvents);
    inFlight++;
    void write(group).finally(() => {
      inFlight--;
      schedule();
    });
    schedule();
  }

  async function write(group: Waiting[]): Promise<void> {
    let rows;
    try {
      const tenantIds = [...new Set(group.map((w) => w.draft.scope.tenantId))];
      const connections = await activeConnectionsOf(db, tenantIds);
      rows = group.map(({ draft }) =>
        eventRows(
          deps,
          draft.scope,
          draft.at,
          draft.type,
          draft.payload,
          connections.get(draft.scope.tenantId) ?? [],
        ),
      );
    } catch (error) {
      for (const w of group) w.done(error);
      return;
    }
    const scoped = rows.map((r, i) => ({ scope: group[i]!.draft.scope, ...r }));
    try {
      await insertEventGroup(db, scoped);
      for (const [i, w] of group.entries()) w.done(undefined, rows[i]!.event);
    } catch (error) {
      if (group.length === 1) return group[0]!.done(error);
      await Promise.all(
        group.map((w, i) =>
          insertEventGroup(db, [scoped[i]!]).then(
            () => w.done(undefined, rows[i]!.event),
            (alone: unknown) => w.done(alone),
          ),
        ),
      );
    }
  }

  return {
    /** Writes the event and its deliveries; resolves with the event's row once they are committed. */
    write(draft: EventDraft): Promise<EventRow> {
      return new Promise((resolve, reject) => {
        queue.push({ draft, done: (error, row) => (row ? resolve(row) : reject(error)) });
        schedule();
      });
    },
  };
}

export type EventWriter = ReturnType<typeof createEventWriter>;
