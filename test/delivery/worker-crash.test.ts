import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { type RunningServer, startWorker } from '../helpers/cli.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { type Harness, startHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';

// Two `hubgate worker` processes share one PostgreSQL; one is killed with SIGKILL while it holds
// deliveries in flight. Every event must still reach the receiver (at least once). PostgreSQL only.
if (ENGINE === 'postgres') {
  const EVENTS = 200;
  let db: TestDatabase;
  let h: Harness;
  const secretKey = randomBytes(32);
  const workers: RunningServer[] = [];

  before(async () => {
    db = await createTestDatabase();
    h = await startHarness({
      testDatabase: db,
      keyring: createKeyring(secretKey),
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
    });
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await h.close();
    await db.drop();
  });

  test('a worker killed mid-delivery loses nothing: its claims expire and the other worker sends them', async (t) => {
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    // Slow enough that the killed worker surely holds deliveries it has not finished.
    const receiver = await startReceiver((_r, _i, res) => {
      setTimeout(() => res.end('ok'), 150);
    });
    try {
      const { session } = await makeSignedInTenant(h);
      const created = await h.request('POST', '/api/v1/integrations/connections', {
        session,
        body: { connectorKey: 'webhook', displayName: 'crash', url: receiver.url() },
      });
      assert.equal(created.status, 201, created.text);
      const bound = await h.request(
        'PUT',
        `/api/v1/integrations/connections/${created.body.id}/credentials`,
        {
          session,
          body: {},
        },
      );
      assert.equal(bound.status, 200, bound.text);
      const published = new Set<string>();
      for (let i = 0; i < EVENTS; i++) {
        const r = await h.request('POST', '/api/v1/integrations/events', {
          session,
          body: { type: 'crash.test', data: { i } },
        });
        assert.equal(r.status, 202);
        assert.equal(r.body.deliveries, 1);
        published.add(r.body.id);
      }

      const env = {
        DATABASE_URL: db.target.url,
        HUBGATE_SECRET_KEY: secretKey.toString('base64'),
        DELIVERY_ALLOW_HTTP: 'true',
        DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
        DELIVERY_TIMEOUT_MS: '1000',
      };
      workers.push(...(await Promise.all([startWorker(env), startWorker(env)])));
      await receiver.waitFor(30, 30_000).catch((error: Error) => {
        throw new Error(`${error.message}\n${workers.map((w) => w.output()).join('\n---\n')}`);
      });
      const victim = workers.shift();
      victim?.child.kill('SIGKILL');
      const claimed = await db.database.kysely
        .selectFrom('deliveries')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('status', '=', 'delivering')
        .executeTakeFirstOrThrow();
      t.diagnostic(`${claimed.n} deliveries were claimed when one worker was killed`);
      assert.ok(Number(claimed.n) > 0, 'the kill happened with deliveries in flight');

      const deadline = Date.now() + 60_000;
      const ids = () => new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
      while (ids().size < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      const seen = ids();
      const missing = [...published].filter((id) => !seen.has(id));
      assert.deepEqual(missing, [], 'every event reached the receiver');
      const duplicates = receiver.received.length - seen.size;
      t.diagnostic(
        `received ${receiver.received.length} requests for ${EVENTS} events: ${duplicates} duplicates`,
      );

      // And the log agrees: everything is delivered once the survivor has finished.
      const settle = Date.now() + 30_000;
      for (;;) {
        const open = await db.database.kysely
          .selectFrom('deliveries')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .where('status', '!=', 'delivered')
          .executeTakeFirstOrThrow();
        if (Number(open.n) === 0) break;
        assert.ok(Date.now() < settle, `${open.n} deliveries never finished`);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await receiver.close();
    }
  });
}
