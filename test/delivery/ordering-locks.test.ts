import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { PublishedEvent } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { CONNECTIONS, logOf, operate, resume } from '../helpers/operate.js';
import { startReceiver } from '../helpers/receiver.js';
import { ENGINE } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// docs/api/events.md, Ordering, and docs/decisions/0059-ordered-delivery.md: a pause racing the outcome of
// an in-flight delivery whose key has an OLDER delivery chained behind it (a manual retry of a failed
// head while a newer delivery of its key was in flight). The outcome locks the in-flight delivery and
// then its successor; the pause must lock them in the same order, or PostgreSQL ends one of the two
// with a deadlock (40P01): a 500 for the pause, or an outcome lost and its attempt sent again.
// Receivers listen on 127.0.0.1 only.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_TIMEOUT_MS: '10000',
  // Two attempts at once, then failed; no automatic pause (a 410 would pause the connection).
  DELIVERY_RETRY_SCHEDULE: '0',
  CONNECTION_PAUSE_AFTER_FAILURES: '0',
  RATE_LIMIT_PER_MINUTE: '1000000',
};
const ROUNDS = 20;
const KEYS = 6;

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 20 } });
});
after(() => h.close());

interface Body {
  data: { key: string; n: number };
}

async function publish(session: TestSession, key: string, n: number): Promise<PublishedEvent> {
  const r = await h.request<PublishedEvent>('POST', '/api/v1/integrations/events', {
    session,
    body: { type: 'order.updated', data: { key, n }, orderingKey: key },
  });
  assert.equal(r.status, 202, `publishing ${key}#${n} answered ${r.status}: ${r.text}`);
  return r.body;
}

/** The log lines that tell of a deadlock (SQLSTATE 40P01), cut short. */
const deadlocks = () =>
  h
    .logs()
    .split('\n')
    .filter((line) => /40P01|deadlock/i.test(line))
    .map((line) => line.slice(0, 300));

describe('ordering per key: lock order of a pause against outcomes', () => {
  test(
    'pause racing the outcome of a delivery an older retried one waits for: no deadlock, keys stay in order',
    // PGlite has one connection: two transactions never run at once there, so no lock can wait.
    { skip: ENGINE !== 'postgres' && 'PGlite runs one transaction at a time: no two can wait on each other' },
    async (t) => {
      const arrivals = new Map<string, number[]>();
      const inFlight = new Map<string, number>();
      let overlaps = 0;
      const held: Array<() => void> = [];
      const receiver = await startReceiver(t, (r, _i, res: ServerResponse) => {
        const { key, n } = (JSON.parse(r.body) as Body).data;
        const seen = arrivals.get(key) ?? [];
        seen.push(n);
        arrivals.set(key, seen);
        const now = (inFlight.get(key) ?? 0) + 1;
        inFlight.set(key, now);
        if (now > 1) overlaps++;
        const answer = (status: number) => {
          inFlight.set(key, (inFlight.get(key) ?? 1) - 1);
          res.statusCode = status;
          res.end();
        };
        // The head's two attempts fail (then it has failed); the second of the key is held until released.
        if (n === 1 && seen.filter((x) => x === 1).length <= 2) return answer(500);
        if (n === 2) return void held.push(() => answer(200));
        setTimeout(() => answer(200), 5);
      });
      t.after(() => {
        for (const release of held.splice(0)) release();
      });
      const { session } = await makeSignedInTenant(h);
      const hook = await makeWebhookConnection(h, session, receiver.url(), { ordering: 'per-key' });
      // The creation's answer shows the secret, once; none after it may.
      const answeredBefore = h.responses().length;
      for (let round = 0; round < ROUNDS; round++) {
        const keys = Array.from({ length: KEYS }, (_, i) => `r${round}k${i}`);
        const heads = await Promise.all(keys.map((key) => publish(session, key, 1)));
        const headIds = new Set(heads.map((e) => e.id));
        const failed = await waitUntil(
          async () => {
            const log = await logOf(h, session, hook.id);
            const mine = log.filter((d) => headIds.has(d.eventId) && d.status === 'failed');
            return mine.length === KEYS && mine;
          },
          { message: `round ${round}: every head failed` },
        );
        // A newer delivery of each key in flight, its answer held.
        const seconds: PublishedEvent[] = [];
        for (const key of keys) seconds.push(await publish(session, key, 2));
        await waitUntil(() => held.length === KEYS, {
          message: () => `round ${round}: the second of each key in flight (${held.length} held)`,
        });
        // The older head, retried by hand, goes after the newer delivery in flight.
        for (const head of failed) {
          const retried = await h.request('POST', `${CONNECTIONS}/${hook.id}/events/${head.id}/retry`, {
            session,
          });
          assert.equal(
            retried.status,
            202,
            `round ${round}: the retry answered ${retried.status}: ${retried.text}`,
          );
        }
        const chained = await logOf(h, session, hook.id);
        for (const head of failed) {
          const now = chained.find((d) => d.id === head.id);
          assert.ok(
            now?.waitingFor && now.waitingFor !== head.id,
            `round ${round}: the retried head does not wait for the newer delivery of its key`,
          );
        }
        // The race: every held answer released while the pause locks the connection's deliveries.
        const releasing = held.splice(0);
        const [paused] = await Promise.all([
          operate(h, session, hook.id, 'pause'),
          (async () => {
            for (const release of releasing) release();
          })(),
        ]);
        assert.equal(
          paused.status,
          200,
          `round ${round}: the pause answered ${paused.status}: ${paused.text} ${deadlocks().join(' ')}`,
        );
        await resume(h, session, hook.id, { replaySkipped: true });
        const ofRound = new Set([...heads.map((e) => e.id), ...seconds.map((e) => e.id)]);
        await waitUntil(
          async () => {
            const log = (await logOf(h, session, hook.id)).filter((d) => ofRound.has(d.eventId));
            return log.length === 2 * KEYS && log.every((d) => d.status === 'delivered');
          },
          {
            message: `round ${round}: every delivery of the round delivered after the resume`,
            timeoutMs: 20_000,
          },
        );
        for (const key of keys) {
          const seen = arrivals.get(key) ?? [];
          assert.deepEqual(
            seen.slice(0, 4),
            [1, 1, 2, 1],
            `round ${round}: key ${key} arrived as ${seen.join(',')}: the retried head went before the newer one`,
          );
          assert.ok(
            seen.slice(3).every((n) => n === 1),
            `round ${round}: key ${key} arrived as ${seen.join(',')}`,
          );
        }
      }
      assert.equal(overlaps, 0, 'two deliveries of one key were in flight at once');
      assert.deepEqual(deadlocks(), [], 'PostgreSQL reported a deadlock');
      assert.doesNotMatch(h.logs(), /"statusCode":5\d\d/, 'a request answered with a server error');
      assert.ok(
        h.responses().every((response) => !response.startsWith('5')),
        'a response was a server error',
      );
      assert.ok(!h.logs().includes(hook.secret), 'the connection secret is in the logs');
      assert.ok(
        h
          .responses()
          .slice(answeredBefore)
          .every((response) => !response.includes(hook.secret)),
        'the connection secret is in an answer after its creation',
      );
    },
  );
});
