import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { limitPasswordHashing } from '../../src/crypto/passwords.js';
import { makeSignedInTenant, signIn, TEST_PASSWORD } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse } from '../helpers/harness.js';
import { accept, invite } from './people.js';

// The bound on password hashing (docs/decisions/0050-password-hashing-bounded.md), from outside: one
// hash at a time, a burst of sign-ins from many addresses for accounts that do not exist (each
// verifies the decoy hash), none of which any per-address or per-account limit stops.

let h: Harness;
before(async () => {
  h = await startHarness({
    env: { PUBLIC_URL: 'https://hub.example.com', TRUST_PROXY: '1', PASSWORD_HASH_CONCURRENCY: '1' },
  });
});
after(() => h.close());

const BURST = 240;

test('a burst of sign-ins beyond the bound: some are 503 with Retry-After, the rest 401, and /readyz answers throughout', async (t) => {
  // The wait for a slot (2 s) is shortened for the burst: whether 240 hashes one at a time outlast
  // 2 s depends on how fast this machine hashes (on a quiet one they did not, and nothing was
  // refused); 200 ms is outlasted on any machine, and what is checked is the same.
  limitPasswordHashing({ maxWaitMs: 200 });
  t.after(() => limitPasswordHashing({ maxWaitMs: 2_000 }));
  let settled = 0;
  const burst = Array.from({ length: BURST }, (_, i) =>
    h
      .request('POST', '/api/v1/auth/login', {
        headers: { 'x-forwarded-for': `10.${Math.floor(i / 250)}.${i % 250}.7` },
        body: { email: `nobody-${i}@example.com`, password: `guess number ${i}` },
      })
      .finally(() => settled++),
  );

  // While sign-ins wait for the one hashing slot, the service answers what needs no hashing.
  const ready: TestResponse[] = [];
  while (settled < BURST / 2) {
    ready.push(await h.request('GET', '/readyz'));
    if (ready.length >= 5) break;
  }
  const answers = await Promise.all(burst);

  assert.ok(ready.length > 0, 'no readiness check ran while the burst was under way');
  for (const r of ready)
    assert.equal(r.status, 200, `/readyz answered ${r.status} during the burst: ${r.text}`);
  const statuses = new Map<number, number>();
  for (const r of answers) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  const summary = [...statuses].map(([s, n]) => `${n}× ${s}`).join(', ');
  t.diagnostic(`${summary}; ${ready.length} readiness checks during the burst`);
  assert.deepEqual(
    [...statuses.keys()].filter((s) => s !== 401 && s !== 503),
    [],
    `sign-ins for unknown accounts answered something else than 401 or 503: ${summary}`,
  );
  const refused = answers.filter((r) => r.status === 503);
  assert.ok(refused.length > 0, `no sign-in was refused although one hash at a time was allowed: ${summary}`);
  assert.ok(
    answers.some((r) => r.status === 401),
    `no sign-in was checked at all: ${summary}`,
  );
  for (const r of refused) {
    assert.equal(r.body.code, 'unavailable', `a refused sign-in is not 503 unavailable: ${r.text}`);
    assert.ok(Number(r.headers.get('retry-after')) > 0, 'a refused sign-in has no Retry-After');
  }

  // A refused sign-in checked nothing, so it does not count against its account.
  const refusedAccounts = answers.flatMap((r, i) => (r.status === 503 ? [`nobody-${i}@example.com`] : []));
  const counted = await h.database.kysely
    .selectFrom('sign_in_failures')
    .select('account')
    .where('account', 'in', refusedAccounts)
    .execute();
  assert.deepEqual(counted, [], 'sign-ins refused by the bound were counted as failed attempts');
});

test('once the burst is over, sign-in, accepting an invitation and creating users hash again', async () => {
  const { session, user } = await makeSignedInTenant(h);
  await signIn(h, user);
  const invited = await invite(h, session);
  const r = await accept(h, invited.token, TEST_PASSWORD, '192.0.2.77');
  assert.equal(r.status, 200, `accepting an invitation after the burst answered ${r.status}: ${r.text}`);
});
