import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { runCli, startServe, startWorker, type RunningServer } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// `hubgate serve` and `hubgate worker` as the processes they are in production, stopped with SIGTERM
// while a delivery attempt and a request are in flight (docs/decisions/0054-graceful-shutdown.md).
// On PGlite the embedded data directory, restarted in place; on PostgreSQL a shared database.

interface Session {
  cookie: string;
  csrfToken: string;
}

interface LogEntry {
  id: string;
  eventId: string;
  status: string;
  attemptCount: number;
  attempts: Array<{ number: number; error: string | null; responseStatus: number | null }>;
}

const PASSWORD = 'correct horse battery staple';
let env: Record<string, string>;
let testDatabase: TestDatabase | undefined;
let platformSecret: string;
const running: RunningServer[] = [];

before(async () => {
  const common = {
    HUBGATE_SECRET_KEY: randomBytes(32).toString('base64'),
    DELIVERY_ALLOW_HTTP: 'true',
    DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
    // A cut attempt's claim runs out after 2 × 2 s + 5 s, and its retry is due a second later.
    DELIVERY_TIMEOUT_MS: '2000',
    DELIVERY_RETRY_SCHEDULE: '1,1,1',
  };
  if (ENGINE === 'postgres') {
    testDatabase = await createTestDatabase();
    if (testDatabase.target.kind !== 'postgres') throw new Error('unreachable');
    env = { ...common, DATABASE_URL: testDatabase.target.url };
  } else {
    env = { ...common, DATA_DIR: join(mkdtempSync(join(tmpdir(), 'hubgate-shutdown-')), 'data') };
  }
  // Before any serve: an embedded data directory is one process's at a time.
  const created = await runCli(['platform-key', 'create', '--name', 'shutdown test'], env);
  assert.equal(created.code, 0, `a platform key is created: ${created.stderr}`);
  platformSecret = (JSON.parse(created.stdout) as { secret: string }).secret;
});

after(async () => {
  await Promise.all(running.map((server) => server.stop()));
  await testDatabase?.drop();
});

/** `hubgate serve` on the file's database, stopped when the test ends (and at the latest with the file). */
async function serve(t: TestContext, extra: Record<string, string> = {}): Promise<RunningServer> {
  const server = await startServe({ ...env, ...extra }, t);
  running.push(server);
  return server;
}

async function call<T>(
  server: RunningServer,
  method: string,
  path: string,
  auth: { token?: string; session?: Session },
  body?: unknown,
): Promise<{ status: number; body: T; text: string }> {
  const headers: Record<string, string> = {};
  if (auth.token) headers.authorization = `Bearer ${auth.token}`;
  if (auth.session) {
    headers.cookie = auth.session.cookie;
    if (method !== 'GET') headers['x-csrf-token'] = auth.session.csrfToken;
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : null) as T, text };
}

