/**
 * Signals from the first line of the process (docs/decisions/0054-graceful-shutdown.md). In a container
 * node is PID 1, and the kernel drops a signal that PID 1 has no handler for: before `serve` or `worker`
 * installed its shutdown (shutdown.ts), a stop during the start (an embedded initdb and migrations take
 * seconds) was lost, and the runtime's grace ended in SIGKILL. Until a command takes over, a SIGTERM or
 * SIGINT ends the process at once: nothing is in flight yet (no request accepted, no delivery claimed),
 * a migration cut short is rolled back by PostgreSQL or recovered from the embedded database's
 * write-ahead log at the next start, as after any crash.
 */
let held: ((signal: NodeJS.Signals) => void) | undefined;

/**
 * Called by `main` before anything else loads. `stoppedCode` is the exit code of a command stopped
 * before it started its work: 0 for `serve` and `worker` (a stop is what was asked for), 1 for a
 * command that did not do what it was run for.
 */
export function holdStartupSignals(command: string | undefined, stoppedCode: number): void {
  if (held) return;
  held = (signal) => {
    process.stderr.write(
      `hubgate: ${signal} while ${command ?? 'hubgate'} was starting: stopped before it began\n`,
    );
    process.exit(stoppedCode);
  };
  process.on('SIGTERM', held);
  process.on('SIGINT', held);
}

/** Called when a command installs its own handling of signals (closeOnSignal); a no-op when none is held. */
export function releaseStartupSignals(): void {
  if (!held) return;
  process.off('SIGTERM', held);
  process.off('SIGINT', held);
  held = undefined;
}
