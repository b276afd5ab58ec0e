import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Log lines gathered before they are handed on to be written: about twenty access lines, so a busy
 * server makes one system call per batch, and no line costs one of its own.
 */
const LOG_BATCH_CHARACTERS = 4096;
/** A line waits at most this long for others, so a quiet server's lines are not held back. */
const LOG_WAIT_MS = 100;

/**
 * Standard output for the logs. Lines are gathered here, in one string, and handed in batches to
 * pino's asynchronous writer for standard output, which writes a batch while the next gathers.
 * Handing it every line was dearer than making the line: it measures all the text it holds on
 * each write it is given, the more the busier the server. Nothing is lost at the end, whether the
 * process ends by itself, by process.exit (after SIGINT or SIGTERM have closed the server) or by
 * an uncaught exception: what the writer holds, then what is gathered, is written synchronously.
 */
export class LogOutput implements DestinationStream {
  readonly #writer = pino.destination({ dest: 1, sync: false });
  #closed = false;
  #gathered = '';
  #due: NodeJS.Timeout | undefined;

  constructor() {
    this.#writer.on('close', () => {
      this.#closed = true;
    });
    // While the process can still wait, the writer writes the rest as it writes everything.
    process.on('beforeExit', () => this.flush());
    // It cannot wait any more: a write the writer would start now might never finish.
    process.on('exit', () => {
      clearTimeout(this.#due);
      const rest = this.#gathered;
      this.#gathered = '';
      try {
        if (!this.#closed) this.#writer.flushSync();
        writeAllSync(1, rest);
      } catch {
        // Standard output is gone (a closed pipe): there is nowhere left to write to.
      }
    });
  }

  write(line: string): void {
    this.#gathered += line;
    if (this.#gathered.length >= LOG_BATCH_CHARACTERS) this.flush();
    else this.#due ??= setTimeout(() => this.flush(), LOG_WAIT_MS).unref();
  }

  /** Hands what is gathered to the writer now (which writes it without waiting). */
  flush(done?: (error?: Error) => void): void {
    clearTimeout(this.#due);
    this.#due = undefined;
    if (this.#gathered !== '' && !this.#closed) {
      const batch = this.#gathered;
      this.#gathered = '';
      this.#writer.write(batch);
    }
    done?.();
  }
}

/** Writes all of `text` before returning, waiting out a pipe that is full (EAGAIN) as pino does. */
function writeAllSync(fd: number, text: string): void {
  let rest = Buffer.from(text);
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(fd, rest));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/**
 * Structured logs. What is logged is chosen field by field where it is logged (the access line has
 * method, path, status and duration; errors their code and message), so no header, body or secret
 * reaches a log by construction, and the tests search the captured logs for every secret they make.
 * pino's path redaction was dropped for that reason: under load it cost more than the access check.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'hubgate' } };
  return pino(options, destination ?? new LogOutput());
}

/** An error as a log line shows it: its message only (never a stack, a query or its values). */
export const errorFields = (error: unknown) => ({
  err: { message: error instanceof Error ? error.message : String(error) },
});
