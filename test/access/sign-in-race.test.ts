import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeTenant, makeUser } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';

// An attacker who sends many guesses at once must not get more than ten checked per window
// (docs/api/limits.md): the lock has to hold between reading the count and verifying the password.
const ATTEMPTS = 100;

async function guess(h: Harness, email: string, i: number): Promise<number> {
  const r = await h.request('POST', '/api/v1/auth/login', { body: { email, password: `guess ${i}` } });
  return r.status;
}

async function failuresAudited(h: Harness, email: string): Promise<number> {
  const rows = await h.database.kysely
    .selectFrom('audit_log')
    .select('metadata')
    .where('action', '=', 'sign_in.failure')
    .execute();
  return rows.filter((r) => (r.metadata as { email?: string }).email === email).length;
}

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

describe('sign-in lockout under concurrency', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h.close());

  test(`${ATTEMPTS} simultaneous wrong passwords for one account: at most ten are checked, the rest 429`, async (t) => {
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id);
    const statuses = await Promise.all(Array.from({ length: ATTEMPTS }, (_, i) => guess(h, user.email, i)));
    const counts = tally(statuses);
    t.diagnostic(JSON.stringify(counts));
    assert.deepEqual(Object.keys(counts).sort(), ['401', '429'], JSON.stringify(counts));
    assert.equal(counts[401], 10, JSON.stringify(counts));
    assert.equal(
      await failuresAudited(h, user.email),
      10,
      'the audit log records other than ten failed sign-ins',
    );

    // Locked: the right password is not even checked.
    const right = await h.request('POST', '/api/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    assert.equal(right.status, 429, 'the right password gets in while the account is locked');
    assert.ok(Number(right.headers.get('retry-after')) > 0, 'a locked account is not told when to retry');
  });

  test('an unknown address is throttled the same way under concurrency', async () => {
    const email = `ghost-${Date.now()}@example.com`;
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => guess(h, email, i)));
    assert.equal(
      statuses.filter((s) => s === 401).length,
      10,
      'simultaneous guesses at an unknown address get other than ten checked',
    );
    assert.equal(
      statuses.filter((s) => s === 429).length,
      30,
      'simultaneous guesses at an unknown address past the ten are not refused with 429',
    );
  });

  test('a successful sign-in still clears the failures before the lock', async () => {
    const tenant = await makeTenant(h);
    const user = await makeUser(h, tenant.id);
    for (let i = 0; i < 9; i++)
      assert.equal(await guess(h, user.email, i), 401, `wrong password ${i} is not answered 401`);
    const ok = await h.request('POST', '/api/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    assert.equal(ok.status, 200, 'the right password is refused before the lock');
    const statuses = await Promise.all(Array.from({ length: 20 }, (_, i) => guess(h, user.email, i)));
    assert.equal(
      statuses.filter((s) => s === 401).length,
      10,
      'a successful sign-in does not reset the failures to ten more checked guesses',
    );
  });
});

// Two processes on one PostgreSQL database: the ten are shared, not ten each.
if (ENGINE === 'postgres') {
  describe('sign-in lockout across processes', () => {
    let first: Harness;
    let second: Harness;
    before(async () => {
      first = await startHarness();
      const another = await first.testDatabase.openAnother();
      second = await startHarness({
        testDatabase: { ...first.testDatabase, database: another, drop: async () => {} },
        keyring: first.keyring,
      });
    });
    after(async () => {
      await second.close();
      await first.close();
    });

    test(`${ATTEMPTS} simultaneous guesses split over two processes: at most ten checked in all`, async (t) => {
      const tenant = await makeTenant(first);
      const user = await makeUser(first, tenant.id);
      const statuses = await Promise.all(
        Array.from({ length: ATTEMPTS }, (_, i) => guess(i % 2 ? first : second, user.email, i)),
      );
      const counts = tally(statuses);
      t.diagnostic(JSON.stringify(counts));
      assert.equal(counts[401], 10, JSON.stringify(counts));
      assert.equal(counts[429], ATTEMPTS - 10, JSON.stringify(counts));
      assert.equal(
        await failuresAudited(first, user.email),
        10,
        'the audit log records other than ten failed sign-ins across both processes',
      );
    });
  });
}
