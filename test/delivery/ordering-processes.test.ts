import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { startServe, startWorker, type RunningServer } from '../helpers/cli.js';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// docs/api/events.md, Ordering, across processes: two processes publish to the same keys at once (this
// one and `hubgate serve`), `serve` and a `hubgate worker` deliver, and the worker is killed with
// SIGKILL mid-attempt. Each publisher's events of a key arrive in the order it published them, never
// two of one key at once, and every event arrives. PostgreSQL only (one database, several processes).
if (ENGINE === 'postgres') {
  const KEYS = 12;
  const PER_SOURCE = 5;
  let db: TestDatabase;
  let h: Harness;
  const secretKey = randomBytes(32);
  const processes: RunningServer[] = [];

  before(async () => {
    db = await createTestDatabase();
    h = await startHarness({
      testDatabase: db,
      keyring: createKeyring(secretKey),
      env: { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
    });
  });
  after(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await h.close();
    await db.drop();
  });

  test('two publishers, serve and a worker killed mid-attempt: per key in order, one at a time, nothing lost', async (t) => {
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    const inFlight = new Map<string, number>();
    let overlaps = 0;
    const arrivals: Array<{ key: string; source: string; n: number; eventId: string; at: number }> = [];
    const receiver = await startReceiver(t, (r, _i, res) => {
      const body = JSON.parse(r.body) as { id: string; data: { key: string; source: string; n: number } };
      const { key, source, n } = body.data;
      arrivals.push({ key, source, n, eventId: body.id, at: Date.now() });
      inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
      if (inFlight.get(key)! > 1) overlaps++;
      setTimeout(() => {
        inFlight.set(key, inFlight.get(key)! - 1);
        res.end('ok');
      }, 120);
    });
    const { session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, receiver.url(), { ordering: 'per-key' });
    const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });

    const env = {
      DATABASE_URL: db.target.url,
      HUBGATE_SECRET_KEY: secretKey.toString('base64'),
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      // A killed worker's claims run out after 2 × 2 s + 5 s, well within the test's patience.
      DELIVERY_TIMEOUT_MS: '2000',
    };
    const [serve, worker] = await Promise.all([startServe(env), startWorker(env)]);
    processes.push(serve!, worker!);

    // Each source publishes its events of each key one after another; the keys and the two sources
    // all at once, so the two processes' publishes of one key interleave.
    const publishVia = async (source: 'harness' | 'serve', k: number) => {
      for (let n = 1; n <= PER_SOURCE; n++) {
        const body = { type: 'order.updated', data: { key: `k${k}`, source, n }, orderingKey: `k${k}` };
        const status =
          source === 'harness'
            ? (await h.request('POST', '/api/v1/integrations/events', { session, body })).status
            : (
                await fetch(`${serve!.baseUrl}/api/v1/integrations/events`, {
                  method: 'POST',
                  headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
                  body: JSON.stringify(body),
                })
              ).status;
        assert.equal(status, 202, `publishing k${k} #${n} via ${source} answered ${status}`);
      }
    };
    const startedAt = Date.now();
    const publishing = Promise.all(
      Array.from({ length: KEYS }, (_, k) => [publishVia('harness', k), publishVia('serve', k)]).flat(),
    );
    await receiver.waitFor(20, 30_000);
    worker!.child.kill('SIGKILL');
    const killedAt = Date.now();
    const claimed = await db.database.kysely
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('status', '=', 'delivering')
      .executeTakeFirstOrThrow();
    t.diagnostic(`${claimed.n} deliveries were claimed when the worker was killed`);
    await publishing;
    const publishedAt = Date.now();
    processes.push(await startWorker(env));

    const total = KEYS * 2 * PER_SOURCE;
    const ids = () => new Set(arrivals.map((a) => a.eventId));
    await waitUntil(() => ids().size === total, {
      message: () => `all ${total} events at the receiver (${ids().size} came)`,
      timeoutMs: 60_000,
    });
    t.diagnostic(`${arrivals.length} requests for ${total} events`);
    t.diagnostic(
      `kill at ${killedAt - startedAt} ms, published by ${publishedAt - startedAt} ms, last arrival at ${Math.max(...arrivals.map((a) => a.at)) - startedAt} ms`,
    );
    assert.equal(overlaps, 0, 'two deliveries of one key were in flight at once');
    for (let k = 0; k < KEYS; k++) {
      for (const source of ['harness', 'serve']) {
        const seen = arrivals.filter((a) => a.key === `k${k}` && a.source === source).map((a) => a.n);
        const sorted = [...seen].sort((a, b) => a - b);
        // A request of a killed worker may arrive and then be sent again: repeats, but never backwards.
        assert.deepEqual(
          seen,
          sorted,
          `k${k} from ${source} arrived out of publish order: ${seen.join(',')}`,
        );
      }
    }
    // And the log agrees: every delivery delivered, none left waiting.
    let left = -1;
    await waitUntil(
      async () => {
        const rows = await db.database.kysely
          .selectFrom('deliveries')
          .select('id')
          .where('connection_id', '=', hook.id)
          .where((eb) => eb.or([eb('status', '!=', 'delivered'), eb('waiting_for', 'is not', null)]))
          .execute();
        left = rows.length;
        return left === 0;
      },
      { message: () => `every delivery delivered and free (${left} were not)`, timeoutMs: 30_000 },
    );
  });
}
