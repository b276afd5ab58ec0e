import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Structured logs. What is logged is chosen field by field where it is logged (the access line has
 * method, path, status and duration; errors their code and message), so no header, body or secret
 * reaches a log by construction, and the tests search the captured logs for every secret they make.
 * pino's path redaction was dropped for that reason: under load it cost more than the access check.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'hubgate' } };
  // Standard output is written asynchronously: lines that arrive while a write is in flight go out
  // together in the next one, so a busy server makes one system call per batch, not per line.
  // pino flushes what is left when the process exits.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

/** An error as a log line shows it: its message only (never a stack, a query or its values). */
export const errorFields = (error: unknown) => ({
  err: { message: error instanceof Error ? error.message : String(error) },
});
