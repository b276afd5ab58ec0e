import type { AppContext } from '../context.js';
import { errorFields } from '../logger.js';
import type { ClaimedRow } from './claim.js';
import type { Wakeup } from './wakeup.js';

/**
 * Free slots a worker waits for before it claims. Under load, claiming after every finished attempt
 * costs a claim statement per delivery; waiting for a quarter of the slots to be free claims them in
 * batches, and an idle worker claims at once.
 */
export function claimFloor(concurrency: number): number {
  return Math.max(1, Math.floor(concurrency / 4));
}

/** Slots neither sending nor promised to this process's publishes (direct dispatch). */
export function freeSlots(concurrency: number, inFlight: number, reserved: number): number {
  return concurrency - inFlight - reserved;
}

/** How many due deliveries to claim now: every free slot once there are enough of them, else none. */
export function claimLimit(free: number, floor: number): number {
  return free >= floor ? free : 0;
}

/**
 * Whether the loop sleeps (until woken or `pollMs`) after a claim: when there was nothing to claim,
 * or fewer due deliveries than it asked for (the backlog is empty). A full claim goes on at once.
 */
export function waitsAfterClaim(claimed: number, limit: number): boolean {
  return claimed === 0 || claimed < limit;
}

/** How many of `wanted` slots a publish may have: none once the worker stops, never more than are free. */
export function reservable(running: boolean, wanted: number, free: number): number {
  return running ? Math.max(0, Math.min(wanted, free)) : 0;
}

/**
 * A worker's slots: attempts being sent (what `concurrency` bounds) and slots promised to this
 * process's publishes. A slot is free once its request has ended, not once its outcome is written:
 * the delivery stays claimed meanwhile, so nothing can take it twice, and the worker sends while the
 * previous batch of outcomes is on its way instead of waiting for it.
 */
export function createSlots(concurrency: number) {
  const inFlight = new Set<Promise<void>>();
  const floor = claimFloor(concurrency);
  let reserved = 0;
  const free = () => freeSlots(concurrency, inFlight.size, reserved);
  return {
    free,
    /** What to claim now (see `claimLimit`). */
    limit: () => claimLimit(free(), floor),
    canClaim: () => free() >= floor,
    /** Holds a slot until `job` (which never rejects) settles, then calls `released`. */
    hold(job: Promise<void>, released: () => void): void {
      const held = job.finally(() => {
        inFlight.delete(held);
        released();
      });
      inFlight.add(held);
    },
    reserve(slots: number): void {
      reserved += slots;
    },
    unreserve(slots: number): void {
      reserved -= slots;
    },
    /** Resolves when the attempts sending now have ended. */
    drained: () => Promise.all(inFlight),
  };
}

export type Slots = ReturnType<typeof createSlots>;

export interface LoopDeps {
  isRunning(): boolean;
  slots: Pick<Slots, 'limit'>;
  claim(limit: number): Promise<ClaimedRow[]>;
  /** Starts sending a claimed row in a slot of its own. */
  track(row: ClaimedRow): void;
  wakeup: Pick<Wakeup, 'wait'>;
  pollMs: number;
  log: AppContext['log'];
  /**
   * Whether a claim may find something (set by the loop): after a full claim (more may be due), a
   * failed one, or a turn with no free slot to claim with (a wake-up it could not act on). A slot
   * freed while it is false wakes nothing: a claim then would come back empty, since this process's
   * publishes hand their deliveries to the worker directly and announce only the rest.
   */
  due: { maybe: boolean };
}

/** Claims while slots are free, and sleeps until woken (or `pollMs`) when there is nothing due. */
export async function runClaimLoop(deps: LoopDeps): Promise<void> {
  while (deps.isRunning()) {
    const limit = deps.slots.limit();
    let claimed = 0;
    let failed = false;
    if (limit > 0) {
      try {
        const rows = await deps.claim(limit);
        claimed = rows.length;
        for (const row of rows) deps.track(row);
      } catch (error) {
        failed = true;
        deps.log.warn(errorFields(error), 'claiming deliveries failed');
      }
    }
    deps.due.maybe = limit === 0 || failed || claimed >= limit;
    if (!deps.isRunning()) break;
    if (waitsAfterClaim(claimed, limit)) await deps.wakeup.wait(deps.pollMs);
  }
}
