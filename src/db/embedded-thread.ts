import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';

type Request = { op: 'query'; sql: string; params: unknown[] } | { op: 'close' };
export type ThreadRequest = Request & { id: number };

export type ThreadReply =
  | { id: number; ok: true; rows: unknown[]; affectedRows?: number }
  | { id: number; ok: false; error: { message: string; [field: string]: unknown } };

/**
 * The database thread ended while a statement was on its way, or is being started again. Its code is
 * PostgreSQL's "terminating connection" (57P01), so the request that met it answers 503 like any
 * lost database connection (isDatabaseUnavailable).
 */
export class DatabaseThreadLostError extends Error {
  readonly code = '57P01';
}

/** The part of PGlite's interface that Kysely's PGlite dialect uses. */
export interface EmbeddedThread {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[]; affectedRows?: number }>;
  close(): Promise<void>;
  readonly closed: boolean;
  /** The thread running now (tests end it as a crash would). */
  readonly worker: Worker | undefined;
}

/**
 * The database thread's JavaScript heap: what it keeps alive is PGlite's glue and the rows on their
 * way out (13 MB live after a drain of 20,000 events), but V8 grows a young generation of up to
 * 48 MB for a thread that allocates fast and keeps it; 8 MB is plenty for rows handed over at once.
 */
const THREAD_HEAP = { maxYoungGenerationSizeMb: 8 };

/** The embedded database's buffer cache (PostgreSQL's default is 128MB). */
export const SHARED_BUFFERS = '32MB';
const RESTART_FIRST_MS = 100;
const RESTART_MAX_MS = 5_000;
const BEGIN = /^\s*(begin|start\s+transaction)\b/i;
const END = /^\s*(commit|rollback|end|abort)\b/i;

// Compiled, this module is dist/db/embedded-thread.js; under tsx (tests), src/db/embedded-thread.ts.
const WORKER_URL = new URL(`./embedded-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/**
 * The embedded database on a thread of its own (docs/operators/deployment.md#embedded-mode): statements
 * are posted to it and answered in order, so the HTTP server goes on answering while the database
 * works. If the thread dies (it should not; a fault in the WebAssembly runtime would do it), the
 * statements in flight fail as a lost connection does, the thread is started again on the same data
 * directory (PostgreSQL's crash recovery replays its WAL), and meanwhile statements fail at once. A
 * transaction begun on the thread that died never continues on the new one: its next statement
 * fails and its rollback is a no-op, so no part of it runs outside a transaction.
 */
export async function startEmbeddedThread(dataDir: string, logger?: Logger): Promise<EmbeddedThread> {
  if (!existsSync(join(dataDir, 'PG_VERSION'))) await initialize(dataDir);
  const thread = new ThreadClient(dataDir, logger);
  await thread.start();
  return thread;
}

interface Waiting {
  resolve: (reply: ThreadReply) => void;
  reject: (error: Error) => void;
}

class ThreadClient implements EmbeddedThread {
  private readonly pending = new Map<number, Waiting>();
  private nextId = 1;
  private current: Worker | undefined;
  /** Counts the threads started: a transaction belongs to the one it began on. */
  private generation = 0;
  private transactionGeneration: number | undefined;
  private ended = false;
  private restartDelay = RESTART_FIRST_MS;

  constructor(
    private readonly dataDir: string,
    private readonly logger: Logger | undefined,
  ) {}

  get closed(): boolean {
    return this.ended;
  }

  get worker(): Worker | undefined {
    return this.current;
  }

  /** Starts a thread on the data directory; resolves once it has opened the database. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const thread = new Worker(WORKER_URL, {
        workerData: { dataDir: this.dataDir, initOnly: false },
        resourceLimits: THREAD_HEAP,
      });
      let ready = false;
      thread.on('message', (reply: ThreadReply) => {
        if (reply.id !== 0) return this.settle(reply);
        ready = true;
        this.current = thread;
        this.generation++;
        this.restartDelay = RESTART_FIRST_MS;
        resolve();
      });
      thread.on('error', (error) => {
        if (!ready) return reject(error);
        this.logger?.error({ err: { message: error.message } }, 'embedded database thread failed');
      });
      thread.on('exit', (code) => {
        if (!ready)
          return reject(new Error(`the embedded database thread exited with ${code} while opening`));
        this.lost(thread, code);
      });
    });
  }

  private settle(reply: ThreadReply): void {
    const waiting = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    waiting?.resolve(reply);
  }

  /** A thread ended: what waited on it fails as a lost connection, and another is started. */
  private lost(thread: Worker, code: number): void {
    if (this.current === thread) this.current = undefined;
    const error = new DatabaseThreadLostError('the embedded database thread ended');
    for (const { reject } of this.pending.values()) reject(error);
    this.pending.clear();
    if (this.ended) return;
    this.logger?.error({ code }, 'embedded database thread ended; starting it again');
    this.restart();
  }

  private restart(): void {
    setTimeout(() => {
      if (this.ended) return;
      this.start().catch((error: Error) => {
        this.logger?.error({ err: { message: error.message } }, 'embedded database thread did not start');
        this.restartDelay = Math.min(this.restartDelay * 2, RESTART_MAX_MS);
        this.restart();
      });
    }, this.restartDelay).unref();
  }

  private send(request: Request): Promise<ThreadReply> {
    const thread = this.current;
    if (!thread) return Promise.reject(new DatabaseThreadLostError('the embedded database is restarting'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      thread.postMessage({ ...request, id } satisfies ThreadRequest);
    });
  }

  async query(sql: string, params: unknown[] = []): Promise<{ rows: unknown[]; affectedRows?: number }> {
    const ending = END.test(sql);
    if (this.transactionGeneration !== undefined && this.transactionGeneration !== this.generation) {
      // The transaction's thread died: nothing of it was committed, and nothing more of it runs.
      if (ending) {
        this.transactionGeneration = undefined;
        if (/^\s*(rollback|abort)\b/i.test(sql)) return { rows: [] };
      }
      throw new DatabaseThreadLostError('the embedded database restarted during this transaction');
    }
    const beginning = BEGIN.test(sql);
    if (beginning) this.transactionGeneration = this.generation;
    else if (ending) this.transactionGeneration = undefined;
    const reply = await this.send({ op: 'query', sql, params }).catch((error: unknown) => {
      // A transaction that never began has nothing to guard.
      if (beginning) this.transactionGeneration = undefined;
      throw error;
    });
    if (reply.ok) return { rows: reply.rows, affectedRows: reply.affectedRows };
    if (beginning) this.transactionGeneration = undefined;
    const { message, ...fields } = reply.error;
    throw Object.assign(new Error(message), fields);
  }

  async close(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    const thread = this.current;
    if (!thread) return;
    try {
      await this.send({ op: 'close' });
    } finally {
      await thread.terminate();
    }
  }
}

/** Creates a new data directory in a thread of its own, which ends with all the memory initdb took. */
function initialize(dataDir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(WORKER_URL, { workerData: { dataDir, initOnly: true } });
    thread.once('error', reject);
    thread.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`creating the embedded database failed (${code})`)),
    );
  });
}
