/** Wakes the delivery workers of this process when there is new work, instead of waiting for a poll. */
export interface Wakeup {
  notify(): void;
  /** Resolves on the next notify, or after `ms`. */
  wait(ms: number): Promise<void>;
}

export function createWakeup(): Wakeup {
  let waiters: Array<() => void> = [];
  let pending = false;
  return {
    notify() {
      pending = true;
      const current = waiters;
      waiters = [];
      for (const wake of current) wake();
    },
    wait(ms) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== done);
          pending = false;
          resolve();
        }
        waiters.push(done);
      });
    },
  };
}
