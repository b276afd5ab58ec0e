import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import {
  redisConnectionOfItsOwn,
  redisSessionCounter,
  type OwnRedisConnection,
} from '../helpers/redis-connections.js';
import { redisSkipReason } from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

// Decision 0080: a worker keeps at most `max` broker sessions; past it the least recently used is
// closed. One tenant with many broker connections must cost another tenant nothing but reconnects:
// every delivery of both arrives and is delivered. The pool here keeps 3 sessions (256 in production)
// and never closes one for idleness, so every session closed is one the bound evicted. Each connection
// logs in to Redis as an ACL user of its own, so CLIENT LIST shows its sessions (Redis is shared).

const POOL = { max: 3, idleMs: 600_000, sweepMs: 500 };

let h: Harness;
before(async () => {
  h = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_TIMEOUT_MS: '5000',
    },
    workers: { pollMs: 50, brokerSessions: POOL },
  });
});
after(() => h?.close());

type Stream = OwnRedisConnection;

describe('the broker session pool across tenants (decision 0080)', { skip: await redisSkipReason() }, () => {
  test("a tenant with more broker connections than the pool keeps costs another tenant's deliveries nothing", async (t) => {
    const tenantA = await makeSignedInTenant(h);
    const tenantB = await makeSignedInTenant(h);
    const streamsA: Stream[] = [];
    for (let i = 0; i < 8; i++) streamsA.push(await redisConnectionOfItsOwn(h, t, tenantA.session));
    const streamsB = [
      await redisConnectionOfItsOwn(h, t, tenantB.session),
      await redisConnectionOfItsOwn(h, t, tenantB.session),
    ];
    const EVENTS = 10;

    // Both tenants publish at once: 80 deliveries of A over 8 connections, 20 of B over 2, through a
    // pool of 3 sessions, so sessions are evicted while attempts of both tenants want them.
    const publish = (session: TestSession, tenant: string, connections: number) =>
      Promise.all(
        Array.from({ length: EVENTS }, async (_, n) => {
          const answer = await publishEvent(h, session, { type: 'order.paid', data: { tenant, n } });
          assert.equal(answer.body.deliveries, connections, `${tenant}'s event does not fan out to all`);
          return answer.body.id;
        }),
      );
    const [eventsA, eventsB] = await Promise.all([
      publish(tenantA.session, 'A', streamsA.length),
      publish(tenantB.session, 'B', streamsB.length),
    ]);

    const check = async (session: TestSession, tenant: string, streams: Stream[], events: string[]) => {
      for (const stream of streams) {
        const log = await waitForDeliveries(
          h,
          session,
          stream.id,
          { settled: EVENTS },
          { timeoutMs: 60_000 },
        );
        assert.deepEqual(
          log.map((d) => d.status),
          Array.from({ length: EVENTS }, () => 'delivered'),
          `${tenant}: a delivery to ${stream.username} did not end delivered`,
        );
        const failed = log.flatMap((d) => d.attempts).filter((attempt) => attempt.error !== null);
        assert.deepEqual(
          failed.map((attempt) => attempt.errorDetail),
          [],
          `${tenant}: an evicted session failed attempts to ${stream.username}`,
        );
        const received = (await stream.reader.entries()).map((entry) => entry.field('webhook-id'));
        assert.deepEqual(
          [...new Set(received)].sort(),
          [...events].sort(),
          `${tenant}: the stream of ${stream.username} did not get every event`,
        );
      }
    };
    await check(tenantB.session, 'B', streamsB, eventsB);
    await check(tenantA.session, 'A', streamsA, eventsA);

    // Every one of the 10 connections had a session; the bound closed all but 3 of them.
    const sessionsOf = await redisSessionCounter(t);
    const usernames = [...streamsA, ...streamsB].map((stream) => stream.username);
    let open = -1;
    await waitUntil(
      async () => {
        open = await sessionsOf(...usernames);
        return open <= POOL.max;
      },
      { message: () => `at most ${POOL.max} sessions kept open (${open} are)` },
    );
  });
});
