import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql, type Dialect } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import type { Logger } from 'pino';
import { lockDataDir } from './data-dir-lock.js';
import { restrictDataDir } from './data-dir.js';
import { embeddedDialect } from './embedded-dialect.js';
import { startEmbeddedThread, type EmbeddedThread } from './embedded-thread.js';
import { listenForever } from './listener.js';
import { prepareRepeatedStatements } from './prepared.js';
import { KEEPALIVE_AFTER_MS } from './reconnect.js';
import type { DB } from './schema.js';

/**
 * Where the data lives. `embedded` and `postgres` come from the environment (docs/operators/deployment.md);
 * `memory` is an embedded database that lives only as long as the process, optionally started from
 * a dump, for tests and benchmarks.
 */
export type StorageTarget =
  | { kind: 'postgres'; url: string; preparedStatements?: boolean }
  | { kind: 'embedded'; dataDir: string }
  | { kind: 'memory'; seed?: Blob };

export interface Database {
  readonly kysely: Kysely<DB>;
  readonly engine: 'pglite' | 'postgres';
  /** Round trip to the database; throws when it is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /** The in-process embedded instance of a `memory` database (dumping a test template). */
  readonly pglite?: PGlite;
  /** The embedded database's own thread, with DATA_DIR (tests end it as a crash would). */
  readonly thread?: EmbeddedThread;
  /**
   * PostgreSQL only: calls `onNotify` for every NOTIFY on `channel`, from any process, over a
   * connection of its own that is re-opened with backoff until it works whenever it is lost (see
   * listener.ts). Resolves to a function that stops listening.
   */
  listen?(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /** PostgreSQL only: the connection pool as it stands (open, idle, and requests waiting for one). */
  poolStats?(): { total: number; idle: number; waiting: number };
}

export async function openDatabase(target: StorageTarget, logger?: Logger): Promise<Database> {
  if (target.kind === 'postgres') return openPostgres(target.url, target.preparedStatements ?? true, logger);

  if (target.kind === 'memory') {
    const pglite = await PGlite.create(target.seed ? { loadDataDir: target.seed } : {});
    return openPglite(pglite, new PGliteDialect(pglite), () => {});
  }
  const unlock = lockDataDir(target.dataDir);
  try {
    restrictDataDir(target.dataDir);
    const thread = await startEmbeddedThread(join(target.dataDir, 'pgdata'), logger);
    return { ...openPglite(thread, embeddedDialect(thread), unlock), thread };
  } catch (error) {
    unlock();
    throw error;
  }
}

/**
 * Kysely over PGlite, in this thread (`memory`: tests and tools, one statement at a time) or on a
 * thread of its own (`embedded`, embedded-thread.ts; its dialect, embedded-dialect.ts, posts
 * statements outside transactions without waiting for the ones before).
 */
function openPglite(pglite: PGlite | EmbeddedThread, dialect: Dialect, unlock: () => void): Database {
  const kysely = new Kysely<DB>({ dialect });
  return {
    kysely,
    engine: 'pglite',
    ...(pglite instanceof PGlite ? { pglite } : {}),
    ping: async () => {
      await sql`select 1`.execute(kysely);
    },
    close: async () => {
      try {
        await kysely.destroy();
        if (!pglite.closed) await pglite.close();
      } finally {
        unlock();
      }
    },
  };
}

function openPostgres(url: string, prepared: boolean, logger?: Logger): Database {
  const pool = new pg.Pool({
    connectionString: url,
    // The API and the delivery workers share it; deliveries take two short queries each.
    max: 20,
    // Fail a request within seconds when the server is gone, instead of queueing it forever.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // A connection whose server vanished without a word (a network partition) is given up by the OS
    // within minutes, instead of leaving a background loop waiting on it for hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_AFTER_MS,
    application_name: 'hubgate',
  });
  // A client losing its server emits 'error' on the pool (idle) or on the client (checked out);
  // either, unhandled, would crash the process. The query in flight still fails on its own.
  const lost = (error: Error) =>
    logger?.warn({ err: { message: error.message } }, 'database connection lost');
  pool.on('error', lost);
  const statements = new Set<string>();
  pool.on('connect', (client) => {
    client.on('error', lost);
    if (prepared) prepareRepeatedStatements(client, statements);
  });
  const kysely = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return {
    kysely,
    engine: 'postgres',
    ping: async () => {
      await sql`select 1`.execute(kysely);
    },
    close: () => kysely.destroy(),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    listen: (channel, onNotify) => listenForever(url, channel, onNotify, logger),
  };
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Whether an error means "the database cannot be reached right now" (503), not a bug (500). */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_CODES.has(code)) return true;
    // SQLSTATE class 08 (connection exception) and 57P0x (server shutting down, cannot connect now).
    if (/^08...$/.test(code) || /^57P0[1-3]$/.test(code)) return true;
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    error.message,
  );
}
