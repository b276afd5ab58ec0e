import type { ConnectorCatalog } from '../connections/catalog.js';
import type { BrokerKind } from '../connections/connector.js';
import type { AppContext } from '../context.js';
import { randomBase62 } from '../crypto/base62.js';
import type { Database } from '../db/database.js';
import { errorFields } from '../logger.js';
import { createSender, type Resolver } from '../outbound/sender.js';
import type { DestinationPolicy } from '../outbound/ssrf-policy.js';
import { RETENTION_INTERVAL_MS, runEvery } from '../periodic.js';
import { amqpDestination } from './amqp-destination.js';
import { attemptDelivery, type AttemptDeps } from './attempt.js';
import { applyStreaks, type AutoPauseDeps } from './auto-pause.js';
import type { SessionPoolOptions } from './broker-sessions.js';
import { claimerFor, leaseDuration, leaseEnd, withDispatchLease, type ClaimedRow } from './claim.js';
import { deliveryControl } from './control.js';
import type { Destination } from './destination.js';
import { destinationRegistry } from './destinations.js';
import { createDispatch, type Dispatch } from './dispatch.js';
import { httpDestination } from './http-destination.js';
import { mqttDestination } from './mqtt-destination.js';
import { natsDestination } from './nats-destination.js';
import { ENDED_STATUSES } from './ordering.js';
import { createOutcomeWriter, type Outcome, type OutcomeWriter } from './outcomes.js';
import { createRecorder, type Recorder } from './record.js';
import { redisDestination } from './redis-destination.js';
import { purgeExpired } from './retention.js';
import { createThrottle } from './throttle.js';
import { DELIVERY_CHANNEL, type Wakeup } from './wakeup.js';
import { createSlots, runClaimLoop, type Slots } from './worker-loop.js';

export type { ClaimedRow } from './claim.js';
export type { Dispatch } from './dispatch.js';

export interface WorkerOptions {
  /** Attempts in flight at once. */
  concurrency: number;
  /** How often to look for due deliveries when nothing wakes the worker. */
  pollMs: number;
  resolve?: Resolver;
  /** How often expired deliveries and payloads are deleted (hourly). */
  retentionIntervalMs?: number;
  /** Each broker destination's pool of sessions (DEFAULT_SESSION_POOL; tests make it small). */
  brokerSessions?: SessionPoolOptions;
}

export const DEFAULT_WORKER_OPTIONS: WorkerOptions = { concurrency: 64, pollMs: 500 };

/** What a worker needs: no HTTP, no key verification (`hubgate worker` has neither). */
export interface WorkerDeps {
  ctx: Pick<AppContext, 'config' | 'db' | 'keyring' | 'log' | 'metrics' | 'now' | 'tracing' | 'usage'>;
  catalog: ConnectorCatalog;
}

/**
 * Calls `onDue` once an outcome that makes a delivery due at once (a retry with no wait,
 * DELIVERY_RETRY_SCHEDULE 0, or the next of an ordered key) is written: nothing announces such a retry, and the claim loop only
 * wakes on a freed slot when something may be due (worker-loop.ts, `due`).
 */
function withDueRetries(
  writer: Pick<OutcomeWriter, 'record'>,
  now: () => Date,
  onDue: () => void,
): Pick<OutcomeWriter, 'record'> {
  return {
    record: (outcome) =>
      writer.record(outcome).then(() => {
        // An ordered delivery that ended released the next of its key, due now (ordering.ts).
        if (outcome.ordered && ENDED_STATUSES.includes(outcome.status)) return onDue();
        if (outcome.status !== 'retrying' || !outcome.nextAttemptAt) return;
        if (new Date(outcome.nextAttemptAt) <= now()) onDue();
      }),
  };
}

