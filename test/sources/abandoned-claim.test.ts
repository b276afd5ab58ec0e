import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, test } from 'node:test';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

// A process that dies between claiming a provider delivery ID and publishing it leaves a claim
// without an event (docs/decisions/0088-…). Its duplicates wait for it at first (503, the provider
// retries); once the claim is 2 minutes old the next one takes it over and publishes.

const SECRET = 'a github webhook secret';
let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('a claim left without its event is taken over after 2 minutes, not waited on for 7 days', async () => {
  const { session } = await makeSignedInTenant(h);
  const source = await h.request('POST', '/api/v1/integrations/sources', {
    session,
    body: { name: 'gh', scheme: 'github', secret: SECRET },
  });
  assert.equal(source.status, 201, source.text);
  const path = new URL(source.body.ingestUrl).pathname;
  const body = JSON.stringify({ ref: 'refs/heads/main' });
  const send = () =>
    h.request('POST', path, {
      rawBody: body,
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
        'x-github-event': 'push',
        'x-github-delivery': 'delivery-of-a-dead-process',
      },
    });
  // What a process that died after claiming leaves behind.
  await h.database.kysely
    .insertInto('source_deliveries')
    .values({
      source_id: source.body.id,
      provider_delivery_id: 'delivery-of-a-dead-process',
      event_id: null,
      received_at: new Date(),
    })
    .execute();
  const waiting = await send();
  assert.equal(waiting.status, 503, `a fresh claim was not waited for: ${waiting.text}`);
  assert.ok(waiting.headers.get('retry-after'), 'the 503 does not say when to come back');

  h.setNow(new Date(Date.now() + 121_000));
  try {
    const taken = await send();
    assert.equal(taken.status, 202, `the abandoned claim was not taken over: ${taken.text}`);
    const again = await send();
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(
      again.body,
      { id: taken.body.id, duplicate: true },
      'the taken-over claim is not the first',
    );
  } finally {
    h.setNow(null);
  }
});
