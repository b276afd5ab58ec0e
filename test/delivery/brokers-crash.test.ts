import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test, type TestContext } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { makeBrokerConnection } from '../helpers/broker-suite.js';
import { BROKERS, type BrokerCase, type BrokerMessage } from '../helpers/brokers.js';
import { startServe, type RunningServer } from '../helpers/cli.js';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startStallingProxy, startTcpProxy } from '../helpers/tcp-proxy.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// Contract §21 (issue 40), faults with a real broker: `hubgate serve` killed with SIGKILL while events
// are published to it (every broker of the table in helpers/brokers.ts), and RabbitMQ going away (a TCP proxy on loopback, cut and restored) while
// events are published. Every event the hub accepted (answered 2xx) reaches the broker at least once,
// and on a per-key connection the first arrival of each event of a key comes in publish order
// (a repeat of an event the hub could not record as sent is allowed; an overtaking is not).

const CONNECTIONS = '/api/v1/integrations/connections';
const KEYS = 5;
const PER_KEY = 40;

interface Body {
  id: string;
  data: { key: string; n: number };
}

/** A per-key connection of `session` to `target` on the broker reached at `host` (`127.0.0.1:port`). */
async function orderedConnection<M>(
  t: TestContext,
  h: Harness,
  broker: BrokerCase<M>,
  session: TestSession,
  host: string,
) {
  const target = await broker.startTarget(t, 'k');
  const login = await broker.login(t);
  const { id } = await makeBrokerConnection(
    h,
    broker,
    session,
    { url: broker.urlAt(host), ...target.config, ordering: 'per-key' },
    login.credentials,
  );
  return { id, target };
}

/** One message a broker got: the event's ID and what the test put in its data. */
interface Arrival {
  id: string;
  key: string;
  n: number;
}

const arrivalOf = (message: BrokerMessage<unknown>): Arrival => {
  const body = JSON.parse(message.body) as Body;
  return { id: body.id, ...body.data };
};

/**
 * What the broker shows: every accepted event there at least once, and per key the first arrivals
 * in publish order. `accepted` maps each event ID the hub answered 2xx for to its key and number.
 */
function assertArrivals(
  t: { diagnostic(message: string): void },
  arrivals: Arrival[],
  accepted: Map<string, string>,
) {
  const firstSeen = new Set<string>();
  const firstOrder = new Map<string, number[]>();
  for (const arrival of arrivals) {
    if (firstSeen.has(arrival.id)) continue;
    firstSeen.add(arrival.id);
    const list = firstOrder.get(arrival.key) ?? [];
    list.push(arrival.n);
    firstOrder.set(arrival.key, list);
  }
  const missing = [...accepted].filter(([id]) => !firstSeen.has(id)).map(([, what]) => what);
  assert.deepEqual(missing, [], 'accepted events never reached the broker');
  for (const [key, ns] of firstOrder) {
    const sorted = [...ns].sort((a, b) => a - b);
    assert.deepEqual(ns, sorted, `${key}: first arrivals out of publish order: ${ns.join(',')}`);
  }
  t.diagnostic(
    `${arrivals.length} messages for ${firstSeen.size} events (${accepted.size} accepted): ${arrivals.length - firstSeen.size} repeats`,
  );
}

