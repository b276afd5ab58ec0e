import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { generateToken } from '../../src/crypto/api-tokens.js';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

const LIMIT = 8;
// Mid-minute, so a whole test stays inside one fixed window.
const midWindow = () => new Date(Math.floor(Date.now() / 60_000) * 60_000 + 20_000);

describe('rate limits per credential', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  });
  after(() => h.close());

  test('each credential gets RATE_LIMIT_PER_MINUTE, with RateLimit headers, then 429 rate_limited with Retry-After', async () => {
    const { session } = await makeSignedInTenant(h);
    const a = await makeKey(h, session);
    const b = await makeKey(h, session);
    h.setNow(midWindow());
    try {
      for (let i = 1; i <= LIMIT; i++) {
        const r = await h.request('GET', '/api/v1/automation/health', { token: a.secret });
        assert.equal(r.status, 200, `request ${i}`);
        assert.equal(
          r.headers.get('ratelimit-limit'),
          String(LIMIT),
          `request ${i}: RateLimit-Limit does not announce the limit`,
        );
        assert.equal(
          r.headers.get('ratelimit-remaining'),
          String(LIMIT - i),
          `request ${i}: RateLimit-Remaining does not count down`,
        );
        assert.equal(
          r.headers.get('ratelimit-reset'),
          '40',
          `request ${i}: RateLimit-Reset is not the seconds left in the window`,
        );
      }
      const over = await h.request('GET', '/api/v1/automation/health', { token: a.secret });
      assert.equal(over.status, 429, 'a key past its limit is not refused with 429');
      assert.equal(
        over.body.code,
        'rate_limited',
        'a key past its limit is refused with another code than rate_limited',
      );
      assert.equal(
        over.headers.get('retry-after'),
        '40',
        'Retry-After is not the seconds left in the window',
      );
      assert.equal(
        (await h.request('GET', '/api/v1/automation/health', { token: b.secret })).status,
        200,
        'another key',
      );
      // The next window opens again.
      h.setNow(new Date(midWindow().getTime() + 60_000));
      assert.equal(
        (await h.request('GET', '/api/v1/automation/health', { token: a.secret })).status,
        200,
        'the key stays limited in the next window',
      );
    } finally {
      h.setNow(null);
    }
  });

  test('bad credentials are limited per client address', async () => {
    h.setNow(new Date(midWindow().getTime() + 120_000));
    try {
      const statuses = [];
      for (let i = 0; i < LIMIT + 2; i++) {
        statuses.push(
          (await h.request('GET', '/api/v1/automation/health', { token: generateToken('tnt_') })).status,
        );
      }
      assert.deepEqual(
        statuses.slice(0, LIMIT),
        Array(LIMIT).fill(401),
        'bad credentials within the limit are not answered 401',
      );
      assert.deepEqual(
        statuses.slice(LIMIT),
        [429, 429],
        'bad credentials past the limit are not refused with 429',
      );
    } finally {
      h.setNow(null);
    }
  });

  test('health checks and docs are never limited', async () => {
    for (let i = 0; i < LIMIT * 2; i++)
      assert.equal((await h.request('GET', '/healthz')).status, 200, 'health checks are rate limited');
  });
});

// The limit holds across processes that share one PostgreSQL database.
if (ENGINE === 'postgres') {
  describe('rate limits across processes', () => {
    let first: Harness;
    let second: Harness;
    before(async () => {
      first = await startHarness({ env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
      const another = await first.testDatabase.openAnother();
      second = await startHarness({
        env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) },
        testDatabase: { ...first.testDatabase, database: another, drop: async () => {} },
        keyring: first.keyring,
      });
    });
    after(async () => {
      await second.close();
      await first.close();
    });

    test('hits on one instance count on the other', async () => {
      const { session } = await makeSignedInTenant(first);
      const key = await makeKey(first, session);
      const at = midWindow();
      first.setNow(at);
      second.setNow(at);
      try {
        for (let i = 0; i < LIMIT - 2; i++) {
          assert.equal(
            (await first.request('GET', '/api/v1/automation/health', { token: key.secret })).status,
            200,
            'a key within its limit is refused on the first instance',
          );
        }
        // The first instance's hits reach the shared row (exchanged every 100 ms in tests); the second reads it
        // with its first hit on the bucket.
        await waitUntil(
          async () =>
            (
              await sql<{ hits: number }>`
                select coalesce(sum(hits), 0)::int as hits from rate_limit_windows
                where bucket like ${`%:${key.id}`}`.execute(first.database.kysely)
            ).rows[0]!.hits >=
            LIMIT - 2,
          { message: "the first instance's hits in the shared count" },
        );
        const statuses = [];
        for (let i = 0; i < 4; i++) {
          statuses.push(
            (await second.request('GET', '/api/v1/automation/health', { token: key.secret })).status,
          );
        }
        assert.deepEqual(
          statuses,
          [200, 200, 429, 429],
          "the second instance does not count the first instance's hits against the limit",
        );
      } finally {
        first.setNow(null);
        second.setNow(null);
      }
    });
  });
}
