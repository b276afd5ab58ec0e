import { sql, type Insertable, type Kysely } from 'kysely';
import type { UsageKind, UsageMeter } from '../context.js';
import type { DB, DeliveryAttemptsTable, DeliveryStatus } from '../db/schema.js';
import { createTurnBatcher } from '../db/turn-batch.js';
import { ENDED_STATUSES, releaseSuccessors } from './ordering.js';

/** How one claimed delivery ended this time, and the attempt that ended it (none when cancelled). */
export interface Outcome {
  deliveryId: string;
  connectionId: string;
  /** The delivery's partition key. */
  createdAt: Date | string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  attempt?: Insertable<DeliveryAttemptsTable>;
  /** Whether the delivery has an ordering key: its end releases the next of its key (ordering.ts). */
  ordered?: boolean;
}

const MAX_BATCH = 256;
/** Batches being written at once; outcomes that arrive meanwhile wait and form the next one. */
const MAX_IN_FLIGHT = 2;

/**
 * Writes outcomes in batches: many deliveries' attempts and new states in one statement, instead of
 * one round trip each, which is what bounds a worker under load. As with publishing's group commit,
 * nothing waits for a timer: a batch is written at the next turn of the event loop unless two are
 * already being written, so the batch size follows the load (turn-batch.ts). A state changes only
 * while this worker's claim holds (not cancelled by a revocation, not expired); attempts are
 * recorded anyway, since they happened. `record` resolves once its outcome is written.
 */
export function createOutcomeWriter(
  db: Kysely<DB>,
  workerId: string,
  now: () => Date,
  // What follows a written batch with a failure, or a success on a connection with a run of failures
  // (the automatic pause, auto-pause.ts). It never throws; the outcomes are written already.
  afterWrite?: (outcomes: readonly Outcome[], withRun: readonly string[]) => Promise<void>,
  // The tenant usage meter: each batch's attempts and the deliveries it ended, once committed.
  usage?: UsageMeter,
) {
  const written = async (outcomes: Outcome[], withRun: string[]) => {
    if (afterWrite && (withRun.length > 0 || outcomes.some((o) => o.status === 'failed'))) {
      await afterWrite(outcomes, withRun);
    }
  };
  const batcher = createTurnBatcher<{ outcome: Outcome; done: (error?: unknown) => void }>({
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    write: (items) =>
      writeOutcomes(
        db,
        workerId,
        now(),
        items.map((i) => i.outcome),
        usage,
      ).then(
        async (withRun) => {
          await written(
            items.map((i) => i.outcome),
            withRun,
          );
          for (const item of items) item.done();
        },
        (error: unknown) => {
          for (const item of items) item.done(error);
        },
      ),
  });
  return {
    record(outcome: Outcome): Promise<void> {
      return new Promise((resolve, reject) => {
        batcher.push({ outcome, done: (error) => (error ? reject(error) : resolve()) });
      });
    },
  };
}

export type OutcomeWriter = ReturnType<typeof createOutcomeWriter>;

/**
 * One statement for a batch: the attempts inserted, and each delivery's new state set only while
 * `workerId`'s claim holds (`leased_by`: not taken over after its lease ran out). A delivery that a
 * pause or a revocation moved to `skipped` or `cancelled` while this worker was sending it keeps
 * that state (unless the attempt delivered it: then it was delivered), and its claim is released
 * here: pause and revoke wait for that release before they answer (connections/drain). One array
 * per column (`unnest`): the statement's text is the same whatever the batch's size, so PostgreSQL
 * parses it once per connection. Returns the connections of delivered outcomes that have a run of
 * failures to reset (auto-pause.ts), read in the same statement.
 */
export async function writeOutcomes(
  db: Kysely<DB>,
  workerId: string,
  now: Date,
  outcomes: readonly Outcome[],
  usage?: UsageMeter,
): Promise<string[]> {
  // Ending an ordered delivery releases the next of its key in the same transaction, by a statement
  // of its own that sees deliveries chained to it meanwhile (ordering.ts); a batch without one is
  // the single statement it always was.
  const ending = outcomes
    .filter((o) => o.ordered && ENDED_STATUSES.includes(o.status))
    .map((o) => o.deliveryId);
  const written =
    ending.length === 0
      ? await writeStates(db, workerId, now, outcomes)
      : await db.transaction().execute(async (trx) => {
          const states = await writeStates(trx, workerId, now, outcomes);
          await releaseSuccessors(trx, ending, now);
          return states;
        });
  // Committed: the usage of each tenant, as it happened (docs/api/usage.md).
  for (const { tenantId, kind, n } of written.counted) usage?.count(tenantId, kind, n, now);
  return written.withRun;
}

/** What an outcome batch counts in usage: attempt rows inserted, deliveries that reached an end. */
const COUNTED_KINDS: Readonly<Record<string, UsageKind>> = {
  attempt: 'attempts',
  delivered: 'delivered',
  failed: 'failed',
  skipped: 'skipped',
};

const of = <T, R>(list: readonly T[], pick: (item: T) => R) => list.map(pick);
const at = (value: Date | string | null | undefined) => (value ? new Date(value) : null);

