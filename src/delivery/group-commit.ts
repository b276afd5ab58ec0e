import type { TenantScope } from '../access/scope.js';
import type { ConnectionDeps } from '../connections/connections.js';
import { createTurnBatcher } from '../db/turn-batch.js';
import { errorFields } from '../logger.js';
import type { ClaimedRow } from './claim.js';
import type { Dispatch } from './dispatch.js';
import { activeConnectionsOf, eventRows, filteredOf, type TargetRow } from './fan-out.js';
import { recordFiltered } from './filtered-store.js';
import { insertEventGroup, type DeliveryRow, type EventRow, type ScopedEvent } from './store.js';
import { countPublished } from './usage.js';

/** An event without an idempotency key, checked and ready to be written. */
export interface EventDraft {
  scope: TenantScope;
  at: Date;
  type: string;
  payload: string;
  /** The publish span's `traceparent` (tracing on), stored with the event; else null. */
  traceContext?: string | null;
  /** The event's `orderingKey` (docs/api/events.md, Ordering), if any. */
  orderingKey?: string;
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
 * the load by itself. Events without a key are independent (docs/api/events.md), so sharing a statement
 * changes nothing a client can see; if a group's statement fails, each of its events is written
 * alone, so one event's problem (its tenant deleted meanwhile) never fails another request.
 */
export function createEventWriter(
  deps: ConnectionDeps,
  // This process's worker, given at construction (none in a process without workers): once it
  // runs, it takes the group's deliveries straight away when it has free slots (dispatch.ts).
  dispatch: Dispatch | undefined = undefined,
  // Tells the workers (this process's and, on PostgreSQL, every other's) that deliveries wait for a
  // claim; called only for a group that left some `pending`, so deliveries this process's worker
  // took itself cost no NOTIFY and no claim.
  announce: () => void = () => {},
  options: GroupCommitOptions = DEFAULT_GROUP_COMMIT,
) {
  const turn = createInsertOrder();
  const batcher = createTurnBatcher<Waiting>({
    maxBatch: options.maxEvents,
    maxInFlight: options.maxInFlight,
    write: (group) => writeGroup(deps, dispatch, group, announce, turn()),
  });
  return {
    /** Writes the event and its deliveries; resolves with the event's row once they are committed. */
    write(draft: EventDraft): Promise<EventRow> {
      return new Promise((resolve, reject) => {
        batcher.push({ draft, done: (error, row) => (row ? resolve(row) : reject(error)) });
      });
    },
  };
}

/** An event of a group with its deliveries, and the connections whose filter dropped it. */
type DraftedEvent = ScopedEvent & { filtered: string[] };

/** Fan-out: a group's events with their deliveries, over the connections read for its tenants. */
async function fanOutGroup(
  deps: ConnectionDeps,
  group: readonly Waiting[],
): Promise<{ scoped: DraftedEvent[]; connections: Map<string, TargetRow[]> }> {
  const connections = await activeConnectionsOf(
    deps.ctx.db,
    group.map((w) => w.draft.scope),
  );
  const scoped = group.map(({ draft }) => ({
    scope: draft.scope,
    ...eventRows(
      deps,
      draft.scope,
      draft.at,
      draft.type,
      draft.payload,
      connections.get(draft.scope.tenantId) ?? [],
      draft.traceContext ?? null,
      draft.orderingKey,
    ),
  }));
  return { scoped, connections };
}

/**
 * One group, through a publish's last phases (publish.ts) for all its events at once: fan-out
 * (`fanOutGroup`), write (`writeDrafted`: its events and deliveries in one statement, as many
 * deliveries as this process's worker has free slots inserted already claimed by it) and hand over
 * (`handOver`, once committed).
 */
async function writeGroup(
  deps: ConnectionDeps,
  dispatch: Dispatch | undefined,
  group: Waiting[],
  announce: () => void,
  turn: InsertTurn,
): Promise<void> {
  let drafted: Awaited<ReturnType<typeof fanOutGroup>>;
  try {
    drafted = await fanOutGroup(deps, group);
  } catch (error) {
    turn.skip();
    for (const w of group) w.done(error);
    return;
  }
  const ordered = drafted.scoped.some((e) => e.deliveries.some((d) => d.ordering_key !== null));
  if (!ordered) {
    turn.skip();
    return writeDrafted(deps, dispatch, group, announce, drafted);
  }
  await turn.ready;
  try {
    await writeDrafted(deps, dispatch, group, announce, drafted);
  } finally {
    turn.done();
  }
}

/**
 * A group's place among the inserts of groups with ordered deliveries (ordering.ts): such a group
 * inserts once the groups formed before it have, so events of one key published together (a batch
 * that two groups share) are chained in the order they were published. A group without any takes
 * no turn: it waits for nothing, and those after it wait only for the groups before it.
 */
interface InsertTurn {
  ready: Promise<void>;
  /** The group has no ordered delivery: its turn ends with the one before it. */
  skip(): void;
  done(): void;
}

function createInsertOrder(): () => InsertTurn {
  let previous: Promise<void> = Promise.resolve();
  return () => {
    const ready = previous;
    let end!: () => void;
    previous = new Promise<void>((resolve) => (end = resolve));
    return { ready, skip: () => void ready.then(end), done: end };
  };
}

async function writeDrafted(
  deps: ConnectionDeps,
  dispatch: Dispatch | undefined,
  group: Waiting[],
  announce: () => void,
  drafted: Awaited<ReturnType<typeof fanOutGroup>>,
): Promise<void> {
  const { db } = deps.ctx;
  const { scoped, connections } = drafted;
  const byId = new Map([...connections.values()].flat().map((c) => [c.id, c]));
  // Only deliveries to connections active when read are offered to this process's worker; the
  // insert decides for good (a connection paused or revoked since gets skipped or cancelled rows).
  const deliveries = scoped
    .flatMap((e) => e.deliveries.map((d) => ({ e, d })))
    .filter(({ d }) => byId.get(d.connection_id)?.status === 'active');
  const reservation = dispatch?.reserve(deliveries.length);
  const dispatched = deliveries.slice(0, reservation?.slots ?? 0);
  let inserted: Awaited<ReturnType<typeof insertEventGroup>>;
  try {
    inserted = await insertEventGroup(
      db,
      scoped,
      reservation && dispatched.length > 0
        ? {
            deliveryIds: new Set(dispatched.map(({ d }) => d.id)),
            workerId: reservation.workerId,
            leaseUntil: reservation.leaseUntil,
          }
        : undefined,
    );
  } catch (error) {
    // Nothing was written: the slots go back, and each event is tried alone, as `pending`.
    if (reservation) dispatch?.hand([], reservation.slots);
    await writeAlone(deps, group, scoped, error);
    return announce();
  }
  countPublished(deps.ctx, scoped, inserted);
  handOver(dispatch, announce, inserted, reservation && { ...reservation, dispatched, byId });
  // After the worker has its deliveries: a drop's record never delays a send.
  await noteFiltered(deps, scoped);
  for (const [i, w] of group.entries()) w.done(undefined, scoped[i]!.event);
}

/**
 * Hand over: the deliveries inserted claimed go to this process's worker with the slots reserved for
 * them; any left `pending` are announced to every worker, before the requests are answered, as the
 * route did when it announced every publish.
 */
function handOver(
  dispatch: Dispatch | undefined,
  announce: () => void,
  inserted: Awaited<ReturnType<typeof insertEventGroup>>,
  reserved:
    | {
        slots: number;
        dispatched: ReadonlyArray<{ e: ScopedEvent; d: DeliveryRow }>;
        byId: ReadonlyMap<string, TargetRow>;
      }
    | undefined,
): void {
  if (inserted.some((d) => d.status === 'pending')) announce();
  if (!reserved) return;
  const claimed = new Set(inserted.filter((d) => d.status === 'delivering').map((d) => d.id));
  const handed = reserved.dispatched.filter(({ d }) => claimed.has(d.id));
  dispatch?.hand(claimedRows(handed, reserved.byId), reserved.slots);
}

/**
 * After a group's statement failed: each event alone, so one event's problem fails only its request.
 * A group with ordered deliveries writes them one after another in the group's order (its requests'
 * publish order), since each insert chains its deliveries after the key's last queued one
 * (ordering.ts): written at once, on several connections, they would chain in whichever order they
 * commit. A group without any writes them all at once, as they are independent.
 */
async function writeAlone(
  deps: ConnectionDeps,
  group: readonly Waiting[],
  scoped: readonly DraftedEvent[],
  error: unknown,
): Promise<void> {
  if (group.length === 1) return group[0]!.done(error);
  const writeOne = (w: Waiting, i: number) =>
    insertEventGroup(deps.ctx.db, [scoped[i]!]).then(
      async (inserted) => {
        countPublished(deps.ctx, [scoped[i]!], inserted);
        await noteFiltered(deps, [scoped[i]!]);
        w.done(undefined, scoped[i]!.event);
      },
      (alone: unknown) => w.done(alone),
    );
  const ordered = scoped.some((e) => e.deliveries.some((d) => d.ordering_key !== null));
  if (!ordered) {
    await Promise.all(group.map(writeOne));
    return;
  }
  for (const [i, w] of group.entries()) await writeOne(w, i);
}

/**
 * Records what the filters dropped of events just written, before their requests are answered: one
 * statement for the group, none when nothing was dropped. The events are committed by then, so a
 * failure here is logged and never fails a publish (its client would publish the event again).
 */
export async function noteFiltered(
  deps: ConnectionDeps,
  events: ReadonlyArray<{ event: EventRow; filtered: readonly string[] }>,
): Promise<void> {
  const filtered = filteredOf(events);
  if (filtered.length === 0) return;
  try {
    await recordFiltered(deps.ctx.db, filtered);
  } catch (error) {
    deps.ctx.log.warn(errorFields(error), 'recording filtered events failed');
  }
}

export type EventWriter = ReturnType<typeof createEventWriter>;

/**
 * What the worker needs to send deliveries it did not claim itself, from what the publish read. Only
 * rows the insert made `delivering` come here: their connection was active, and locked for share,
 * when they were written, so a pause or revoke after it finds them claimed and waits for them.
 */
function claimedRows(
  dispatched: ReadonlyArray<{ e: ScopedEvent; d: DeliveryRow }>,
  connections: ReadonlyMap<string, TargetRow>,
): ClaimedRow[] {
  return dispatched.flatMap(({ e, d }) => {
    const connection = connections.get(d.connection_id);
    if (!connection) return [];
    return [
      {
        id: d.id,
        event_id: d.event_id,
        connection_id: d.connection_id,
        attempt_count: 0,
        created_at: d.created_at,
        lost_claim_at: null,
        lost_claim_until: null,
        // A key's first delivery may be claimed at its insert (one that waits never is, store.ts); its
        // outcome then releases the next of its key.
        ordering_key: d.ordering_key,
        connection_status: 'active' as const,
        connector_key: connection.connector_key,
        config: connection.config,
        credentials_sealed: connection.credentials_sealed,
        previous_credentials_sealed: connection.previous_credentials_sealed,
        previous_valid_until: connection.previous_valid_until,
        type: e.event.type,
        payload_sealed: e.event.payload_sealed,
        event_created_at: e.event.created_at,
        tenant_id: e.event.tenant_id,
        trace_context: e.event.trace_context,
      },
    ];
  });
}
