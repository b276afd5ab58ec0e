import type { ClaimedRow } from './claim.js';
import { reservable, type Slots } from './worker-loop.js';

/** A worker of this process that takes deliveries straight from its publishes (see `createDispatch`). */
export interface Dispatch {
  /** Promises up to `wanted` slots; the publisher inserts that many deliveries claimed by `workerId`. */
  reserve(wanted: number): { slots: number; workerId: string; leaseUntil: Date };
  /** The committed deliveries of a reservation of `slots` (fewer, or none, if the write failed). */
  hand(rows: ClaimedRow[], slots: number): void;
}

export interface DispatchDeps {
  workerId: string;
  isRunning(): boolean;
  slots: Pick<Slots, 'free' | 'reserve' | 'unreserve'>;
  /** When a claim made now runs out. */
  leaseUntil(): Date;
  /** Starts sending a claimed row in a slot of its own. */
  track(row: ClaimedRow): void;
  /** Wakes the claim loop when enough slots are free. */
  wakeIfFree(): void;
}

/**
 * Direct dispatch: this process's publishes insert deliveries already claimed by this worker when
 * it has free slots, and hand them over once committed, instead of inserting them `pending` for a
 * claim statement to update and read back. That saves a statement and a row update per delivery,
 * and the time to the first attempt. The claim is a real one (status, lease, worker), so a process
 * that dies before sending leaves deliveries that expire and are retaken like any other claim.
 */
export function createDispatch(deps: DispatchDeps): Dispatch {
  return {
    reserve(wanted) {
      const slots = reservable(deps.isRunning(), wanted, deps.slots.free());
      deps.slots.reserve(slots);
      return { slots, workerId: deps.workerId, leaseUntil: deps.leaseUntil() };
    },
    hand(rows, slots) {
      deps.slots.unreserve(slots);
      for (const row of rows) deps.track(row);
      deps.wakeIfFree();
    },
  };
}
