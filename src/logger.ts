import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Log lines gathered before they are handed on to be written: about 340 access lines. A hand-off
 * costs about the same whatever its size (a round trip through Node's thread pool: ~20 µs of the
 * main thread on a quiet machine; on a busy 2-core one the thread it wakes takes the core, and with
 * 4 KB batches that was a tenth of an authenticated request's time; docs/benchmarks.md), so a busy
 * server makes few and large ones.
 */
const LOG_BATCH_CHARACTERS = 64 * 1024;
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

/** What the access line of one request says (docs/operators/deployment.md, "Health checks and logs"). */
export interface AccessLine {
  requestId: string;
  method: string;
  /** Without the query string. */
  path: string;
  statusCode: number;
  /** Time to answer, in ms; absent for a request that never got an answer (aborted). */
  ms?: number;
  /** The request's server span, with tracing on (`trace_id`, `span_id`, placed where pino's mixin puts them). */
  trace?: { trace_id: string; span_id: string };
}

/**
 * Writes access lines of a logger made by createLogger, byte for byte what pino writes for
 * `logger.child({ requestId }).info({ method, path, statusCode, ms }, 'request')` (epoch-millisecond
 * `time`, the logger's bindings, then the fields), into the logger's own output, so they stay in order
 * with its other lines. Built as one string from a prefix made once: pino's general path (a child
 * logger per request, the object walked key by key) cost several times as much for the one line
 * every request writes. Strings are quoted by JSON.stringify, as pino quotes them from Node 25 on and,
 * on Node 24, for every string a request line can hold (Node reads it as Latin-1, so no lone
 * surrogate, the one case where they differ). test/http/access-log.test.ts holds it to pino's output.
 */
export function accessLineWriter(logger: Logger): (line: AccessLine) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const output = internals[pino.symbols.streamSym] as DestinationStream;
  // The logger's bindings as pino writes them (`,"service":"hubgate"`), made when it was created.
  const bindings = internals[pino.symbols.chindingsSym] as string;
  const opening = `{"level":${logger.levels.values.info},"time":`;
  return ({ requestId, method, path, statusCode, ms, trace }) => {
    if (!logger.isLevelEnabled('info')) return;
    // IDs are lowercase hex (the SDK makes them), so they need no quoting beyond the quotes.
    const ids = trace === undefined ? '' : `,"trace_id":"${trace.trace_id}","span_id":"${trace.span_id}"`;
    output.write(
      `${opening}${Date.now()}${bindings},"requestId":${JSON.stringify(requestId)}${ids},"method":${JSON.stringify(method)},"path":${JSON.stringify(path)},"statusCode":${statusCode}${ms === undefined ? '' : `,"ms":${Number.isFinite(ms) ? ms : null}`},"msg":"request"}\n`,
    );
  };
}

/** An error as a log line shows it: its message only (never a stack, a query or its values). */
export const errorFields = (error: unknown) => ({
  err: { message: error instanceof Error ? error.message : String(error) },
});
