import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('an unexpected failure is 500 internal with the request ID, no detail, logged, and nothing written', async () => {
  // Break the schema under the running app: the audit insert inside the transaction now fails.
  await sql`drop table audit_log`.execute(h.database.kysely);
  const response = await h.request('POST', '/api/v1/platform/tenants', {
    token: h.platformToken,
    body: { name: 'doomed' },
  });
  assert.equal(response.status, 500, 'an unexpected failure is not answered 500');
  assert.equal(
    response.body.code,
    'internal',
    'an unexpected failure is answered with another code than internal',
  );
  assert.equal(response.body.detail, null, 'an unexpected failure shows a detail to the client');
  const requestId = response.headers.get('x-request-id');
  assert.equal(
    response.body.requestId,
    requestId,
    'the 500 answer names another request ID than its X-Request-Id header',
  );
  assert.ok(!/audit_log|relation|insert/i.test(response.text), 'no SQL in the answer');

  const logged = h
    .logs()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .find((entry) => entry.msg === 'unexpected error');
  assert.equal(
    logged?.requestId,
    requestId,
    'the unexpected error is not logged with the request ID the client saw',
  );
  assert.match(logged?.err?.message ?? '', /audit_log/, 'the logged error does not say what failed');

  const tenants = await h.database.kysely
    .selectFrom('tenants')
    .select('id')
    .where('name', '=', 'doomed')
    .execute();
  assert.equal(tenants.length, 0, 'the transaction was rolled back');
});