for (const broker of Object.values(BROKERS) as BrokerCase[])
  describe(
    `${broker.connectorKey}: serve killed with SIGKILL mid-stream`,
    {
      skip:
        (ENGINE !== 'postgres' &&
          'PostgreSQL only: a killed `serve` and the one started after it share one database, and PGlite is embedded in one process') ||
        (await broker.skipReason()),
    },
    () => {
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

      test('every accepted event reaches the broker, per key in publish order, across a SIGKILL and a restart', async (t) => {
        if (db.target.kind !== 'postgres') throw new Error('unreachable');
        const { session } = await makeSignedInTenant(h);
        // Between serve and the broker: withholding the broker's answers before the kill makes sure the
        // killed process dies holding publishes the broker may have but the hub never recorded as sent.
        const proxy = await startStallingProxy('127.0.0.1', broker.port);
        t.after(() => proxy.close());
        const { target } = await orderedConnection(t, h, broker, session, `127.0.0.1:${proxy.port}`);
        let arrived: Arrival[] = [];
        const look = async () => (arrived = (await target.messages()).map(arrivalOf));
        const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
        const env = {
          DATABASE_URL: db.target.url,
          HUBGATE_SECRET_KEY: secretKey.toString('base64'),
          DELIVERY_ALLOW_HTTP: 'true',
          DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
          // A killed process's claims run out after 2 × 2 s + 5 s, well within the test's patience.
          DELIVERY_TIMEOUT_MS: '2000',
        };
        let serve = await startServe(env);
        processes.push(serve);

        // Set while no serve runs: a publisher whose request failed waits here for the next one.
        let restarted: Promise<void> | null = null;
        const accepted = new Map<string, string>();
        let refused = 0;
        const publishKey = async (k: number) => {
          for (let n = 0; n < PER_KEY; n++) {
            const body = { type: 'order.updated', data: { key: `k${k}`, n }, orderingKey: `k${k}` };
            try {
              const response = await fetch(`${serve.baseUrl}/api/v1/integrations/events`, {
                method: 'POST',
                headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
                body: JSON.stringify(body),
              });
              const answer = (await response.json()) as { id?: string };
              if (response.status >= 200 && response.status < 300 && answer.id) {
                accepted.set(answer.id, `k${k} #${n}`);
                continue;
              }
              refused++;
            } catch {
              // No answer: the process died under the request. Not accepted (it may still arrive).
              refused++;
            }
            await restarted;
          }
        };
        const publishing = Promise.all(Array.from({ length: KEYS }, (_, k) => publishKey(k)));

        // Once a third of the events are accepted and some are at the broker, the confirms stop; the
        // kill comes when the hub holds claimed deliveries it cannot finish.
        const claimedNow = async () =>
          (
            await db.database.kysely
              .selectFrom('deliveries')
              .select('id')
              .where('status', '=', 'delivering')
              .execute()
          ).map((row) => row.id);
        await waitUntil(async () => accepted.size >= 60 && (await look()).length >= 20, {
          message: () => `60 events accepted and 20 at the broker (${accepted.size}, ${arrived.length})`,
          timeoutMs: 60_000,
        });
        proxy.stall();
        // Stuck: claimed for 250 ms since the stall. A claim seen once may be one whose answer came
        // before the stall, its outcome not yet written (that takes a turn of serve's event loop).
        const claimedSince = new Map<string, number>();
        await waitUntil(
          async () => {
            const now = Date.now();
            const ids = await claimedNow();
            for (const id of ids) if (!claimedSince.has(id)) claimedSince.set(id, now);
            return ids.some((id) => now - (claimedSince.get(id) ?? now) >= 250);
          },
          { message: 'a claimed delivery waiting for its confirm', timeoutMs: 30_000 },
        );
        let done: () => void = () => undefined;
        restarted = new Promise<void>((resolve) => (done = resolve));
        serve.child.kill('SIGKILL');
        const atKill = { accepted: accepted.size, arrived: (await look()).length };
        const claimed = (await claimedNow()).length;
        t.diagnostic(
          `killed with ${atKill.accepted} accepted, ${atKill.arrived} at the broker, ${claimed} claimed`,
        );
        assert.ok(claimed > 0, 'the kill happened with deliveries in flight');
        proxy.flow();
        serve = await startServe(env);
        processes.push(serve);
        restarted = null;
        done();
        await publishing;
        t.diagnostic(`${accepted.size} accepted, ${refused} without a 2xx answer`);
        assert.ok(accepted.size > atKill.accepted, 'nothing was published after the restart');

        await waitUntil(
          async () => {
            const ids = new Set((await look()).map((a) => a.id));
            return [...accepted.keys()].every((id) => ids.has(id));
          },
          {
            message: () => `every accepted event at the broker (${arrived.length} messages)`,
            timeoutMs: 90_000,
            intervalMs: 200,
          },
        );
        assertArrivals(t, arrived, accepted);
      });
    },
  );

describe('amqp: the broker away under load', { skip: await BROKERS.amqp.skipReason() }, () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: {
        DELIVERY_ALLOW_HTTP: 'true',
        DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
        // Retries every second, for long enough that the cut never exhausts them.
        DELIVERY_RETRY_SCHEDULE: Array.from({ length: 30 }, () => '1').join(','),
        DELIVERY_TIMEOUT_MS: '1500',
      },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('cut and restored while events are published: every accepted event arrives, per key in order', async (t) => {
    const broker = BROKERS.amqp;
    const proxy = await startTcpProxy('127.0.0.1', broker.port);
    t.after(() => proxy.close());
    const { session } = await makeSignedInTenant(h);
    const { id, target } = await orderedConnection(t, h, broker, session, `127.0.0.1:${proxy.port}`);
    let arrived: Arrival[] = [];
    const look = async () => (arrived = (await target.messages()).map(arrivalOf));

    const accepted = new Map<string, string>();
    const publishKey = async (k: number) => {
      for (let n = 0; n < PER_KEY; n++) {
        const body = { type: 'order.updated', data: { key: `k${k}`, n }, orderingKey: `k${k}` };
        const r = await h.request<{ id: string }>('POST', '/api/v1/integrations/events', { session, body });
        assert.equal(r.status, 202, `publishing k${k} #${n} answered ${r.status}: ${r.text}`);
        accepted.set(r.body.id, `k${k} #${n}`);
      }
    };
    const publishing = Promise.all(Array.from({ length: KEYS }, (_, k) => publishKey(k)));

    await waitUntil(async () => (await look()).length >= 20, {
      message: () => `20 messages at the broker (${arrived.length})`,
      timeoutMs: 30_000,
    });
    await proxy.cut();
    const atCut = accepted.size;
    // Away until the hub has seen it fail (a recorded connection error) and more was published.
    await waitUntil(
      async () => {
        const log = await h.request<{ data: Array<{ attempts: Array<{ error: string | null }> }> }>(
          'GET',
          `${CONNECTIONS}/${id}/events?limit=100&status=retrying,failed`,
          { session },
        );
        assert.equal(log.status, 200, log.text);
        const failedAttempt = log.body.data.some((d) => d.attempts.some((a) => a.error !== null));
        return failedAttempt && accepted.size >= Math.min(atCut + 20, KEYS * PER_KEY);
      },
      { message: () => 'a failed attempt while the broker was away', timeoutMs: 30_000, intervalMs: 200 },
    );
    const arrivedWhileAway = (await look()).length;
    await proxy.restore();
    await publishing;
    t.diagnostic(`cut at ${atCut} accepted, ${arrivedWhileAway} at the broker when restored`);

    await waitUntil(
      async () => {
        const ids = new Set((await look()).map((a) => a.id));
        return [...accepted.keys()].every((eventId) => ids.has(eventId));
      },
      {
        message: () => `every accepted event at the broker (${arrived.length} messages)`,
        timeoutMs: 90_000,
        intervalMs: 200,
      },
    );
    assertArrivals(t, arrived, accepted);
  });
});