/** What follows written outcomes: runs of failures counted, and failing connections paused. */
function pauseWhenFailing(ctx: WorkerDeps['ctx'], leaseMs: number) {
  const control = deliveryControl({ now: ctx.now, maxDrainMs: leaseMs });
  const autoPause: AutoPauseDeps = {
    db: ctx.db,
    usage: ctx.usage,
    now: ctx.now,
    settings: ctx.config.delivery,
    control,
  };
  return (outcomes: readonly Outcome[], withRun: readonly string[]) =>
    applyStreaks(autoPause, outcomes, withRun).catch((error: unknown) => {
      ctx.log.warn(errorFields(error), 'updating failure runs (automatic pause) failed');
    });
}

/**
 * Starts each claimed row's attempt in a slot of its own, and keeps the IDs of those in flight:
 * a shutdown names the ones it waits for, or cuts.
 */
function attemptsIn(slots: Slots, phases: AttemptDeps, log: WorkerDeps['ctx']['log'], released: () => void) {
  const attempting = new Set<string>();
  const track = (row: ClaimedRow) => {
    attempting.add(row.id);
    const attempt = attemptDelivery(phases, row).catch((error: unknown) => {
      // A bug, not an outage (sending touches no database): the claim runs out and the delivery
      // is retaken with this attempt logged as interrupted.
      log.error({ ...errorFields(error), deliveryId: row.id }, 'delivery attempt failed unexpectedly');
    });
    slots.hold(
      attempt.finally(() => attempting.delete(row.id)),
      released,
    );
  };
  return { track, attempting };
}

/** What each of a worker's attempts needs (`attemptDelivery`). */
function attemptPhases(deps: WorkerDeps, destination: Destination, recorder: Recorder): AttemptDeps {
  const { ctx } = deps;
  const { retryScheduleSeconds, timeoutMs } = ctx.config.delivery;
  const throttle = createThrottle(ctx.db, ctx.now);
  return { ctx, catalog: deps.catalog, destination, recorder, retryScheduleSeconds, timeoutMs, throttle };
}

/** Each broker kind's destination (contract §21, destinations.ts): a new broker is one line here. */
const brokerDestinations = (
  policy: DestinationPolicy,
  { resolve, brokerSessions }: WorkerOptions,
): Record<BrokerKind, Destination> => {
  const options = { policy, resolve, sessions: brokerSessions };
  return {
    amqp: amqpDestination(options),
    mqtt: mqttDestination(options),
    nats: natsDestination(options),
    redis: redisDestination(options),
  };
};

/**
 * A delivery worker: claims due deliveries with FOR UPDATE SKIP LOCKED and a lease, sends them, and
 * records the outcome. Any number of workers, in any number of processes, share the table; a worker
 * that dies leaves its claims to expire and be taken again (at least once, never lost).
 */
