import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { openDatabase } from '../../src/db/database.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { startDatabaseProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// Outages of several seconds between a worker process and PostgreSQL, longer than any single
// reconnect try: afterwards the process must work again without a restart. The publisher talks to
// the database directly, the worker process through a proxy the test cuts. PostgreSQL only (an
// embedded database cannot go away).
if (ENGINE === 'postgres') {
  const OUTAGE_MS = 7_000;
  let direct: TestDatabase;
  let proxy: TcpProxy;
  let proxiedUrl: string;
  let publisher: Harness;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const keyring = createKeyring(randomBytes(32));
  const env = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };

  before(async () => {
    direct = await createTestDatabase();
    if (direct.target.kind !== 'postgres') throw new Error('unreachable');
    ({ proxy, url: proxiedUrl } = await startDatabaseProxy(direct.target.url));
    publisher = await startHarness({ testDatabase: direct, keyring, env });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await proxy.close();
    await publisher.close();
    await direct.drop();
  });

  /** Runs `body` with a process that has delivery workers and reaches the database only through the proxy. */
  async function withWorkerProcess(pollMs: number, body: (worker: Harness) => Promise<void>): Promise<void> {
    const proxied = await openDatabase({ kind: 'postgres', url: proxiedUrl });
    try {
      const worker = await startHarness({
        testDatabase: { ...direct, database: proxied },
        keyring,
        env,
        workers: { pollMs },
      });
      try {
        await body(worker);
      } finally {
        await proxy.restore();
        await worker.close();
      }
    } finally {
      await proxied.close();
    }
  }

  async function publisherTenant() {
    const { session } = await makeSignedInTenant(publisher);
    await makeWebhookConnection(publisher, session, receiver.url());
    return async (i: number) => {
      const r = await publisher.request('POST', '/api/v1/integrations/events', {
        session,
        body: { type: 'outage.test', data: { i } },
      });
      assert.equal(r.status, 202, r.text);
      assert.equal(r.body.deliveries, 1, "a published event is not delivered to the tenant's one connection");
    };
  }

  /** Cuts the database away for OUTAGE_MS; the API answers 503 with Retry-After all along. */
  async function outage(worker: Harness): Promise<number> {
    await proxy.cut();
    const cutAt = Date.now();
    let answered = 0;
    while (Date.now() - cutAt < OUTAGE_MS) {
      const r = await worker.request('GET', '/api/v1/platform/tenants', { token: worker.platformToken });
      assert.equal(r.status, 503, r.text);
      assert.equal(
        r.body.code,
        'unavailable',
        'an API call during the outage answers something other than unavailable',
      );
      assert.ok(
        Number(r.headers.get('retry-after')) > 0,
        'a 503 during the outage does not tell the client when to retry',
      );
      answered += 1;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await proxy.restore();
    const ok = await worker.request('GET', '/api/v1/platform/tenants', { token: worker.platformToken });
    assert.equal(ok.status, 200, 'API calls work again at once');
    return answered;
  }

  test('after a database outage of several seconds, API calls recover and NOTIFY wakes the workers again', async (t) => {
    // The worker polls once a minute: a delivery that arrives in seconds came through LISTEN.
    await withWorkerProcess(60_000, async (worker) => {
      const publish = await publisherTenant();
      const seen = receiver.received.length;
      const WOKEN_WITHIN_MS = 10_000;
      await publish(0);
      await waitUntil(() => receiver.received.length === seen + 1, {
        message: 'a delivery woken by NOTIFY',
        timeoutMs: WOKEN_WITHIN_MS,
      });

      const answered = await outage(worker);
      t.diagnostic(`${answered} requests answered 503 during a ${OUTAGE_MS} ms outage`);
      const restoredAt = Date.now();

      // Published after the outage, woken only if LISTEN was re-opened (the loop sleeps a minute).
      await publish(1);
      await waitUntil(() => receiver.received.length === seen + 2, {
        message: 'a delivery after the outage',
        timeoutMs: WOKEN_WITHIN_MS,
      });
      t.diagnostic(`delivered ${Date.now() - restoredAt} ms after the database came back`);
      await publish(2);
      const published = Date.now();
      await waitUntil(() => receiver.received.length === seen + 3, {
        message: 'a delivery woken by a live NOTIFY',
        timeoutMs: 3_000,
      });
      t.diagnostic(`a NOTIFY after the reconnect woke the worker in ${Date.now() - published} ms`);
    });
  });

  test('the delivery workers keep claiming through an outage and deliver what was published during it', async () => {
    await withWorkerProcess(100, async (worker) => {
      const publish = await publisherTenant();
      const seen = receiver.received.length;
      const claimFailures = () =>
        worker
          .logs()
          .split('\n')
          .filter((l) => l.includes('claiming deliveries failed'));
      await proxy.cut();
      await waitUntil(() => claimFailures().length >= 3, { message: 'the claim loop meeting the outage' });
      await publish(0);
      await outage(worker);
      await waitUntil(() => receiver.received.length === seen + 1, {
        message: 'the event published during the outage',
      });
      const failuresAfter = claimFailures().length;
      await publish(1);
      await waitUntil(() => receiver.received.length === seen + 2, {
        message: 'an event published after the outage',
      });
      assert.equal(claimFailures().length, failuresAfter, 'no more claim failures once the database is back');
    });
  });
}
