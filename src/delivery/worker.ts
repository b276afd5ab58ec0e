import { type Insertable, type Selectable, sql } from 'kysely';
import { randomBase62 } from '../crypto/base62.js';
import type { ConnectorCatalog } from '../connections/catalog.js';
import type { AppContext } from '../context.js';
import { errorFields } from '../logger.js';
import type { DeliveryOutcome } from '../http/metrics.js';
import { type Database, isDatabaseUnavailable } from '../db/database.js';
import type { ConnectionsTable, DeliveryAttemptsTable, DeliveryStatus, EventsTable } from '../db/schema.js';
import { createOutcomeWriter } from './outcomes.js';
import { createSender, type Resolver, type SendError, type SendResult } from '../outbound/sender.js';
import { purgeExpired } from './retention.js';
import { retryDelaySeconds } from './retry.js';
import { signatureHeaders } from '../outbound/signing.js';
import type { DeliveryRow } from './store.js';
import { DELIVERY_CHANNEL, type Wakeup } from './wakeup.js';
import { RETENTION_INTERVAL_MS, runEvery } from '../periodic.js';

export interface WorkerOptions {
  /** Attempts in flight at once. */
  concurrency: number;
  /** How often to look for due deliveries when nothing wakes the worker. */
  pollMs: number;
  resolve?: Resolver;
  /** How often expired deliveries and payloads are deleted (hourly). */
  retentionIntervalMs?: number;
}

/** A claimed delivery with what sending it needs. */
export type ClaimedRow = Pick<
  DeliveryRow,
  'id' | 'event_id' | 'connection_id' | 'attempt_count' | 'created_at'
> &
  Pick<
    Selectable<ConnectionsTable>,
    'connector_key' | 'config' | 'credentials_sealed' | 'previous_credentials_sealed' | 'previous_valid_until'
  > &
  Pick<Selectable<EventsTable>, 'type' | 'payload_sealed'> & {
    connection_status: Selectable<ConnectionsTable>['status'];
    event_created_at: Selectable<EventsTable>['created_at'];
    /** When retaken from a claim that expired: when that claim was made, and when it ran out. */
    lost_claim_at: Date | null;
    lost_claim_until: Date | null;
  };

/** How an attempt failed (contract §7 `error`): what the sender saw, or a worker that died mid-attempt. */
type AttemptResult = Omit<SendResult, 'error'> & { error: SendError | 'interrupted' | null };

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = { concurrency: 64, pollMs: 500 };

/**
 * A delivery worker: claims due deliveries with FOR UPDATE SKIP LOCKED and a lease, sends them, and
 * records the outcome. Any number of workers, in any number of processes, share the table; a worker
 * that dies leaves its claims to expire and be taken again (at least once, never lost).
 */
/** What a worker needs: no HTTP, no key verification (`hubgate worker` has neither). */
export interface WorkerDeps {
  ctx: Pick<AppContext, 'config' | 'db' | 'keyring' | 'log' | 'metrics' | 'now'>;
  catalog: ConnectorCatalog;
}

