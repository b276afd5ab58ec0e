import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test, type TestContext } from 'node:test';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import {
  REDIS_URL,
  redisAdmin,
  redisSkipReason,
  redisUser,
  streamReader,
  type StreamReader,
} from '../helpers/redis.js';
import { waitUntil } from '../helpers/wait.js';

// Decision 0080: a worker keeps at most `max` broker sessions; past it the least recently used is
// closed. One tenant with many broker connections must cost another tenant nothing but reconnects:
// every delivery of both arrives and is delivered. The pool here keeps 3 sessions (256 in production)
// and never closes one for idleness, so every session closed is one the bound evicted. Each connection
// logs in to Redis as an ACL user of its own, so CLIENT LIST shows its sessions (Redis is shared).

const CONNECTIONS = '/api/v1/integrations/connections';
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

interface Stream {
  id: string;
  username: string;
  reader: StreamReader;
}

/** A redis connection to a stream of its own, logged in as an ACL user of its own. */
async function ownStream(t: TestContext, session: TestSession): Promise<Stream> {
  const reader = await streamReader(t);
  const password = `pw-${randomBytes(6).toString('hex')}`;
  const username = await redisUser(t, ['on', `>${password}`, `~${reader.stream}`, '+xadd']);
  const created = await h.request<{ id: string }>('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'redis', displayName: username, url: REDIS_URL, stream: reader.stream },
  });
  assert.equal(created.status, 201, `creating a redis connection: ${created.text}`);
  const bound = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
    session,
    body: { username, password },
  });
  assert.equal(bound.status, 200, `binding the redis credentials: ${bound.text}`);
  return { id: created.body.id, username, reader };
}

describe('the broker session pool across tenants (decision 0080)', { skip: await redisSkipReason() }, () => {
  test("a tenant with more broker connections than the pool keeps costs another tenant's deliveries nothing", async (t) => {
    const tenantA = await makeSignedInTenant(h);
    const tenantB = await makeSignedInTenant(h);
    const streamsA: Stream[] = [];
    for (let i = 0; i < 8; i++) streamsA.push(await ownStream(t, tenantA.session));
    const streamsB = [await ownStream(t, tenantB.session), await ownStream(t, tenantB.session)];
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
    const admin = await redisAdmin(t);
    const users = new Set([...streamsA, ...streamsB].map((stream) => `user=${stream.username}`));
    let open = -1;
    await waitUntil(
      async () => {
        const list = String(await admin.sendCommand(['CLIENT', 'LIST'])).split('\n');
        open = list.filter((line) => line.split(' ').some((field) => users.has(field))).length;
        return open <= POOL.max;
      },
      { message: () => `at most ${POOL.max} sessions kept open (${open} are)` },
    );
  });
});
