import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.js';
import { createTestDatabase, ENGINE } from '../helpers/test-database.js';

// Named prepared statements are a PostgreSQL-server matter: the embedded database has none to test.
if (ENGINE === 'postgres') {
  test('repeated statements are prepared once per connection; whole-row ones never; a new column breaks none', async () => {
    const testDatabase = await createTestDatabase();
    if (testDatabase.target.kind !== 'postgres') throw new Error('unreachable');
    const database = await openDatabase({ kind: 'postgres', url: testDatabase.target.url });
    const observer = new pg.Client({ connectionString: testDatabase.target.url });
    await observer.connect();
    try {
      const db = database.kysely;
      await sql`create table prepared_probe (id int primary key, name text)`.execute(db);
      await sql`insert into prepared_probe values (1, 'one')`.execute(db);
      const explicit = (on: typeof db) =>
        on.selectFrom('prepared_probe' as never).select(['id', 'name'] as never[]);
      const whole = (on: typeof db) => on.selectFrom('prepared_probe' as never).selectAll();
      // One connection held throughout, outside any transaction: pg_prepared_statements shows the
      // statements of the connection that reads it, and the migration below must not wait on a lock.
      await db.connection().execute(async (conn) => {
        for (let i = 0; i < 5; i++) {
          await explicit(conn).execute();
          await whole(conn).execute();
        }
        const prepared = await sql<{ statement: string; runs: number }>`
          select statement, (generic_plans + custom_plans)::int as runs from pg_prepared_statements`.execute(
          conn,
        );
        const seen = prepared.rows.map((r) => `${r.statement} (${r.runs} runs)`).join(' | ');
        const text = explicit(conn).compile().sql;
        assert.equal(
          prepared.rows.find((r) => r.statement === text)?.runs,
          5,
          `the explicit-column query is prepared once and run five times as that statement: ${seen}`,
        );
        assert.ok(
          prepared.rows.every((r) => !/select \*/i.test(r.statement)),
          `no whole-row statement is prepared: ${seen}`,
        );

        // A migration under the running process adds a column; both queries keep working on the
        // connection that holds the prepared statement.
        await observer.query('alter table prepared_probe add column extra text');
        assert.deepEqual(
          await explicit(conn).execute(),
          [{ id: 1, name: 'one' }],
          'the prepared query still answers',
        );
        assert.deepEqual(
          await whole(conn).execute(),
          [{ id: 1, name: 'one', extra: null }],
          'the whole-row query sees the new column',
        );
      });
    } finally {
      await observer.end();
      await database.close();
      await testDatabase.drop();
    }
  });

  test('with DATABASE_PREPARED_STATEMENTS=false nothing is prepared (PgBouncer before 1.21)', async () => {
    const testDatabase = await createTestDatabase();
    if (testDatabase.target.kind !== 'postgres') throw new Error('unreachable');
    const database = await openDatabase({
      kind: 'postgres',
      url: testDatabase.target.url,
      preparedStatements: false,
    });
    try {
      await database.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 3; i++) await sql`select ${i}::int as n`.execute(trx);
        const prepared = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_prepared_statements`.execute(trx);
        assert.equal(prepared.rows[0]?.n, 0, 'no statement is prepared on the connection');
      });
    } finally {
      await database.close();
      await testDatabase.drop();
    }
  });

  test('statements are prepared on the connection that runs them', async () => {
    const testDatabase = await createTestDatabase();
    if (testDatabase.target.kind !== 'postgres') throw new Error('unreachable');
    const database = await openDatabase({ kind: 'postgres', url: testDatabase.target.url });
    try {
      // One transaction: one connection, so the view below is that connection's.
      await database.kysely.transaction().execute(async (trx) => {
        for (let i = 0; i < 3; i++) await sql`select ${i}::int as n, 'x' as label`.execute(trx);
        await sql`select * from (select 1 as n) t`.execute(trx);
        const prepared = await sql<{
          statement: string;
        }>`select statement from pg_prepared_statements`.execute(trx);
        const texts = prepared.rows.map((r) => r.statement);
        assert.ok(
          texts.some((s) => s.includes(`'x' as label`)),
          `the repeated statement is prepared: ${texts.join(' | ')}`,
        );
        assert.ok(!texts.some((s) => s.includes('select *')), 'the whole-row one is not');
      });
    } finally {
      await database.close();
      await testDatabase.drop();
    }
  });
}
