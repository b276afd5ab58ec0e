import {
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type { EmbeddedThread } from './embedded-thread.js';

/**
 * Kysely over the embedded database's thread (embedded-thread.ts). PGlite is one session that runs
 * statements in the order they reach it, so statements outside a transaction need not wait for each
 * other's answers: each is posted as soon as it is made, and the thread always has the next one
 * queued instead of idling while this thread gets round to sending it. A transaction is the one
 * thing that needs the session to itself: from its BEGIN to its COMMIT or ROLLBACK, statements of
 * other connections wait here, and are posted once it has ended.
 */
export function embeddedDialect(thread: EmbeddedThread): Dialect {
  return {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new ThreadDriver(thread),
    createQueryCompiler: () => new PostgresQueryCompiler(),
    createIntrospector: (db) => new PostgresIntrospector(db),
  };
}

class ThreadDriver implements Driver {
  /** The connection whose transaction holds the session, if one does. */
  private owner: ThreadConnection | undefined;
  private waiting: Array<() => void> = [];

  constructor(private readonly thread: EmbeddedThread) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new ThreadConnection(this);
  }

  async releaseConnection(): Promise<void> {}

  /**
   * Posts `sql` once no other connection's transaction holds the session. The check and the post
   * happen in one synchronous step (`thread.query` posts before its first await), so nothing can
   * begin a transaction between them.
   */
  async run(
    connection: ThreadConnection,
    sql: string,
    params: readonly unknown[],
  ): Promise<{ rows: unknown[]; affectedRows?: number }> {
    while (this.owner !== undefined && this.owner !== connection) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    return this.thread.query(sql, [...params]);
  }

  async beginTransaction(connection: ThreadConnection, settings: TransactionSettings): Promise<void> {
    while (this.owner !== undefined) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.owner = connection;
    const begin = settings.isolationLevel
      ? `start transaction isolation level ${settings.isolationLevel}`
      : 'begin';
    try {
      await this.thread.query(begin, []);
    } catch (error) {
      this.release();
      throw error;
    }
  }

  async commitTransaction(connection: ThreadConnection): Promise<void> {
    await this.end(connection, 'commit');
  }

  async rollbackTransaction(connection: ThreadConnection): Promise<void> {
    await this.end(connection, 'rollback');
  }

  private async end(connection: ThreadConnection, statement: string): Promise<void> {
    try {
      await this.run(connection, statement, []);
    } finally {
      this.release();
    }
  }

  private release(): void {
    this.owner = undefined;
    const waiting = this.waiting;
    this.waiting = [];
    for (const resume of waiting) resume();
  }

  async destroy(): Promise<void> {
    await this.thread.close();
  }
}

class ThreadConnection implements DatabaseConnection {
  constructor(private readonly driver: ThreadDriver) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.driver.run(this, query.sql, query.parameters);
    return {
      rows: result.rows as R[],
      ...(result.affectedRows ? { numAffectedRows: BigInt(result.affectedRows) } : {}),
    };
  }

  // eslint-disable-next-line require-yield -- nothing streams from the embedded database
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the embedded database does not stream results');
  }
}
