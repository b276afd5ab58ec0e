import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import type { Kysely, KyselyPlugin } from 'kysely';
import { createRateLimiter, type RateLimiter, type RateLimitResult } from '../../src/access/rate-limit.js';
import type { DB } from '../../src/db/schema.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// What the leased limiter costs and how exactly it holds (docs/decisions/0091-rate-limits-leased-across-processes.md):
// statements per window per bucket, none for a flood of refusals, and never more than the limit
// admitted by several limiters sharing the row.

/** The database as the limiter sees it, counting the statements it sends. */
function counting(db: Kysely<DB>): { db: Kysely<DB>; statements: () => number } {
  let statements = 0;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      statements += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { db: db.withPlugin(plugin), statements: () => statements };
}

const at = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 20_000);
let buckets = 0;
const bucketName = () => `test:${process.pid}:${Date.now()}:${buckets++}`;

describe('leased rate limits', () => {
  let testDb: TestDatabase;
  const limiters: RateLimiter[] = [];
  const limiterOn = (db: Kysely<DB>) => {
    const limiter = createRateLimiter(db);
    limiters.push(limiter);
    return limiter;
  };
  before(async () => {
    testDb = await createTestDatabase();
  });
  after(async () => {
    await Promise.all(limiters.map((l) => l.close()));
    await testDb.drop();
  });

  test('a bucket of 600 used whole by one process costs a few dozen statements, and a flood of refusals none', async (t) => {
    const { db, statements } = counting(testDb.database.kysely);
    const limiter = limiterOn(db);
    const bucket = bucketName();
    let admitted = 0;
    let waited = 0;
    for (let i = 0; i < 600; i++) {
      const hit = limiter.hit(bucket, at, 600);
      if (hit instanceof Promise) waited += 1;
      if ((await hit).allowed) admitted += 1;
    }
    const spent = statements();
    t.diagnostic(`600 admitted with ${spent} statements, ${waited} hits waited for a lease`);
    assert.equal(admitted, 600, 'a process alone does not get the whole limit');
    assert.ok(spent <= 40, `a window of 600 cost ${spent} statements, more than 40`);
    for (let i = 0; i < 1000; i++) {
      const hit = limiter.hit(bucket, at, 600);
      if (i > 0) assert.ok(!(hit instanceof Promise), `refusal ${i} waited for the database`);
      assert.equal((await hit).allowed, false, 'a hit past the limit is admitted');
    }
    assert.ok(
      statements() - spent <= 1,
      `1000 refusals cost ${statements() - spent} statements, not at most 1`,
    );
  });

  test('hits arriving over time far from the limit are answered without a promise: the next lease is asked for before the current one runs out', async () => {
    const { db, statements } = counting(testDb.database.kysely);
    const limiter = limiterOn(db);
    const bucket = bucketName();
    await limiter.hit(bucket, at, 2_000);
    let waited = 0;
    for (let i = 0; i < 300; i++) {
      // A request every millisecond or so, as a busy key sends them; not waiting for anything.
      await delay(1);
      const hit = limiter.hit(bucket, at, 2_000);
      if (hit instanceof Promise) {
        waited += 1;
        await hit;
      }
    }
    assert.equal(waited, 0, `${waited} of 300 hits far from the limit waited for the database`);
    assert.ok(statements() <= 4, `301 hits in slices of 100 cost ${statements()} statements`);
  });

  test('three limiters hitting one bucket at once admit exactly its limit, and the headers count down to 0', async () => {
    const limiter = [
      limiterOn(testDb.database.kysely),
      limiterOn(testDb.database.kysely),
      limiterOn(testDb.database.kysely),
    ];
    const bucket = bucketName();
    const results: RateLimitResult[] = [];
    await Promise.all(
      Array.from({ length: 12 }, async (_, client) => {
        for (let i = 0; i < 40; i++) results.push(await limiter[client % 3]!.hit(bucket, at, 300));
      }),
    );
    assert.equal(
      results.filter((r) => r.allowed).length,
      300,
      'the limiters together do not admit exactly 300',
    );
    assert.ok(
      results.filter((r) => !r.allowed).every((r) => r.remaining === 0),
      'a refusal says something remains',
    );
  });

  test("a key's limit raised mid-window reopens its spent bucket; lowered, it closes it", async () => {
    const limiter = limiterOn(testDb.database.kysely);
    const bucket = bucketName();
    for (let i = 0; i < 3; i++)
      assert.ok((await limiter.hit(bucket, at, 3)).allowed, `hit ${i + 1} of 3 refused`);
    assert.equal((await limiter.hit(bucket, at, 3)).allowed, false, 'the 4th of 3 is admitted');
    assert.ok((await limiter.hit(bucket, at, 5)).allowed, 'a raised limit does not reopen the bucket');
    assert.ok((await limiter.hit(bucket, at, 5)).allowed, 'a raised limit does not reopen the bucket');
    assert.equal((await limiter.hit(bucket, at, 5)).allowed, false, 'the raised limit is not held');
    assert.equal((await limiter.hit(bucket, at, 2)).allowed, false, 'a lowered limit admits');
  });
});