/** A tenant with a signed-in admin and a webhook connection to `url`, made through the API. */
async function connectionTo(
  server: RunningServer,
  url: string,
): Promise<{ session: Session; connectionId: string }> {
  const token = platformSecret;
  const tenant = await call<{ id: string }>(
    server,
    'POST',
    '/api/v1/platform/tenants',
    { token },
    {
      name: `Shutdown ${randomBytes(3).toString('hex')}`,
      entitlements: ['integrations', 'integration_hub'],
    },
  );
  assert.equal(tenant.status, 201, tenant.text);
  const email = `admin-${randomBytes(4).toString('hex')}@example.com`;
  const user = await call(
    server,
    'POST',
    `/api/v1/platform/tenants/${tenant.body.id}/users`,
    { token },
    {
      email,
      role: 'COMPANY_IT_ADMIN',
      password: PASSWORD,
    },
  );
  assert.equal(user.status, 201, user.text);
  const login = await fetch(`${server.baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  assert.equal(login.status, 200, 'the admin signs in');
  const session = {
    cookie: login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; '),
    csrfToken: ((await login.json()) as { csrfToken: string }).csrfToken,
  };
  const connection = await call<{ id: string }>(
    server,
    'POST',
    '/api/v1/integrations/connections',
    { session },
    { connectorKey: 'webhook', displayName: 'shutdown', url },
  );
  assert.equal(connection.status, 201, connection.text);
  const bound = await call(
    server,
    'PUT',
    `/api/v1/integrations/connections/${connection.body.id}/credentials`,
    { session },
    {},
  );
  assert.equal(bound.status, 200, bound.text);
  return { session, connectionId: connection.body.id };
}

async function publish(server: RunningServer, session: Session, n: number): Promise<string> {
  const published = await call<{ id: string; deliveries: number }>(
    server,
    'POST',
    '/api/v1/integrations/events',
    { session },
    { type: 'shutdown.test', data: { n } },
  );
  assert.equal(published.status, 202, published.text);
  assert.equal(published.body.deliveries, 1, 'the event goes to the one webhook');
  return published.body.id;
}

async function eventLog(server: RunningServer, session: Session, connectionId: string): Promise<LogEntry[]> {
  const page = await call<{ data: LogEntry[] }>(
    server,
    'GET',
    `/api/v1/integrations/connections/${connectionId}/events?limit=100`,
    { session },
  );
  assert.equal(page.status, 200, page.text);
  return page.body.data;
}

/** Whether a new TCP connection to the server's port is accepted now. */
function accepts(baseUrl: string): Promise<boolean> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A POST sent in two parts on its own connection: the headers and half the body now, the rest on
 * `finish`. `started` resolves once the server has the request (its `100 Continue`): from then on it
 * is in flight, where a connection the server had not read yet would be idle.
 */
function slowPost(server: RunningServer, path: string, session: Session, body: string) {
  const { hostname, port } = new URL(server.baseUrl);
  const socket: Socket = connect({ host: hostname, port: Number(port) });
  let answer = '';
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
  const ended = new Promise<string>((resolve) => socket.on('close', () => resolve(answer)));
  const half = Math.floor(body.length / 2);
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\ncookie: ${session.cookie}\r\n` +
      `x-csrf-token: ${session.csrfToken}\r\nexpect: 100-continue\r\n\r\n${body.slice(0, half)}`,
  );
  return {
    started: () =>
      waitUntil(() => answer.startsWith('HTTP/1.1 100 Continue'), { message: 'the server has the request' }),
    finish: (): Promise<string> => {
      socket.write(body.slice(half));
      return ended;
    },
  };
}

