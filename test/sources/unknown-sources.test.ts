import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { randomBase62 } from '../../src/crypto/base62.js';
import { startHarness, type Harness } from '../helpers/harness.js';

// Ingest URLs are public: a client guessing source IDs costs a lookup each, so the misses of an
// address are counted as the gate counts failed credentials, and once they are spent the next
// guess is refused before any lookup (docs/api/sources.md).

let h: Harness;
before(async () => {
  h = await startHarness({ env: { RATE_LIMIT_PER_MINUTE: '5' } });
});
after(() => h.close());

const guess = () =>
  h.request('POST', `/ingest/src_${randomBase62(22)}`, {
    rawBody: JSON.stringify({ n: randomBytes(4).toString('hex') }),
    headers: { 'content-type': 'application/json' },
  });

test('an address that guesses unknown sources is refused before the next lookup', async () => {
  for (let i = 0; i < 5; i += 1) {
    const r = await guess();
    assert.equal(r.status, 404, `guess ${i + 1} was not a plain 404: ${r.text}`);
  }
  const refused = await guess();
  assert.equal(refused.status, 429, `the sixth guess within the minute was looked up: ${refused.text}`);
  assert.ok(Number(refused.headers.get('retry-after')) > 0, 'the 429 does not say when to come back');
  // A malformed ID costs no lookup and is not counted: still a 404.
  const malformed = await h.request('POST', '/ingest/not-a-source', {
    rawBody: '{}',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(malformed.status, 404, malformed.text);
});