async function writeStates(
  db: Kysely<DB>,
  workerId: string,
  now: Date,
  outcomes: readonly Outcome[],
): Promise<ReturnType<typeof splitCounted>> {
  const attempts = outcomes.flatMap((o) => (o.attempt ? [o.attempt] : []));
  const delivered = [...new Set(outcomes.filter((o) => o.status === 'delivered').map((o) => o.connectionId))];
  const result = await sql<{ kind: string; id: string; n: number }>`
      with recorded as (
        insert into delivery_attempts (delivery_id, delivery_created_at, number, started_at, duration_ms,
          remote_address, response_status, error, error_detail, request, response)
        select delivery_id, delivery_created_at, number, started_at, duration_ms, remote_address,
          response_status, error, error_detail, request, response
        from unnest(${of(attempts, (a) => a.delivery_id)}::text[],
          ${of(attempts, (a) => at(a.delivery_created_at))}::timestamptz[], ${of(attempts, (a) => a.number)}::int[],
          ${of(attempts, (a) => at(a.started_at))}::timestamptz[], ${of(attempts, (a) => a.duration_ms)}::int[],
          ${of(attempts, (a) => a.remote_address ?? null)}::text[],
          ${of(attempts, (a) => a.response_status ?? null)}::int[], ${of(attempts, (a) => a.error ?? null)}::text[],
          ${of(attempts, (a) => a.error_detail ?? null)}::text[], ${of(attempts, (a) => a.request ?? null)}::text[],
          ${of(attempts, (a) => a.response ?? null)}::text[])
          as a(delivery_id, delivery_created_at, number, started_at, duration_ms, remote_address,
            response_status, error, error_detail, request, response)
        on conflict do nothing
        returning delivery_id, delivery_created_at),
      -- Lock the batch's deliveries oldest first, the order close() locks them in (control.ts): in
      -- the update's join order, a batch holding a newer one while a pause held an older one
      -- deadlocked, and the outcome the database dropped left a delivery that had arrived to be sent
      -- again once its claim ran out.
      locked as (
        select d.id, d.created_at, d.status from deliveries d
        join unnest(${of(outcomes, (o) => o.deliveryId)}::text[], ${of(outcomes, (o) => at(o.createdAt))}::timestamptz[])
          as k(id, created_at) on d.id = k.id and d.created_at = k.created_at
        where d.leased_by = ${workerId}
        order by d.created_at, d.id
        for update of d),
      updated as (
        update deliveries d set
          status = case when d.status = 'delivering' or v.status = 'delivered' then v.status else d.status end,
          attempt_count = v.attempt_count,
          next_attempt_at = case when d.status = 'delivering' then v.next_attempt_at else d.next_attempt_at end,
          delivered_at = case when d.status = 'delivering' or v.status = 'delivered' then v.delivered_at
            else d.delivered_at end,
          last_response_status = case when v.attempted then v.response_status else d.last_response_status end,
          lease_until = null, leased_by = null, updated_at = ${now}
        from unnest(${of(outcomes, (o) => o.deliveryId)}::text[], ${of(outcomes, (o) => at(o.createdAt))}::timestamptz[],
          ${of(outcomes, (o) => o.status)}::text[], ${of(outcomes, (o) => o.attemptCount)}::int[],
          ${of(outcomes, (o) => o.nextAttemptAt)}::timestamptz[], ${of(outcomes, (o) => o.deliveredAt)}::timestamptz[],
          ${of(outcomes, (o) => o.attempt !== undefined)}::boolean[],
          ${of(outcomes, (o) => o.attempt?.response_status ?? null)}::int[])
          as v(id, created_at, status, attempt_count, next_attempt_at, delivered_at, attempted, response_status)
        join locked on locked.id = v.id and locked.created_at = v.created_at
        where d.id = v.id and d.created_at = v.created_at and d.leased_by = ${workerId}
        returning d.tenant_id, d.status, locked.status as was)
      select 'run' as kind, id, 1 as n from connections
        where id = any(${delivered}::text[]) and failure_streak > 0
      union all ${COUNTED}`.execute(db);
  return splitCounted(result.rows);
}

/**
 * Usage (docs/api/usage.md), per tenant, read from writeStates' own CTEs: the attempts the statement
 * inserted, and the deliveries it moved to an end they were not in.
 */
const COUNTED = sql`
  select 'attempt', d.tenant_id, count(*)::int from recorded r
    join deliveries d on d.id = r.delivery_id and d.created_at = r.delivery_created_at
    group by d.tenant_id
  union all
  select status, tenant_id, count(*)::int from updated
    where status <> was and status in ('delivered', 'failed', 'skipped')
    group by status, tenant_id
  union all
  -- A pause closes a delivery in flight as skipped (counted then, connections/state.ts); its attempt
  -- arriving after all moves it on: it is no longer skipped, so the count is taken back, and usage
  -- stays equal to the rows.
  select 'skipped', tenant_id, -count(*)::int from updated
    where was = 'skipped' and status <> was
    group by tenant_id`;

/** What one outcome batch counted for a tenant. */
interface Counted {
  tenantId: string;
  kind: UsageKind;
  n: number;
}

/** writeStates' rows: the connections with a run to reset, and the usage counted. */
function splitCounted(rows: ReadonlyArray<{ kind: string; id: string; n: number }>): {
  withRun: string[];
  counted: Counted[];
} {
  const withRun: string[] = [];
  const counted: Counted[] = [];
  for (const row of rows) {
    const kind = COUNTED_KINDS[row.kind];
    if (kind) counted.push({ tenantId: row.id, kind, n: Number(row.n) });
    else withRun.push(row.id);
  }
  return { withRun, counted };
}
