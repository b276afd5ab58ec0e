/** How often the retention purges run, beside the workers of each process. */
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Runs `task` every `intervalMs`, one run at a time: a run still going when the next is due is not
 * doubled. `stop` waits for a run in progress, so nothing touches the database after it. The task
 * handles (logs) its own errors.
 */
export function runEvery(intervalMs: number, task: () => Promise<void>): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= task().finally(() => {
      running = undefined;
    });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
