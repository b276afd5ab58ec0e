import type { Logger } from 'pino';
import type { Database } from '../db/database.js';
import { within } from '../deadline.js';
import { errorFields } from '../logger.js';
import { releaseStartupSignals } from './startup-signals.js';

/** How long closing the database may take once the work has stopped (or was cut). */
const DATABASE_CLOSE_MS = 5_000;

export interface Shutdown {
  logger: Logger;
  database: Pick<Database, 'close'>;
  /** SHUTDOWN_GRACE_MS: how long the work in flight has to end after `stop` began. */
  graceMs: number;
  /** Stops taking work at once, and resolves once the work in flight has ended. */
  stop(): Promise<unknown>;
  /** What is still running when the grace runs out, for the line that says what was cut. */
  inFlight?(): Promise<Record<string, unknown>>;
}

/**
 * On SIGINT or SIGTERM, once: stop taking work, let what is in flight end for up to the grace,
 * close the database, and exit 0, also when the grace ran out (docs/decisions/0054-graceful-shutdown.md).
 * Work cut by the exit is not lost: a delivery's claim runs out and another process, or the next
 * start, takes it again; a request cut mid-answer is the client's to retry.
 */
export function closeOnSignal(shutdown: Shutdown): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    void stopWithin(shutdown, signal).then((code) => process.exit(code));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // Installed first, then the start-up's handler let go: no moment without a handler.
  releaseStartupSignals();
}

/** Runs the shutdown and answers the exit code: 0, or 1 when stopping failed unexpectedly. */
async function stopWithin(shutdown: Shutdown, signal: NodeJS.Signals): Promise<number> {
  const { logger, graceMs } = shutdown;
  const started = performance.now();
  logger.info({ signal, graceMs }, 'shutting down: accepting no new work, letting the work in flight end');
  let code = 0;
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<'grace over'>((resolve) => {
    timer = setTimeout(() => resolve('grace over'), graceMs);
  });
  const stopped = shutdown.stop().then(
    () => 'stopped' as const,
    (error: unknown) => {
      logger.error(errorFields(error), 'stopping failed');
      code = 1;
      return 'stopped' as const;
    },
  );
  const ended = await Promise.race([stopped, graceOver]);
  clearTimeout(timer);
  if (ended === 'grace over') {
    const cut = await shutdown.inFlight?.().catch(() => ({}));
    logger.warn(
      { graceMs, ...cut },
      'shutdown grace ran out: exiting with work in flight; deliveries cut are taken again once their claims run out',
    );
  }
  try {
    await within(shutdown.database.close(), DATABASE_CLOSE_MS, 'closing the database');
  } catch (error) {
    logger.warn(errorFields(error), 'closing the database failed');
  }
  logger.info({ ms: Math.round(performance.now() - started) }, 'stopped');
  return code;
}
