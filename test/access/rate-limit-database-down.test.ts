import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createRateLimiter } from '../../src/access/rate-limit.js';
import type { DB } from '../../src/db/schema.js';

// With the database gone, a process counts on its own and still limits (docs/api/rate-limits.md,
// docs/decisions/0091-rate-limits-leased-across-processes.md): it admits the limit, then refuses,
// without a statement per refused request.
test('with the database unreachable, a bucket of 5 admits 5 in this process, then refuses, and stops asking the database', async () => {
  // Nothing listens on port 1 of the loopback address: every statement fails at once.
  const pool = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/none', max: 1 });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const errors: unknown[] = [];
  const limiter = createRateLimiter(db, { onError: (error) => errors.push(error) });
  try {
    const at = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 20_000);
    const answers = [];
    for (let i = 0; i < 8; i++) answers.push(await limiter.hit('key:down', at, 5));
    assert.deepEqual(
      answers.map((a) => a.allowed),
      [true, true, true, true, true, false, false, false],
      'not 5 admitted then refused while the database is away',
    );
    assert.ok(errors.length > 0, 'the limiter never tried the database (the test proves nothing)');
    const asked = errors.length;
    for (let i = 0; i < 20; i++) await limiter.hit('key:down', at, 5);
    assert.equal(errors.length, asked, 'a spent bucket still asks the database for each refused request');
  } finally {
    await limiter.close().catch(() => {});
    await db.destroy();
  }
});
