import { sql, type Insertable, type Kysely } from 'kysely';
import type { DB, DeliveryAttemptsTable, DeliveryStatus } from '../db/schema.js';
import { createTurnBatcher } from './turn-batch.js';

/** How one claimed delivery ended this time, and the attempt that ended it (none when cancelled). */
export interface Outcome {
  deliveryId: string;
  /** The delivery's partition key. */
  createdAt: Date | string;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  attempt?: Insertable<DeliveryAttemptsTable>;
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
export function createOutcomeWriter(db: Kysely<DB>, workerId: string, now: () => Date) {
  const batcher = createTurnBatcher<{ outcome: Outcome; done: (error?: unknown) => void }>({
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    write: (items) =>
      writeOutcomes(
        db,
        workerId,
        now(),
        items.map((i) => i.outcome),
      ).then(
        () => {
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
 * `workerId`'s claim holds (`leased_by` and `delivering`: not cancelled by a revocation, not taken
 * over after its lease ran out). One array per column (`unnest`): the statement's text is the same
 * whatever the batch's size, so PostgreSQL parses it once per connection.
 */
export async function writeOutcomes(
  db: Kysely<DB>,
  workerId: string,
  now: Date,
  outcomes: readonly Outcome[],
): Promise<void> {
  const attempts = outcomes.flatMap((o) => (o.attempt ? [o.attempt] : []));
  const of = <T, R>(list: readonly T[], pick: (item: T) => R) => list.map(pick);
  const at = (value: Date | string | null | undefined) => (value ? new Date(value) : null);
  await sql`
      with recorded as (
        insert into delivery_attempts (delivery_id, delivery_created_at, number, started_at, duration_ms,
          remote_address, response_status, error, error_detail)
        select delivery_id, delivery_created_at, number, started_at, duration_ms, remote_address,
          response_status, error, error_detail
        from unnest(${of(attempts, (a) => a.delivery_id)}::text[],
          ${of(attempts, (a) => at(a.delivery_created_at))}::timestamptz[], ${of(attempts, (a) => a.number)}::int[],
          ${of(attempts, (a) => at(a.started_at))}::timestamptz[], ${of(attempts, (a) => a.duration_ms)}::int[],
          ${of(attempts, (a) => a.remote_address ?? null)}::text[],
          ${of(attempts, (a) => a.response_status ?? null)}::int[], ${of(attempts, (a) => a.error ?? null)}::text[],
          ${of(attempts, (a) => a.error_detail ?? null)}::text[])
          as a(delivery_id, delivery_created_at, number, started_at, duration_ms, remote_address,
            response_status, error, error_detail)
        on conflict do nothing)
      update deliveries d set status = v.status, attempt_count = v.attempt_count,
        next_attempt_at = v.next_attempt_at, delivered_at = v.delivered_at,
        lease_until = null, leased_by = null, updated_at = ${now}
      from unnest(${of(outcomes, (o) => o.deliveryId)}::text[], ${of(outcomes, (o) => at(o.createdAt))}::timestamptz[],
        ${of(outcomes, (o) => o.status)}::text[], ${of(outcomes, (o) => o.attemptCount)}::int[],
        ${of(outcomes, (o) => o.nextAttemptAt)}::timestamptz[], ${of(outcomes, (o) => o.deliveredAt)}::timestamptz[])
        as v(id, created_at, status, attempt_count, next_attempt_at, delivered_at)
      where d.id = v.id and d.created_at = v.created_at and d.leased_by = ${workerId} and d.status = 'delivering'`.execute(
    db,
  );
}
