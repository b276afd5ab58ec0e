import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { randomBase62 } from '../../src/crypto/base62.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

// One provider sends to many tenants' sources from the same few addresses. What one tenant does
// with its source (deletes it while the provider keeps sending) must not close the others' ingest
// URLs to that provider: unknown sources are a plain 404, counted against no address
// (docs/decisions/0088-…). A guessed ID costs one primary-key lookup.

const SECRET = 'a github webhook secret';
let h: Harness;
before(async () => {
  h = await startHarness({ env: { RATE_LIMIT_PER_MINUTE: '5' } });
});
after(() => h.close());

function signedPush(path: string, delivery: string) {
  const body = JSON.stringify({ ref: 'refs/heads/main', n: randomBytes(4).toString('hex') });
  return h.request('POST', path, {
    rawBody: body,
    headers: {
      'content-type': 'application/json',
      'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
      'x-github-event': 'push',
      'x-github-delivery': delivery,
    },
  });
}

async function githubSource(): Promise<{
  id: string;
  path: string;
  session: Parameters<Harness['request']>[2];
}> {
  const { session } = await makeSignedInTenant(h);
  const created = await h.request('POST', '/api/v1/integrations/sources', {
    session,
    body: { name: 'gh', scheme: 'github', secret: SECRET },
  });
  assert.equal(created.status, 201, created.text);
  return { id: created.body.id, path: new URL(created.body.ingestUrl).pathname, session: { session } };
}

test('a tenant that deletes its source while the provider keeps sending closes no other tenant’s source', async () => {
  const a = await githubSource();
  const b = await githubSource();
  const deleted = await h.request('DELETE', `/api/v1/integrations/sources/${a.id}`, a.session);
  assert.equal(deleted.status, 204, deleted.text);
  // The provider retries to A's deleted source, from the address it sends to B from, past the
  // per-address allowance of failed requests.
  for (let i = 0; i < 10; i += 1) {
    const r = await signedPush(a.path, `a-${i}`);
    assert.equal(r.status, 404, `a retry to the deleted source was not a plain 404: ${r.text}`);
  }
  const toB = await signedPush(b.path, 'b-1');
  assert.equal(toB.status, 202, `tenant B's source was closed by tenant A's deleted one: ${toB.text}`);
});

test('a guessed source ID is a plain 404', async () => {
  for (let i = 0; i < 3; i += 1) {
    const r = await h.request('POST', `/ingest/src_${randomBase62(22)}`, {
      rawBody: '{}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(r.status, 404, `a guessed ID answered ${r.status}: ${r.text}`);
  }
  const malformed = await h.request('POST', '/ingest/not-a-source', {
    rawBody: '{}',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(malformed.status, 404, malformed.text);
});
