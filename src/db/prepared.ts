import { createHash } from 'node:crypto';
import type pg from 'pg';

/** Statements with more parameters than this vary with their input (batches, lists): run unnamed. */
const MAX_PARAMETERS = 32;
/** Distinct statements a process prepares at most; after that, new ones run unnamed. */
const MAX_STATEMENTS = 1_000;

// `select *`, `returning *`, `select t.*`: a result whose columns a migration may change. A cached
// plan of one fails with "cached plan must not change result type" until the process restarts.
const WHOLE_ROW = /(?:\bselect|\breturning|,)\s+(?:"?\w+"?\.)?\*/i;

/**
 * Runs the statements a request repeats (explicit columns, a few parameters) as named prepared
 * statements: PostgreSQL parses and plans each once per connection instead of once per query, which
 * is most of a short query's cost on the server. A statement that returns whole rows is never
 * prepared, so adding a column under a running process cannot break one. Protocol-level prepared
 * statements pass through PgBouncer in transaction mode from version 1.21 (`max_prepared_statements`);
 * `DATABASE_PREPARED_STATEMENTS=false` turns them off for older poolers.
 */
export function prepareRepeatedStatements(client: pg.PoolClient, names: Set<string>): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (
      typeof text !== 'string' ||
      (values !== undefined && (!Array.isArray(values) || values.length > MAX_PARAMETERS)) ||
      typeof args[2] === 'function' ||
      WHOLE_ROW.test(text)
    ) {
      return query(...args);
    }
    const name = `hg_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
    if (!names.has(name)) {
      if (names.size >= MAX_STATEMENTS) return query(...args);
      names.add(name);
    }
    return query({ name, text, values });
  };
}