test('SIGTERM: the port closes at once, the attempt and the request in flight finish, exit 0, nothing lost', async (t) => {
  const receiver = await startReceiver(t, (_request, _index, response) => {
    setTimeout(() => response.end('ok'), 2_000);
  });
  // The receiver's 2 s well inside the attempt's timeout.
  const slow = { DELIVERY_TIMEOUT_MS: '10000' };
  const first = await serve(t, { ...slow, SHUTDOWN_GRACE_MS: '20000' });
  const { session, connectionId } = await connectionTo(first, receiver.url());
  const inFlight = await publish(first, session, 1);
  await receiver.waitFor(1);
  // A request whose body is still coming when the signal arrives, on a connection of its own.
  const request = slowPost(
    first,
    '/api/v1/integrations/events',
    session,
    JSON.stringify({ type: 'shutdown.test', data: { n: 2, during: 'shutdown' } }),
  );
  await request.started();
  // fetch kept the connection of the publish alive, idle now: it must not hold the shutdown open.

  const signalledAt = Date.now();
  const exited = first.stop();
  await waitUntil(async () => !(await accepts(first.baseUrl)), {
    message: 'the port refuses new connections after SIGTERM',
    timeoutMs: 1_500,
  });
  const refusedAfter = Date.now() - signalledAt;
  assert.ok(refusedAfter < 1_500, `the port refused connections ${refusedAfter} ms after SIGTERM`);
  assert.equal(receiver.received.length, 1, 'no other attempt started after the signal');

  const answer = await request.finish();
  assert.match(answer, /\r\n\r\nHTTP\/1\.1 202 /, `the request in flight gets its answer: ${answer}`);
  assert.match(answer, /\r\nconnection: close\r\n/i, 'and the connection it came on is closed after it');

  assert.equal(await exited, 0, `serve exits 0:\n${first.output()}`);
  const tookMs = Date.now() - signalledAt;
  t.diagnostic(`refused new connections after ${refusedAfter} ms, exited after ${tookMs} ms`);
  assert.ok(
    tookMs < 10_000,
    `serve waited for its work, not for the grace or an idle connection (${tookMs} ms)`,
  );
  assert.match(first.output(), /shutting down/, 'the shutdown is logged');
  assert.doesNotMatch(first.output(), /grace ran out/, 'nothing was cut');
  for (const secret of [platformSecret, PASSWORD, session.csrfToken]) {
    assert.ok(!first.output().includes(secret), 'a secret this test made is in the log of serve');
  }

  // The next start finds the attempt recorded, and sends the event published during the shutdown.
  const second = await serve(t, slow);
  let seen: LogEntry[] = [];
  const log = await waitUntil(
    async () => {
      seen = await eventLog(second, session, connectionId);
      return seen.length === 2 && seen.every((e) => e.status === 'delivered') && seen;
    },
    {
      message: () => `both events delivered after the restart: ${JSON.stringify(seen)}\n${second.output()}`,
      timeoutMs: 30_000,
    },
  );
  const finished = log.find((e) => e.eventId === inFlight);
  assert.ok(finished, 'the event in flight is in the log');
  assert.deepEqual(
    finished.attempts.map((a) => [a.error, a.responseStatus]),
    [[null, 200]],
    'the attempt in flight finished and was recorded: one attempt, answered 200',
  );
  const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
  assert.equal(new Set(ids).size, 2, 'the receiver got both events');
  assert.equal(ids.length, 2, 'and neither twice');
  assert.equal(await second.stop(), 0, 'the second serve exits 0 too');
});

test('SIGTERM with an attempt that outlasts the grace: exit 0 after the grace, and the delivery is taken again', async (t) => {
  let answering = false;
  const receiver = await startReceiver(t, (_request, _index, response) => {
    // Held until the test lets it answer: the first attempt never gets an answer.
    if (answering) response.end('ok');
  });
  const first = await serve(t, { SHUTDOWN_GRACE_MS: '1000' });
  const { session, connectionId } = await connectionTo(first, receiver.url());
  await publish(first, session, 3);
  await receiver.waitFor(1);

  const signalledAt = Date.now();
  assert.equal(await first.stop(), 0, `serve exits 0 when the grace runs out:\n${first.output()}`);
  const tookMs = Date.now() - signalledAt;
  t.diagnostic(`exited ${tookMs} ms after SIGTERM with a grace of 1000 ms`);
  assert.ok(tookMs >= 900 && tookMs < 6_000, `serve exits soon after the grace (${tookMs} ms)`);
  assert.match(first.output(), /shutdown grace ran out/, 'the log says work was cut');

  answering = true;
  // PostgreSQL: another process, a worker, takes the delivery; embedded: the next start of serve.
  const next = ENGINE === 'postgres' ? await startWorker(env, t) : await serve(t);
  if (ENGINE === 'postgres') running.push(next);
  const reader = ENGINE === 'postgres' ? await serve(t) : next;
  const log = await waitUntil(
    async () => {
      const [entry] = await eventLog(reader, session, connectionId);
      return entry?.status === 'delivered' && entry;
    },
    { message: 'the cut delivery is taken again and delivered', timeoutMs: 30_000 },
  );
  assert.deepEqual(
    log.attempts.map((a) => [a.number, a.error, a.responseStatus]),
    [
      [1, 'interrupted', null],
      [2, null, 200],
    ],
    'the cut attempt is recorded as interrupted, and the next one delivered',
  );
  assert.equal(receiver.received.length, 2, 'the receiver got the cut attempt and the one that delivered');
});
