import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test, type TestContext } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { startWorker, type RunningServer } from '../helpers/cli.js';
import { publishEvent, waitForDeliveries, type Delivery, type Page } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { redisConnectionOfItsOwn, redisSessionCounter } from '../helpers/redis-connections.js';
import { redisSkipReason } from '../helpers/redis.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// Contract §21: a broker session is kept by the process that delivers, and closed within 5 seconds of a
// pause or a revoke made through the API of another process. Here this process (A) serves the API and
// delivers nothing; a `hubgate worker` (B) delivers to Redis. Each connection logs in as an ACL user of
// its own, so Redis's CLIENT LIST shows B's session of that connection, and only it: the machine's Redis
// is shared with other tests. PostgreSQL only (two processes, one database).

const CONNECTIONS = '/api/v1/integrations/connections';
const CLOSE_WITHIN_MS = 5_000;
const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };

const skip =
  ENGINE === 'postgres'
    ? await redisSkipReason()
    : 'two processes share one database: PostgreSQL only (HUBGATE_TEST_ENGINE=postgres)';

describe(
  'a broker session in another process closes within 5 s of a pause or a revoke (§21)',
  { skip },
  () => {
    let db: TestDatabase;
    let h: Harness;
    let worker: RunningServer;
    const secretKey = randomBytes(32);

    before(async () => {
      db = await createTestDatabase();
      if (db.target.kind !== 'postgres') throw new Error('unreachable: PostgreSQL only');
      // No workers here: every publish to a broker is process B's.
      h = await startHarness({ testDatabase: db, keyring: createKeyring(secretKey), env: ENV });
      worker = await startWorker({
        ...ENV,
        DATABASE_URL: db.target.url,
        HUBGATE_SECRET_KEY: secretKey.toString('base64'),
        DELIVERY_TIMEOUT_MS: '5000',
      });
    });
    after(async () => {
      await worker?.stop();
      await h?.close();
      await db?.drop();
    });

    /** Every delivery of a connection for one event, read through the API. */
    async function deliveriesOf(session: TestSession, connectionId: string, eventId: string) {
      const log = await h.request<Page<Delivery>>(
        'GET',
        `${CONNECTIONS}/${connectionId}/events?eventId=${eventId}`,
        { session },
      );
      assert.equal(log.status, 200, log.text);
      return log.body.data;
    }

    async function stopsPublishing(t: TestContext, action: 'pause' | 'revoke') {
      // Sessions Redis has open for a connection's user: B's session of that connection.
      const sessionsOf = await redisSessionCounter(t);
      const { session } = await makeSignedInTenant(h);
      const stopped = await redisConnectionOfItsOwn(h, t, session);
      const target = stopped.reader;
      // Stays active throughout: an event on its stream shows B handled that event.
      const control = (await redisConnectionOfItsOwn(h, t, session)).reader;
      const onControl = async (eventId: string) =>
        (await control.entries()).some((entry) => entry.field('webhook-id') === eventId);

      // Events one after another, each once B delivered it to the control stream, so B uses the
      // session of `stopped` all along, up to the pause or revoke and after it.
      const published: Array<{ id: string; startedAt: number; deliveries: number }> = [];
      let feeding = true;
      let mostSessions = 0;
      const feeder = (async () => {
        while (feeding) {
          const startedAt = Date.now();
          const answer = await publishEvent(h, session, {
            type: 'order.paid',
            data: { n: published.length },
          });
          published.push({ id: answer.body.id, startedAt, deliveries: answer.body.deliveries });
          await waitUntil(() => onControl(answer.body.id), {
            message: `event ${answer.body.id} on the control stream (process B delivering)`,
            timeoutMs: 30_000,
          });
          mostSessions = Math.max(mostSessions, await sessionsOf(stopped.username));
        }
      })();
      t.after(() => {
        feeding = false;
        return feeder.catch(() => undefined);
      });

      // B delivers to the stream over one session of its own.
      await target.waitFor(3);
      assert.equal(await sessionsOf(stopped.username), 1, 'process B does not keep one session open');

      const sentAt = Date.now();
      const answer = await h.request('POST', `${CONNECTIONS}/${stopped.id}/${action}`, { session });
      assert.equal(answer.status, 200, `${action}: ${answer.text}`);
      const answeredAt = Date.now();

      // The positive signal first: Redis sees B's session of the connection end.
      const closedAt = await waitUntil(async () => (await sessionsOf(stopped.username)) === 0 && Date.now(), {
        message: `process B's session of the ${action}d connection to close`,
        timeoutMs: 20_000,
        intervalMs: 25,
      });
      t.diagnostic(
        `${action}: answered in ${answeredAt - sentAt} ms; the session closed at most ${closedAt - answeredAt} ms after`,
      );
      assert.ok(
        closedAt - answeredAt <= CLOSE_WITHIN_MS,
        `B's session closed ${closedAt - answeredAt} ms after the ${action} was answered (at most ${CLOSE_WITHIN_MS})`,
      );

      // B still delivers (to the control stream) after the session closed: one more event, handled.
      feeding = false;
      await feeder;
      const last = await publishEvent(h, session, { type: 'order.paid', data: { last: true } });
      await waitUntil(() => onControl(last.body.id), { message: 'the last event on the control stream' });
      published.push({ id: last.body.id, startedAt: Date.now(), deliveries: last.body.deliveries });

      const afterAction = published.filter((event) => event.startedAt > answeredAt);
      assert.ok(afterAction.length >= 1, `no event was published after the ${action}`);
      const entries = await target.entries();
      const onTarget = new Set(entries.map((entry) => entry.field('webhook-id')));
      assert.deepEqual(
        afterAction.filter((event) => onTarget.has(event.id)).map((event) => event.id),
        [],
        `events published after the ${action} was answered reached the stream`,
      );
      // Redis's entry IDs are its clock's milliseconds (this machine's): none was added after the answer.
      const latest = Math.max(...entries.map((entry) => Number(entry.id.split('-')[0])));
      assert.ok(
        latest <= answeredAt,
        `the stream got an entry ${latest - answeredAt} ms after the ${action}`,
      );
      assert.equal(await sessionsOf(stopped.username), 0, `B opened a session again after the ${action}`);
      assert.equal(mostSessions <= 1, true, `B held ${mostSessions} sessions of one connection at once`);

      for (const event of afterAction) {
        const deliveries = await deliveriesOf(session, stopped.id, event.id);
        if (action === 'pause') {
          // Each is recorded skipped (§15), and counted in the publish's answer with the control's.
          assert.equal(event.deliveries, 2, 'an event published while paused is not counted for it');
          assert.deepEqual(
            deliveries.map((d) => d.status),
            ['skipped'],
            `an event published while paused is not skipped for it`,
          );
        } else {
          assert.equal(event.deliveries, 1, 'an event published after the revoke fans out to it');
          assert.deepEqual(deliveries, [], 'an event published after the revoke has a delivery for it');
        }
      }
      // What was under way when the action came ended as the action says, never delivered after it.
      await waitForDeliveries(h, session, stopped.id, (log) =>
        log.every((d) => ['delivered', action === 'pause' ? 'skipped' : 'cancelled'].includes(d.status)),
      );
    }

    test('paused through process A: process B stops publishing and closes its session', (t) =>
      stopsPublishing(t, 'pause'));

    test('revoked through process A: process B stops publishing and closes its session', (t) =>
      stopsPublishing(t, 'revoke'));
  },
);
