import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test, type TestContext } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { publishEvent, waitForDeliveries, type Delivery } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { bindCredentials, createConnection, pause } from '../helpers/operate.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// docs/decisions/0063: one deadline per delivery attempt, DELIVERY_TIMEOUT_MS from its start and
// before its claim runs out, covering every call the attempt makes. The hard case is a receiver
// behind OAuth2 client credentials: an attempt may fetch a token, send, be refused with 401, fetch
// another token and send again, four calls that each took the whole timeout before. Here the token
// endpoint and the receiver are slow (each call most of the timeout) and the receiver always
// answers 401; both are plain HTTP servers on 127.0.0.1 that note when each call started and ended.

interface Call {
  index: number;
  startedAt: number;
  endedAt: number | null;
}

/** An HTTP server on 127.0.0.1 that waits `delayMs` before answering each request as `answer` says. */
async function slowServer(
  t: TestContext,
  delayMs: number,
  answer: (req: IncomingMessage, res: ServerResponse, index: number) => void,
) {
  const calls: Call[] = [];
  const server = createServer((req, res) => {
    const call: Call = { index: calls.length, startedAt: Date.now(), endedAt: null };
    calls.push(call);
    // Ended when answered, or when the client gave up on it (the socket closed under it).
    res.on('close', () => (call.endedAt = Date.now()));
    req.resume();
    const timer = setTimeout(() => answer(req, res, call.index), delayMs);
    res.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { calls, url: (path: string) => `http://127.0.0.1:${port}${path}` };
}

/** A token endpoint of the client credentials grant that hands out a new token per call, slowly. */
const tokenEndpoint = (t: TestContext, delayMs: number) =>
  slowServer(t, delayMs, (_req, res, index) => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        access_token: `tok-${index}-${randomBytes(6).toString('hex')}`,
        token_type: 'Bearer',
      }),
    );
  });

/** A receiver that refuses every token, slowly: each attempt takes the 401-then-refetch path. */
const refusingReceiver = (t: TestContext, delayMs: number) =>
  slowServer(t, delayMs, (_req, res) => {
    res.statusCode = 401;
    res.end('{"error":"invalid_token"}');
  });

/** A webhook connection to `receiverUrl`, behind OAuth2 client credentials from `tokenUrl`. */
async function oauthHook(h: Harness, session: TestSession, receiverUrl: string, tokenUrl: string) {
  const c = await createConnection(h, session, {
    connectorKey: 'webhook',
    displayName: 'slow oauth receiver',
    url: receiverUrl,
  });
  await bindCredentials(h, session, c.id, {
    oauth2ClientCredentials: { tokenUrl, clientId: 'deadline-client', clientSecret: 'deadline-secret-0063' },
  });
  return c.id;
}

const ENV = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
// The test process's event loop runs the app and the servers: a server notes a call a little after
// the app made it. This much lag is allowed for, far less than what the tests tell apart.
const LAG_MS = 400;

describe('an attempt ends at its deadline', () => {
  const TIMEOUT_MS = 2000;
  // Each call takes 60 % of the timeout: token, send (401), token, send would take 240 % of it.
  const DELAY_MS = 1200;
  let h: Harness;
  before(async () => {
    h = await startHarness({
      env: { ...ENV, DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS), DELIVERY_RETRY_SCHEDULE: '600' },
      workers: { pollMs: 50 },
    });
  });
  after(() => h.close());

  test('token requests and sends together: none starts after the deadline, and a pause answered then is followed by nothing', async (t) => {
    const tokens = await tokenEndpoint(t, DELAY_MS);
    const receiver = await refusingReceiver(t, DELAY_MS);
    const { session } = await makeSignedInTenant(h);
    const id = await oauthHook(h, session, receiver.url('/hook'), tokens.url('/token'));
    await publishEvent(h, session, { type: 'deadline.test' });

    // The attempt is under way once it asks for a token; the pause then waits for it to end.
    await waitUntil(() => tokens.calls.length > 0, { message: 'the attempt asking for a token' });
    await pause(h, session, id);
    const answeredAt = Date.now();

    // The pause answered once the attempt was recorded: it is in the log now.
    const [delivery] = await waitForDeliveries(
      h,
      session,
      id,
      (log: Delivery[]) => log.length === 1 && log[0]!.attempts.length === 1,
    );
    const attempt = delivery!.attempts[0]!;
    const deadline = new Date(attempt.startedAt).getTime() + TIMEOUT_MS;
    t.diagnostic(
      `attempt: ${attempt.error} after ${attempt.durationMs} ms; pause answered ${answeredAt - deadline} ms after the deadline; ` +
        `token calls at ${tokens.calls.map((c) => c.startedAt - deadline).join(', ')}, ` +
        `receiver calls at ${receiver.calls.map((c) => c.startedAt - deadline).join(', ')} ms from it`,
    );
    for (const [who, calls] of [
      ['token endpoint', tokens.calls],
      ['receiver', receiver.calls],
    ] as const) {
      for (const call of calls) {
        assert.ok(
          call.startedAt <= deadline + LAG_MS,
          `the ${who}'s call ${call.index + 1} started ${call.startedAt - deadline} ms after the attempt's deadline`,
        );
        assert.ok(
          call.endedAt !== null && call.endedAt <= answeredAt + LAG_MS,
          `the ${who}'s call ${call.index + 1} was still open when the pause answered`,
        );
      }
    }
    assert.ok(
      answeredAt <= deadline + 1500,
      `the pause answered ${answeredAt - deadline} ms after the attempt's deadline`,
    );
    assert.equal(attempt.error, 'timeout', `the attempt cut at its deadline ended ${attempt.error}`);
    assert.ok(
      attempt.durationMs <= TIMEOUT_MS + LAG_MS,
      `the attempt took ${attempt.durationMs} ms, more than DELIVERY_TIMEOUT_MS`,
    );
    assert.equal(delivery!.status, 'skipped', `the paused delivery is ${delivery!.status}`);
    const after = [...tokens.calls, ...receiver.calls].filter((c) => c.startedAt > answeredAt);
    assert.equal(after.length, 0, `${after.length} calls started after the pause answered`);
  });
});

