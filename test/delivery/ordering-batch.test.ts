import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

// docs/api/events.md, Ordering: within a batch, events of one orderingKey are chained in the batch's
// order, whether or not they carry an idempotency key (the two kinds are otherwise written side by
// side). No worker runs here: the deliveries stay pending, and the log shows what waits for what.
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
const EVENTS = '/api/v1/integrations/events';

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV });
});
after(() => h.close());

test('a batch mixing events with and without an idempotency key chains each key in the batch order', async () => {
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, 'http://127.0.0.1:9/hook', { ordering: 'per-key' });
  const key = await makeKey(h, session, { scopes: ['integrations:READER', 'integrations:OPERATOR'] });
  for (let round = 0; round < 5; round++) {
    const orderingKey = `order-${round}`;
    const events = [
      { type: 'order.updated', data: { n: 0 }, orderingKey },
      { type: 'order.updated', data: { n: 1 }, orderingKey, idempotencyKey: `k-${round}-1` },
      { type: 'order.updated', data: { n: 2 }, orderingKey },
      { type: 'order.updated', data: { n: 3 }, orderingKey, idempotencyKey: `k-${round}-3` },
    ];
    const r = await h.request<{ data: Array<{ id: string }> }>('POST', `${EVENTS}/batch`, {
      token: key.secret,
      body: { events },
    });
    assert.equal(r.status, 202, r.text);
    const eventIds = r.body.data.map((item) => item.id);
    const log = await h.request<{ data: Array<{ id: string; eventId: string; waitingFor: string | null }> }>(
      'GET',
      `/api/v1/integrations/connections/${hook.id}/events?limit=100`,
      { token: key.secret },
    );
    assert.equal(log.status, 200, log.text);
    const deliveryOf = (eventId: string) => log.body.data.find((d) => d.eventId === eventId)!;
    const chain = eventIds.map((id) => deliveryOf(id));
    assert.equal(chain[0]!.waitingFor, null, `round ${round}: the batch's first event of the key waits`);
    for (let i = 1; i < chain.length; i++) {
      assert.equal(
        chain[i]!.waitingFor,
        chain[i - 1]!.id,
        `round ${round}: item ${i} waits for ${chain[i]!.waitingFor}, not for item ${i - 1}`,
      );
    }
  }
});
