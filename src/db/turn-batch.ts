/** How a batcher groups what it is given. */
export interface TurnBatchOptions<T> {
  /** Items written by one batch at most. */
  maxBatch: number;
  /** Batches being written at once; items that arrive meanwhile wait and form the next batch. */
  maxInFlight: number;
  /** Writes a batch; it answers its items itself (a rejection is a bug, not an item's failure). */
  write(items: T[]): Promise<void>;
}

/**
 * Batches without a timer (group commit, as PostgreSQL's own): what arrives is written at the next
 * turn of the event loop with whatever else arrived in the same turn, unless `maxInFlight` batches
 * are already being written; then it waits and forms the next batch. The batch size follows the load
 * by itself, and an item alone waits for nothing. Shared by publishing (delivery/group-commit.ts), its
 * reads of event types (event-types/catalog.ts) and the worker's outcomes (delivery/outcomes.ts).
 */
export function createTurnBatcher<T>(options: TurnBatchOptions<T>): { push(item: T): void } {
  let queue: T[] = [];
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
    const items = queue.length <= options.maxBatch ? queue : queue.slice(0, options.maxBatch);
    queue = queue.length <= options.maxBatch ? [] : queue.slice(options.maxBatch);
    inFlight++;
    void options.write(items).finally(() => {
      inFlight--;
      schedule();
    });
    schedule();
  }

  return {
    push(item) {
      queue.push(item);
      schedule();
    },
  };
}