// Two apps on one PostgreSQL database play two processes, each with its workers; the lease of a
// claim is 2 × DELIVERY_TIMEOUT_MS + 5 s. Before, an attempt's four calls could take 4 × the timeout,
// and the other process took the delivery over while the last request was open.
const skip = ENGINE !== 'postgres' && 'two processes share a database on PostgreSQL only';
describe('an attempt never outlasts its claim', { skip }, () => {
  const TIMEOUT_MS = 4000;
  // 3 × 3.6 s = 10.8 s before the last send, which then stays open past the lease's 13 s.
  const DELAY_MS = 3600;
  const keyring = createKeyring(randomBytes(32));
  let db: TestDatabase;
  let a: Harness;
  let b: Harness;
  before(async () => {
    if (skip) return;
    db = await createTestDatabase();
    // One retry at once: a delivery taken over is sent again straight away, as it was in production.
    const env = { ...ENV, DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS), DELIVERY_RETRY_SCHEDULE: '0' };
    a = await startHarness({ testDatabase: db, keyring, env, workers: { pollMs: 50 } });
    const other = await db.openAnother();
    b = await startHarness({
      testDatabase: { ...db, database: other },
      keyring,
      env,
      workers: { pollMs: 50 },
    });
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await db?.drop();
  });

  test('no other process takes a delivery over while a request of its attempt is open', async (t) => {
    const tokens = await tokenEndpoint(t, DELAY_MS);
    const receiver = await refusingReceiver(t, DELAY_MS);
    const { session } = await makeSignedInTenant(a);
    const id = await oauthHook(a, session, receiver.url('/hook'), tokens.url('/token'));
    await publishEvent(a, session, { type: 'deadline.processes' });

    // Both attempts ran (the schedule has one retry) and the delivery ended.
    const [delivery] = await waitForDeliveries(a, session, id, { settled: 1 }, { timeoutMs: 60_000 });
    const attempts = [...delivery.attempts].sort((x, y) => x.number - y.number);
    const calls = [...receiver.calls].sort((x, y) => x.startedAt - y.startedAt);
    t.diagnostic(
      `attempts: ${attempts.map((x) => `${x.number} ${x.error} ${x.durationMs} ms`).join('; ')}; receiver calls: ` +
        calls
          .map((c) => `${c.startedAt - calls[0]!.startedAt}–${(c.endedAt ?? NaN) - calls[0]!.startedAt}`)
          .join(', '),
    );
    assert.deepEqual(
      attempts.filter((x) => x.error === 'interrupted').map((x) => x.number),
      [],
      'an attempt was taken over as interrupted though its worker lived',
    );
    for (const [i, call] of calls.entries()) {
      const next = calls[i + 1];
      if (!next) break;
      assert.ok(
        call.endedAt !== null && next.startedAt >= call.endedAt - 100,
        `a request started ${call.endedAt === null ? 'while another never ended' : `${call.endedAt - next.startedAt} ms before the one open ended`}`,
      );
    }
    for (const call of calls) {
      const owner = attempts.find((x) => {
        const start = new Date(x.startedAt).getTime();
        return call.startedAt >= start - LAG_MS && call.startedAt <= start + TIMEOUT_MS + LAG_MS;
      });
      assert.ok(owner, `the receiver's call ${call.index + 1} started outside every attempt's time`);
    }
    assert.ok(calls.length > 0, 'the receiver was never called');
  });
});