export function createDeliveryWorker(deps: WorkerDeps, wakeup: Wakeup, options: WorkerOptions) {
  const { ctx, catalog } = deps;
  const { db, keyring, config } = ctx;
  const id = `wrk_${randomBase62(12)}`;
  const sender = createSender({
    policy: config.delivery,
    timeoutMs: config.delivery.timeoutMs,
    resolve: options.resolve,
  });
  // Longer than any attempt can take (one timeout, plus reading and writing the outcome), so a live
  // worker never loses a claim mid-send; a dead worker's claims are due again after it.
  const leaseMs = config.delivery.timeoutMs * 2 + 5_000;
  // Attempts being sent: what `concurrency` bounds.
  const inFlight = new Set<Promise<void>>();
  // Outcomes being written. A slot is free once its request has ended, not once its outcome is
  // written: the delivery stays claimed meanwhile, so nothing can take it twice, and the worker
  // sends while the previous batch of outcomes is on its way instead of waiting for it.
  const recording = new Set<Promise<void>>();
  // Under load, claiming after every finished attempt costs a claim statement per delivery; waiting
  // for a quarter of the slots to be free claims them in batches, and an idle worker claims at once.
  const claimFloor = Math.max(1, Math.floor(options.concurrency / 4));
  // Slots promised to this process's publishes (see `dispatch`), not yet handed their deliveries.
  let reserved = 0;
  const free = () => options.concurrency - inFlight.size - reserved;
  const canClaim = () => free() >= claimFloor;
  let running = false;
  let loop: Promise<void> | undefined;

  /**
   * Claims due deliveries and reads what sending them needs (connection, credentials, payload) in one
   * statement: the read sees each claim as it was made, so a revocation that lands later is caught
   * only by the outcome write (see README, Delivery). The due condition is written so that the
   * partial index on `next_attempt_at` serves it in order (a claim keeps `next_attempt_at` at the
   * moment it was made, so an expired claim is due by it too): with a backlog, an `OR` of the two
   * cases made PostgreSQL sort every due row for each claim (17 ms for 20,000, against 3.5 ms).
   */
  async function claim(limit: number) {
    const now = ctx.now();
    const result = await sql<ClaimedRow>`
      with due as (
        select id, created_at, status, updated_at, lease_until from deliveries
        where status in ('pending', 'retrying', 'delivering') and next_attempt_at <= ${now}
          and (status <> 'delivering' or lease_until < ${now})
        order by next_attempt_at
        limit ${limit}
        for update skip locked),
      claimed as (
        update deliveries d set status = 'delivering', lease_until = ${new Date(now.getTime() + leaseMs)},
          leased_by = ${id}, updated_at = ${now}, next_attempt_at = ${now}
        from due where d.id = due.id and d.created_at = due.created_at
        returning d.id, d.event_id, d.connection_id, d.attempt_count, d.created_at,
          case when due.status = 'delivering' then due.updated_at end as lost_claim_at,
          case when due.status = 'delivering' then due.lease_until end as lost_claim_until)
      select claimed.id, claimed.event_id, claimed.connection_id, claimed.attempt_count, claimed.created_at,
        claimed.lost_claim_at, claimed.lost_claim_until, c.status as connection_status, c.connector_key, c.config, c.credentials_sealed,
        c.previous_credentials_sealed, c.previous_valid_until, e.type, e.payload_sealed,
        e.created_at as event_created_at
      from claimed
      join connections c on c.id = claimed.connection_id
      join events e on e.id = claimed.event_id and e.created_at = claimed.created_at`.execute(db);
    return result.rows;
  }

  const outcomes = createOutcomeWriter(db, id, ctx.now);

  /**
   * Ends a claim (see outcomes.ts): the delivery's new state, and the attempt that ended it. Returns
   * at once; the write goes with the next batch of outcomes.
   */
  function finish(
    row: ClaimedRow,
    status: DeliveryStatus,
    fields: { attemptCount?: number; nextAttemptAt?: Date | null; deliveredAt?: Date | null } = {},
    attempt?: Insertable<DeliveryAttemptsTable>,
  ): void {
    const written = outcomes
      .record({
        deliveryId: row.id,
        createdAt: row.created_at,
        status,
        attemptCount: fields.attemptCount ?? row.attempt_count,
        nextAttemptAt: fields.nextAttemptAt ?? null,
        deliveredAt: fields.deliveredAt ?? null,
        attempt,
      })
      .catch((error: unknown) => {
        const fields = { ...errorFields(error), deliveryId: row.id };
        // Expected during an outage: the claim runs out, and the delivery is retaken with this
        // attempt logged as interrupted.
        if (isDatabaseUnavailable(error))
          ctx.log.warn(fields, 'delivery outcome not recorded: database unavailable');
        else ctx.log.error(fields, 'delivery outcome not recorded');
      })
      .finally(() => recording.delete(written));
    recording.add(written);
  }

  async function attempt(row: ClaimedRow): Promise<void> {
    if (row.lost_claim_at && row.lost_claim_until) {
      recordInterrupted(row, new Date(row.lost_claim_at), new Date(row.lost_claim_until));
      return;
    }
    const definition = catalog.get(row.connector_key);
    if (row.connection_status !== 'active' || !row.credentials_sealed || !definition) {
      ctx.metrics.deliveries.inc({ outcome: 'cancelled' });
      finish(row, 'cancelled');
      return;
    }
    const now = ctx.now();
    const credentials = JSON.parse(
      keyring.open('connection-credentials', row.credentials_sealed, row.connection_id),
    ) as Record<string, string>;
    const data = JSON.parse(keyring.open('event-payload', row.payload_sealed, row.event_id)) as Record<
      string,
      unknown
    >;
    const rendered = definition.render(
      {
        id: row.event_id,
        type: row.type,
        timestamp: new Date(row.event_created_at).toISOString(),
        data,
      },
      row.config,
      credentials,
    );
    if (definition.signingSecretField) {
      const field = definition.signingSecretField;
      const secrets = [credentials[field]];
      if (
        row.previous_credentials_sealed &&
        row.previous_valid_until &&
        new Date(row.previous_valid_until) > now
      ) {
        const previous = JSON.parse(
          keyring.open('connection-credentials', row.previous_credentials_sealed, row.connection_id),
        ) as Record<string, string>;
        secrets.push(previous[field]);
      }
      Object.assign(
        rendered.headers,
        signatureHeaders(
          row.event_id,
          rendered.body,
          secrets.filter((s): s is string => Boolean(s)),
          now,
        ),
      );
    }
    const result = await sender.send(rendered);
    record(row, now, result);
  }

  /**
   * The claim this delivery was retaken from ran out with no outcome recorded: its worker died (or
   * lost the database) mid-attempt, and the receiver may have had the request. That attempt is
   * logged as `interrupted` and counts like any failed one, so attempt numbers match what the
   * receiver may have seen, the retry schedule goes on from there, and a delivery that keeps
   * killing its worker ends `failed` instead of looping. Nothing is sent now: the next attempt waits
   * its scheduled delay, as after any failure.
   */
  function recordInterrupted(row: ClaimedRow, claimedAt: Date, claimEnded: Date): void {
    const heldMs = Math.max(0, claimEnded.getTime() - claimedAt.getTime());
    record(row, claimedAt, {
      ok: false,
      status: null,
      remoteAddress: null,
      error: 'interrupted',
      errorDetail: `the worker stopped before recording an outcome; its claim expired after ${Math.round(heldMs / 1000)} s`,
      retryAfterSeconds: null,
      durationMs: heldMs,
    });
  }

  function count(row: ClaimedRow, outcome: DeliveryOutcome, result: AttemptResult): void {
    ctx.metrics.deliveries.inc({ outcome });
    // How long an interrupted attempt took is not known; the claim's length would skew the histogram.
    if (result.error !== 'interrupted') {
      ctx.metrics.deliveryAttemptDuration.observe({ outcome }, result.durationMs / 1000);
    }
    if (outcome === 'delivered') {
      const published = new Date(row.event_created_at).getTime();
      ctx.metrics.deliveryLatency.observe((ctx.now().getTime() - published) / 1000);
    }
  }

  function record(row: ClaimedRow, startedAt: Date, result: AttemptResult): void {
    const number = row.attempt_count + 1;
    const attempt: Insertable<DeliveryAttemptsTable> = {
      delivery_id: row.id,
      delivery_created_at: row.created_at,
      number,
      started_at: startedAt,
      duration_ms: result.durationMs,
      remote_address: result.remoteAddress,
      response_status: result.status,
      error: result.error,
      error_detail: result.errorDetail,
    };
    if (result.ok) {
      count(row, 'delivered', result);
      finish(row, 'delivered', { attemptCount: number, deliveredAt: ctx.now() }, attempt);
      return;
    }
    // 410 Gone: the receiver says it will never take this again.
    const delay =
      result.status === 410
        ? null
        : retryDelaySeconds(number, config.delivery.retryScheduleSeconds, result.retryAfterSeconds);
    if (delay === null) {
      count(row, 'failed', result);
      finish(row, 'failed', { attemptCount: number }, attempt);
      return;
    }
    const nextAttemptAt = new Date(ctx.now().getTime() + delay * 1000);
    count(row, 'retrying', result);
    finish(row, 'retrying', { attemptCount: number, nextAttemptAt }, attempt);
  }

  function track(row: ClaimedRow): void {
    const job = attempt(row)
      .catch((error: unknown) => {
        // A bug, not an outage (sending touches no database): the claim runs out and the delivery
        // is retaken with this attempt logged as interrupted.
        ctx.log.error({ ...errorFields(error), deliveryId: row.id }, 'delivery attempt failed unexpectedly');
      })
      .finally(() => {
        inFlight.delete(job);
        if (canClaim()) wakeup.notify();
      });
    inFlight.add(job);
  }

  async function run(): Promise<void> {
    while (running) {
      const slots = free();
      let claimed = 0;
      if (canClaim()) {
        try {
          const rows = await claim(slots);
          claimed = rows.length;
          for (const row of rows) track(row);
        } catch (error) {
          ctx.log.warn(errorFields(error), 'claiming deliveries failed');
        }
      }
      if (!running) break;
      if (claimed === 0 || claimed < slots) await wakeup.wait(options.pollMs);
    }
  }

  /**
   * Direct dispatch: this process's publishes insert deliveries already claimed by this worker when
   * it has free slots, and hand them over once committed, instead of inserting them `pending` for a
   * claim statement to update and read back. That saves a statement and a row update per delivery,
   * and the time to the first attempt. The claim is a real one (status, lease, worker), so a process
   * that dies before sending leaves deliveries that expire and are retaken like any other claim.
   */
  const dispatch: Dispatch = {
    reserve(wanted) {
      const slots = running ? Math.max(0, Math.min(wanted, free())) : 0;
      reserved += slots;
      return { slots, workerId: id, leaseUntil: new Date(ctx.now().getTime() + leaseMs) };
    },
    hand(rows, slots) {
      reserved -= slots;
      for (const row of rows) track(row);
      if (canClaim()) wakeup.notify();
    },
  };

  return {
    id,
    dispatch,
    start() {
      if (running) return;
      running = true;
      loop = run();
    },
    async stop() {
      running = false;
      wakeup.notify();
      await loop;
      await Promise.all(inFlight);
      await Promise.all(recording);
      await sender.close();
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;

/** A worker of this process that takes deliveries straight from its publishes (see `dispatch` above). */
export interface Dispatch {
  /** Promises up to `wanted` slots; the publisher inserts that many deliveries claimed by `workerId`. */
  reserve(wanted: number): { slots: number; workerId: string; leaseUntil: Date };
  /** The committed deliveries of a reservation of `slots` (fewer, or none, if the write failed). */
  hand(rows: ClaimedRow[], slots: number): void;
}

/**
 * The workers of one process (`serve` or `hubgate worker`): one worker loop, woken by this process's
 * publishes and, on PostgreSQL, by every other process's through LISTEN.
 */
export async function startDeliveryWorkers(
  deps: WorkerDeps,
  database: Database,
  wakeup: Wakeup,
  options: Partial<WorkerOptions>,
): Promise<{ dispatch: Dispatch; stop(): Promise<void> }> {
  const worker = createDeliveryWorker(deps, wakeup, {
    ...DEFAULT_WORKER_OPTIONS,
    concurrency: deps.ctx.config.delivery.concurrency,
    ...options,
  });
  const unlisten = database.listen
    ? await database.listen(DELIVERY_CHANNEL, () => wakeup.notify())
    : undefined;
  worker.start();
  // Retention runs beside the workers, never inside their loop; several processes may run it at once.
  const { ctx } = deps;
  const retention = runEvery(options.retentionIntervalMs ?? RETENTION_INTERVAL_MS, () => {
    const now = ctx.now();
    const cutoff = new Date(now.getTime() - ctx.config.delivery.retentionDays * 86_400_000);
    return purgeExpired(ctx.db, now, cutoff)
      .then(({ created, days, deliveries, events }) => {
        if (created.length > 0) ctx.log.info({ days: created }, 'delivery partitions created');
        if (days.length > 0) ctx.log.info({ days }, 'expired delivery partitions dropped');
        if (deliveries + events > 0) ctx.log.info({ deliveries, events }, 'expired deliveries deleted');
      })
      .catch((error: unknown) => ctx.log.warn(errorFields(error), 'purge failed'));
  });
  return {
    dispatch: worker.dispatch,
    async stop() {
      await retention.stop();
      await unlisten?.();
      await worker.stop();
    },
  };
}