export function createDeliveryWorker(deps: WorkerDeps, wakeup: Wakeup, options: WorkerOptions) {
  const { ctx } = deps;
  const { timeoutMs } = ctx.config.delivery;
  const id = `wrk_${randomBase62(12)}`;
  // An HTTP request to the HTTP destination, a broker's message to its broker's (destinations.ts).
  const destination = destinationRegistry(
    httpDestination(
      createSender({ policy: ctx.config.delivery, timeoutMs, resolve: options.resolve }),
      ctx.config.delivery.responseBodyBytes,
    ),
    brokerDestinations(ctx.config.delivery, options),
  );
  const leaseMs = leaseDuration(timeoutMs);
  const slots = createSlots(options.concurrency);
  const due = { maybe: true };
  const writer = createOutcomeWriter(ctx.db, id, ctx.now, pauseWhenFailing(ctx, leaseMs), ctx.usage);
  const recorder = createRecorder(
    withDueRetries(writer, ctx.now, () => {
      due.maybe = true;
      wakeIfFree();
    }),
    ctx.log,
  );
  const phases = attemptPhases(deps, destination, recorder);
  const wakeIfFree = (): void => {
    if (due.maybe && slots.canClaim()) wakeup.notify();
  };
  const { track, attempting } = attemptsIn(slots, phases, ctx.log, wakeIfFree);
  const claim = claimerFor(ctx, id, leaseMs);
  let running = false;
  let loop: Promise<void> | undefined;
  const isRunning = () => running;
  const leaseUntil = () => leaseEnd(ctx.now(), leaseMs);
  const { pollMs } = options;
  const dispatched = (row: ClaimedRow) => track(withDispatchLease(row, leaseMs));
  return {
    id,
    dispatch: createDispatch({ workerId: id, isRunning, slots, leaseUntil, track: dispatched, wakeIfFree }),
    start() {
      if (running) return;
      running = true;
      loop = runClaimLoop({ isRunning, slots, claim, track, wakeup, pollMs, log: ctx.log, due });
    },
    /** The IDs of the deliveries being attempted now. */
    inFlight: () => [...attempting],
    /** Claims nothing more, and resolves once the attempts in flight have ended and been recorded. */
    async stop() {
      running = false;
      wakeup.notify();
      await loop;
      const deliveryIds = [...attempting];
      if (deliveryIds.length > 0)
        ctx.log.info({ deliveryIds }, 'stopping: waiting for the attempts in flight');
      await slots.drained();
      await recorder.settled();
      await destination.close();
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;

/** The workers of one process, built once by createServices and started by startBackground. */
export interface DeliveryWorkers {
  /** Direct dispatch: the event writer hands this process's publishes to its worker (dispatch.ts). */
  dispatch: Dispatch;
  /** The IDs of the deliveries being attempted now. */
  inFlight(): string[];
  /** Starts claiming (and, on PostgreSQL, listening for other processes' publishes). */
  start(): Promise<void>;
  /** Claims nothing more and resolves once the attempts in flight are recorded; once, however often called. */
  stop(): Promise<void>;
}

/**
 * The workers of one process (`serve` or `hubgate worker`): one worker loop, woken by this process's
 * publishes and, on PostgreSQL, by every other process's through LISTEN. Built before the event
 * writer, which takes their dispatch at construction; a worker not started takes no dispatch
 * (dispatch.ts `isRunning`), so publishes then leave their deliveries to a claim.
 */
export function createDeliveryWorkers(
  deps: WorkerDeps,
  database: Database,
  wakeup: Wakeup,
  options: Partial<WorkerOptions>,
): DeliveryWorkers {
  const worker = createDeliveryWorker(deps, wakeup, {
    ...DEFAULT_WORKER_OPTIONS,
    concurrency: deps.ctx.config.delivery.concurrency,
    ...options,
  });
  let running: { retention: { stop(): Promise<void> }; unlisten?: () => Promise<void> } | undefined;
  let stopping: Promise<void> | undefined;
  return {
    dispatch: worker.dispatch,
    inFlight: worker.inFlight,
    async start() {
      const unlisten = database.listen
        ? await database.listen(DELIVERY_CHANNEL, () => wakeup.notify())
        : undefined;
      worker.start();
      running = {
        retention: startDeliveryRetention(deps.ctx, database, options.retentionIntervalMs),
        unlisten,
      };
    },
    stop() {
      // The worker stops claiming at once, not after a purge that happens to be running.
      stopping ??= Promise.all([running?.retention.stop(), running?.unlisten?.(), worker.stop()]).then(
        () => undefined,
      );
      return stopping;
    },
  };
}

/** Retention runs beside the workers, never inside their loop; several processes may run it at once. */
function startDeliveryRetention(ctx: WorkerDeps['ctx'], database: Database, intervalMs: number | undefined) {
  return runEvery(intervalMs ?? RETENTION_INTERVAL_MS, () => {
    const now = ctx.now();
    const cutoff = new Date(now.getTime() - ctx.config.delivery.retentionDays * 86_400_000);
    return purgeExpired(ctx.db, now, cutoff, database.engine)
      .then(({ created, days, deliveries, events }) => {
        if (created.length > 0) ctx.log.info({ days: created }, 'delivery partitions created');
        if (days.length > 0) ctx.log.info({ days }, 'expired delivery partitions dropped');
        if (deliveries + events > 0) ctx.log.info({ deliveries, events }, 'expired deliveries deleted');
      })
      .catch((error: unknown) => ctx.log.warn(errorFields(error), 'purge failed'));
  });
}
