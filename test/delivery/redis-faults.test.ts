import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { madeBeforeThePolicy } from '../helpers/broker-policy.js';
import { brokerFaultSuites, makeBrokerConnection } from '../helpers/broker-suite.js';
import { BROKERS } from '../helpers/brokers.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { streamReader } from '../helpers/redis.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// A Redis that goes away and comes back, one that stops answering, and a hub that allows no plaintext
// or an address §8 refuses, as every broker (broker-suite.ts); here, what only Redis is tested for:
// a cut under a stream of per-key events, and loopback refused by name as by literal.

await brokerFaultSuites(BROKERS.redis, {
  goesAway: ({ harness, connect }) => {
    test('under a stream of events with per-key ordering, a cut loses none and keeps their order', async (t) => {
      const h = harness();
      const reader = await streamReader(t);
      const proxy = await startTcpProxy('127.0.0.1', 6379);
      t.after(() => proxy.close());
      const { session } = await makeSignedInTenant(h);
      const { id } = await connect(session, {
        url: `redis://127.0.0.1:${proxy.port}`,
        stream: reader.stream,
        ordering: 'per-key',
      });
      const events = Array.from({ length: 20 }, (_, n) => ({
        type: 'order.paid',
        data: { n },
        orderingKey: 'A',
      }));
      const first = await h.request('POST', '/api/v1/integrations/events/batch', {
        session,
        body: { events: events.slice(0, 10) },
      });
      assert.equal(first.status, 202, first.text);
      await reader.waitFor(3);
      await proxy.cut();
      const second = await h.request('POST', '/api/v1/integrations/events/batch', {
        session,
        body: { events: events.slice(10) },
      });
      assert.equal(second.status, 202, second.text);
      // Every delivery ends before Redis is back (once one of a key has failed, the next goes): the
      // deliveries made while it was away all failed, none went past another.
      const ended = await waitForDeliveries(
        h,
        session,
        id,
        (deliveries) =>
          deliveries.length === 20 &&
          deliveries.every((d) => d.status === 'delivered' || d.status === 'failed'),
        { message: '20 deliveries ended', timeoutMs: 20_000 },
      );
      const failedCount = ended.filter((d) => d.status === 'failed').length;
      assert.ok(failedCount >= 10, `only ${failedCount} deliveries failed while Redis was away`);
      await proxy.restore();
      const recovered = await h.request<{ queued: number }>(
        'POST',
        `/api/v1/integrations/connections/${id}/recover`,
        {
          session,
          body: { since: new Date(Date.now() - 60_000).toISOString() },
        },
      );
      assert.equal(recovered.status, 202, `recover answered ${recovered.status}: ${recovered.text}`);
      assert.equal(recovered.body.queued, failedCount, 'recover did not queue every failed delivery');
      await waitForDeliveries(
        h,
        session,
        id,
        (deliveries) => deliveries.filter((d) => d.status === 'delivered').length === 20,
        { message: '20 delivered', timeoutMs: 20_000 },
      );
      // At least once: an XADD cut after Redis took it may come again; the first of each is in order.
      const seen: number[] = [];
      for (const entry of await reader.entries()) {
        const n = (JSON.parse(String(entry.field('body'))) as { data: { n: number } }).data.n;
        if (!seen.includes(n)) seen.push(n);
      }
      assert.deepEqual(
        seen,
        events.map((e) => e.data.n),
        'entries of one ordering key were lost or out of order',
      );
    });
  },
});

describe('redis: a hub without an exemption for loopback', { skip: await BROKERS.redis.skipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_RETRY_SCHEDULE: '0' },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('refuses the loopback address by §8 at connect, by name and by literal', async (t) => {
    const reader = await streamReader(t);
    const { session } = await makeSignedInTenant(h);
    for (const url of ['redis://127.0.0.1:6379', 'redis://localhost:6379/0']) {
      const id = await madeBeforeThePolicy(
        h,
        session,
        'redis',
        { url, stream: reader.stream },
        'redis://broker.example.com:6379/0',
        async (body) => (await makeBrokerConnection(h, BROKERS.redis, session, body)).id,
      );
      await publishEvent(h, session, { type: 'order.paid', data: {} });
      const [entry] = await waitForDeliveries(h, session, id, { statuses: ['failed'] });
      assert.equal(entry?.attempts[0]?.error, 'destination_forbidden', `${url} was not refused by §8`);
      assert.match(
        String(entry?.attempts[0]?.errorDetail),
        /refused range/,
        `${url}: the refusal does not say why`,
      );
    }
    assert.equal((await reader.entries()).length, 0, 'a refused address got an entry');
  });
});
