import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test, type TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createKeyring } from '../../src/crypto/keyring.js';
import { createPlatformKey } from '../../src/keys/platform-keys.js';
import { startServe, startWorker, type RunningServer } from '../helpers/cli.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// Operating a connection while events pour in through several processes (docs/api/connections.md: revoke,
// pause, resume, throttle, automatic pause; docs/api/events.md): the answer to revoke or pause is a line in time. Nothing
// reaches the receiver after it, whatever was being published, grouped, claimed or sent meanwhile in
// any process; deliveries that had not gone are cancelled (revoke) or skipped (pause), and a throttle
// holds for the processes together. `hubgate serve` ×2 and `hubgate worker` ×1 on one PostgreSQL
// database; PostgreSQL run only (the embedded database belongs to one process).
//
// Every instant is performance.now() in this process: the receiver notes when a request reached it,
// and the client notes when an answer came back. A receiver answers only after it has noted the
// request, so a request whose answer the hub awaited before answering revoke or pause is always
// noted before that answer is: a request noted after it is one the hub sent (or was still sending)
// after it had said the connection was stopped.
if (ENGINE === 'postgres') {
  const secretKey = randomBytes(32);
  const PASSWORD = 'a long passphrase for operate races';
  const TIMEOUT_MS = 2_000;
  const PAUSE_AFTER_FAILURES = 5;
  // Statuses a delivery leaves by itself; anything else is final (or skipped, until a resume).
  const UNSETTLED = new Set(['pending', 'delivering', 'retrying']);

  let db: TestDatabase;
  let databaseUrl: string;
  let plt: string;
  let a: RunningServer;
  let b: RunningServer;
  const running = new Set<RunningServer>();

  const env = () => ({
    DATABASE_URL: databaseUrl,
    HUBGATE_SECRET_KEY: secretKey.toString('base64'),
    DELIVERY_ALLOW_HTTP: 'true',
    DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
    DELIVERY_TIMEOUT_MS: String(TIMEOUT_MS),
    DELIVERY_RETRY_SCHEDULE: '1',
    RATE_LIMIT_PER_MINUTE: '1000000',
    CONNECTION_PAUSE_AFTER_FAILURES: String(PAUSE_AFTER_FAILURES),
    CONNECTION_PAUSE_AFTER_SECONDS: '0',
  });

  /** SIGTERM, then SIGKILL if the process has not exited 10 s later. */
  async function stop(proc: RunningServer): Promise<void> {
    const kill = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
    try {
      await proc.stop();
    } finally {
      clearTimeout(kill);
      running.delete(proc);
    }
  }

  before(async () => {
    db = await createTestDatabase();
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    databaseUrl = db.target.url;
    plt = (
      await createPlatformKey(
        db.database.kysely,
        createKeyring(secretKey),
        { name: 'ops', expiresAt: null },
        new Date(),
      )
    ).secret;
    // Few slots in each serve process: part of every publish is sent straight from the process that
    // wrote it (direct dispatch), the rest is claimed from the table by the other processes.
    const results = await Promise.allSettled([
      startServe({ ...env(), DELIVERY_CONCURRENCY: '4' }),
      startServe({ ...env(), DELIVERY_CONCURRENCY: '4' }),
      startWorker({ ...env(), DELIVERY_CONCURRENCY: '8' }),
    ]);
    for (const r of results) if (r.status === 'fulfilled') running.add(r.value);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    [a, b] = results.map((r) => (r as PromiseFulfilledResult<RunningServer>).value) as [
      RunningServer,
      RunningServer,
    ];
  });
  after(async () => {
    await Promise.all([...running].map(stop));
    await db?.drop();
  });

  /**
   * For a failure message: what the running processes logged about the request IDs in `answers`,
   * and their last warnings and errors (every request is logged at info: those lines are left out).
   */
  const outputs = (...answers: string[]) => {
    const ids = answers.flatMap((answer) => answer.match(/req_[A-Za-z0-9]+/g) ?? []);
    return [...running]
      .map((p) => {
        const lines = p.output().split('\n');
        const about = lines.filter((line) => ids.some((id) => line.includes(id)));
        const worse = lines.filter((line) => !line.includes('"level":30') && line.trim() !== '');
        return `--- pid ${p.child.pid}\n${[...about, ...worse.slice(-8)].join('\n').slice(-3000)}`;
      })
      .join('\n');
  };

  // ---------------------------------------------------------------------------------------------
  // HTTP to the hub

  interface Answer {
    status: number;
    text: string;
    /** When the answer's head came back (performance.now()). */
    answeredAt: number;
    sentAt: number;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
    body: any;
  }
  interface Session {
    cookie: string;
    csrfToken: string;
  }

  async function call(
    server: RunningServer,
    method: string,
    path: string,
    options: { token?: string; session?: Session; body?: unknown } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.session) {
      headers.cookie = options.session.cookie;
      if (method !== 'GET') headers['x-csrf-token'] = options.session.csrfToken;
    }
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const sentAt = performance.now();
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const answeredAt = performance.now();
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: response.status, text, answeredAt, sentAt, body };
  }

  /**
   * A tenant of its own (so its only connection is the one under test) with an operator key;
   * `session` for what a key may not do (binding credentials).
   */
  async function tenant(name: string) {
    const created = await call(a, 'POST', '/api/v1/platform/tenants', {
      token: plt,
      body: { name, entitlements: ['integrations'] },
    });
    assert.equal(created.status, 201, `creating a tenant: ${created.text}`);
    const email = `admin-${randomBytes(4).toString('hex')}@example.com`;
    const user = await call(a, 'POST', `/api/v1/platform/tenants/${created.body.id}/users`, {
      token: plt,
      body: { email, role: 'COMPANY_IT_ADMIN', password: PASSWORD },
    });
    assert.equal(user.status, 201, `creating a user: ${user.text}`);
    const login = await fetch(`${b.baseUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const loginText = await login.text();
    assert.equal(login.status, 200, `signing in: ${loginText}`);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const session: Session = {
      cookie,
      csrfToken: (JSON.parse(loginText) as { csrfToken: string }).csrfToken,
    };
    const key = await call(a, 'POST', '/api/v1/company/api-keys', {
      session,
      body: {
        name: 'races',
        scopes: ['integrations:OPERATOR'],
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    assert.equal(key.status, 201, `creating a key: ${key.text}`);
    return { session, token: key.body.secret as string };
  }

  /** A webhook connection to `url` (config `extra` added) with a generated signing secret bound. */
  async function webhookConnection(
    session: Session,
    url: string,
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const created = await call(b, 'POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: 'webhook', displayName: 'races', url, ...extra },
    });
    assert.equal(created.status, 201, `creating a connection: ${created.text}`);
    const bound = await call(a, 'PUT', `/api/v1/integrations/connections/${created.body.id}/credentials`, {
      session,
      body: {},
    });
    assert.equal(bound.status, 200, `binding credentials: ${bound.text}`);
    return created.body.id as string;
  }

  interface Attempt {
    startedAt: string;
    responseStatus: number | null;
    error: string | null;
  }
  interface LogEntry {
    id: string;
    eventId: string;
    status: string;
    attemptCount: number;
    attempts: Attempt[];
  }

  /** Every delivery of a connection, through the event log API, page by page (bounded). */
  async function eventLog(server: RunningServer, token: string, connectionId: string): Promise<LogEntry[]> {
    const entries: LogEntry[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 200; page++) {
      const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const r = await call(
        server,
        'GET',
        `/api/v1/integrations/connections/${connectionId}/events?limit=100${query}`,
        { token },
      );
      assert.equal(r.status, 200, `reading the event log: ${r.text}`);
      entries.push(...(r.body.data as LogEntry[]));
      cursor = r.body.nextCursor as string | null;
      if (!cursor) break;
    }
    return entries;
  }

  /**
   * Reads the log until `done` holds or `ms` have passed; answers the last read and whether it held,
   * so a test reports every figure before it fails on any.
   */
  async function logWhen(
    token: string,
    connectionId: string,
    done: (entries: LogEntry[]) => boolean,
    ms: number,
  ): Promise<{ entries: LogEntry[]; held: boolean }> {
    const deadline = performance.now() + ms;
    for (let i = 0; i < 1_000; i++) {
      const entries = await eventLog(i % 2 ? a : b, token, connectionId);
      if (done(entries)) return { entries, held: true };
      if (performance.now() > deadline) return { entries, held: false };
      await delay(250);
    }
    return { entries: await eventLog(a, token, connectionId), held: false };
  }

  const countBy = <T>(items: T[], key: (item: T) => string) =>
    items.reduce<Record<string, number>>((counts, item) => {
      counts[key(item)] = (counts[key(item)] ?? 0) + 1;
      return counts;
    }, {});

  // ---------------------------------------------------------------------------------------------
  // A receiver that notes when each request reached it

  interface Arrival {
    webhookId: string;
    /** The request's head was read. */
    headersAt: number;
    /** Its body had been read in full (null: the sender gave up before the end). */
    endAt: number | null;
  }
  /** The last moment anything of the request reached the receiver. */
  const reached = (arrival: Arrival) => arrival.endAt ?? arrival.headersAt;

  type Answering = (response: ServerResponse, index: number) => void;
  const answerOk: Answering = (res) => res.end('ok');
  /** 200 after 20–50 ms: sends stay in flight for a while. */
  const answerOkSlowly: Answering = (res, i) => {
    setTimeout(() => res.end('ok'), 20 + ((i * 7) % 31));
  };
  const answerStatus =
    (status: number): Answering =>
    (res) => {
      res.statusCode = status;
      res.end();
    };

  async function timedReceiver(t: TestContext, answer: Answering) {
    const arrivals: Arrival[] = [];
    const server = createServer((req, res) => {
      const arrival: Arrival = {
        webhookId: String(req.headers['webhook-id'] ?? ''),
        headersAt: performance.now(),
        endAt: null,
      };
      const index = arrivals.push(arrival) - 1;
      req.resume();
      req.on('end', () => {
        arrival.endAt = performance.now();
        answer(res, index);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    t.after(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return {
      url: `http://127.0.0.1:${port}/hook`,
      arrivals,
      ids: () => new Set(arrivals.map((r) => r.webhookId)),
      lastAt: () => arrivals.reduce((last, r) => Math.max(last, reached(r)), Number.NEGATIVE_INFINITY),
    };
  }
  type TimedReceiver = Awaited<ReturnType<typeof timedReceiver>>;

  /**
   * Waits until nothing has reached the receiver for a second and at least `minMs` have passed
   * since `since`: any send still under way has then ended (an attempt lasts at most the timeout).
   * Answers whether it got there (a receiver still being sent to after 30 s is a finding, reported
   * by the assertions on its arrivals).
   */
  async function quiet(receiver: TimedReceiver, since: number, minMs: number): Promise<boolean> {
    const deadline = performance.now() + 30_000;
    for (let i = 0; i < 1_000 && performance.now() < deadline; i++) {
      const now = performance.now();
      if (now >= since + minMs && now - Math.max(receiver.lastAt(), since) >= 1_000) return true;
      await delay(100);
    }
    return false;
  }

  // ---------------------------------------------------------------------------------------------
  // Publishing load

  interface Publish {
    server: 'A' | 'B';
    batch: boolean;
    sentAt: number;
    answeredAt: number;
    status: number;
    events: Array<{ id: string; deliveries: number }>;
    problem?: string;
  }

  /**
   * `publishers` clients publishing in a loop, each through A and B in turn, two of three requests a
   * batch of 2–6 events and one a single event, with a short pause between requests (pacing for a
   * shared 2-core machine), until stopped (at most 60 s and 5,000 requests each).
   */
  function startLoad(token: string, type: string, publishers: number, paceMs = 20) {
    const shots: Publish[] = [];
    let stopped = false;
    const hardStop = performance.now() + 60_000;
    const one = async (p: number) => {
      for (let i = 0; i < 5_000 && !stopped && performance.now() < hardStop; i++) {
        const name = (p + i) % 2 === 0 ? 'A' : 'B';
        const server = name === 'A' ? a : b;
        const batch = (i + p) % 3 !== 0;
        const size = 2 + ((i + p) % 5);
        const sentAt = performance.now();
        try {
          const r = batch
            ? await call(server, 'POST', '/api/v1/integrations/events/batch', {
                token,
                body: { events: Array.from({ length: size }, (_, k) => ({ type, data: { p, i, k } })) },
              })
            : await call(server, 'POST', '/api/v1/integrations/events', {
                token,
                body: { type, data: { p, i } },
              });
          const items: Array<{ id?: string; deliveries?: number; error?: unknown }> =
            r.status !== 202 ? [] : batch ? (r.body?.data ?? []) : [r.body];
          const refused = items.filter((item) => typeof item.id !== 'string');
          shots.push({
            server: name,
            batch,
            sentAt,
            answeredAt: r.answeredAt,
            status: r.status,
            events: items
              .filter((item) => typeof item.id === 'string')
              .map((item) => ({ id: item.id!, deliveries: Number(item.deliveries) })),
            ...(r.status !== 202 || refused.length > 0 ? { problem: r.text.slice(0, 500) } : {}),
          });
        } catch (error) {
          shots.push({
            server: name,
            batch,
            sentAt,
            answeredAt: performance.now(),
            status: 0,
            events: [],
            problem: String(error),
          });
        }
        await delay(paceMs);
      }
    };
    const clients = Array.from({ length: publishers }, (_, p) => one(p));
    return {
      shots,
      events: () => shots.flatMap((s) => s.events),
      stop: async () => {
        stopped = true;
        await Promise.all(clients);
      },
    };
  }
  type Load = ReturnType<typeof startLoad>;

  /** Every request was accepted, and every event of a batch too. */
  function assertPublishing(load: Load) {
    const bad = load.shots.filter((s) => s.problem !== undefined);
    assert.deepEqual(
      bad.map((s) => `${s.server} ${s.batch ? 'batch' : 'single'} ${s.status} ${s.problem}`),
      [],
      `every publish is accepted (202, no event refused in a batch); the processes logged:\n${outputs(...bad.map((s) => s.problem ?? ''))}`,
    );
  }

  /** How long before `answeredAt` the last request that reached the receiver before it did so. */
  const lastOnTime = (receiver: TimedReceiver, answeredAt: number) =>
    Math.round(
      answeredAt -
        receiver.arrivals
          .map(reached)
          .reduce((last, at) => (at <= answeredAt ? Math.max(last, at) : last), 0),
    );

  const offsets = (times: number[], from: number) =>
    times.map((at) => `+${Math.round(at - from)} ms`).join(', ');

  /** Published through both processes, and the receiver has got `arrivals` of them: the load is on. */
  async function loadIsOn(load: Load, receiver: TimedReceiver, arrivals: number) {
    await waitUntil(
      () =>
        receiver.arrivals.length >= arrivals &&
        load.shots.filter((s) => s.server === 'A' && s.status === 202).length >= 5 &&
        load.shots.filter((s) => s.server === 'B' && s.status === 202).length >= 5,
      {
        message: () =>
          `publishes through both processes and ${arrivals} arrivals (${load.shots.length} publishes, ` +
          `${receiver.arrivals.length} arrivals)\n${outputs()}`,
        timeoutMs: 30_000,
      },
    );
  }

  /** Publishing goes on for `ms` after `from`, with requests sent through both processes meanwhile. */
  async function keepPublishing(load: Load, from: number, ms: number) {
    await waitUntil(
      () =>
        performance.now() >= from + ms &&
        load.shots.filter((s) => s.server === 'A' && s.sentAt > from).length >= 3 &&
        load.shots.filter((s) => s.server === 'B' && s.sentAt > from).length >= 3,
      {
        message: () => `publishes through both processes after the change (${load.shots.length} in all)`,
        timeoutMs: 30_000,
      },
    );
  }

  // ---------------------------------------------------------------------------------------------

  const ROUNDS = [
    { via: 'A', answer: answerOk, how: 'answered at once' },
    { via: 'B', answer: answerOkSlowly, how: 'answered after 20–50 ms' },
    { via: 'A', answer: answerOkSlowly, how: 'answered after 20–50 ms' },
  ] as const;

  describe('revoke under publish load through two serve processes and a worker', () => {
    for (const [round, { via, answer, how }] of ROUNDS.entries()) {
      test(`round ${round + 1}, receiver ${how}, revoked through ${via}: nothing reaches the receiver after the revoke answered, and every delivery ends delivered or cancelled`, async (t) => {
        const receiver = await timedReceiver(t, answer);
        const { session, token } = await tenant(`Revoke race ${round + 1}`);
        const connectionId = await webhookConnection(session, receiver.url);

        const load = startLoad(token, 'race.revoke', 4);
        let revoke: Answer | undefined;
        try {
          await loadIsOn(load, receiver, 80);
          revoke = await call(
            via === 'A' ? a : b,
            'POST',
            `/api/v1/integrations/connections/${connectionId}/revoke`,
            { token },
          );
          await keepPublishing(load, revoke.answeredAt, 800);
        } finally {
          await load.stop();
        }
        assert.equal(revoke.status, 200, `revoking the connection: ${revoke.text}\n${outputs(revoke.text)}`);
        const answeredAt = revoke.answeredAt;
        const settledQuiet = await quiet(receiver, answeredAt, TIMEOUT_MS + 500);
        const { entries, held } = await logWhen(
          token,
          connectionId,
          (list) => list.every((e) => !UNSETTLED.has(e.status)),
          20_000,
        );

        const late = receiver.arrivals.filter((r) => reached(r) > answeredAt);
        const events = load.events();
        const fannedOut = events.filter((e) => e.deliveries === 1).map((e) => e.id);
        const after = load.shots.filter((s) => s.sentAt > answeredAt);
        const deliveredAfter = after.flatMap((s) => s.events).filter((e) => e.deliveries !== 0);
        const statuses = countBy(entries, (e) => e.status);
        const received = receiver.ids();
        const deliveredUnseen = entries.filter((e) => e.status === 'delivered' && !received.has(e.eventId));
        const cancelledSeen = entries.filter((e) => e.status === 'cancelled' && received.has(e.eventId));
        t.diagnostic(
          `${load.shots.length} publishes (${events.length} events, ${fannedOut.length} with a delivery); ` +
            `revoke took ${Math.round(revoke.answeredAt - revoke.sentAt)} ms; ${after.length} publishes ` +
            `(${after.flatMap((s) => s.events).length} events) sent after it answered`,
        );
        t.diagnostic(
          `receiver: ${receiver.arrivals.length} requests, ${received.size} events; late arrivals ${late.length}` +
            (late.length ? ` (${offsets(late.map(reached), answeredAt)})` : '') +
            `; the last request on time ended ${lastOnTime(receiver, answeredAt)} ms before the answer` +
            `; quiet ${settledQuiet ? 'reached' : 'NOT reached in 30 s'}`,
        );
        t.diagnostic(
          `log: ${entries.length} deliveries ${JSON.stringify(statuses)}${held ? '' : ' (not settled in 20 s)'}; ` +
            `delivered but never received ${deliveredUnseen.length}; cancelled but received ${cancelledSeen.length}`,
        );

        assertPublishing(load);
        assert.equal(revoke.body.status, 'disabled', 'the revoke answers the connection disabled');
        assert.ok(revoke.body.revokedAt, 'the revoke answers when it was revoked');
        assert.deepEqual(
          late.map((r) => `${r.webhookId} +${(reached(r) - answeredAt).toFixed(1)} ms`),
          [],
          `no request reaches the receiver after the revoke answered (${late.length} late of ${receiver.arrivals.length})`,
        );
        assert.deepEqual(
          deliveredAfter.map((e) => `${e.id}: ${e.deliveries}`),
          [],
          'an event published after the revoke answered gets no delivery to the revoked connection',
        );
        assert.deepEqual(
          entries
            .filter((e) => e.status !== 'delivered' && e.status !== 'cancelled')
            .map((e) => `${e.id} ${e.status}`),
          [],
          'every delivery of the revoked connection ends delivered or cancelled',
        );
        assert.deepEqual(
          deliveredUnseen.map((e) => e.eventId),
          [],
          'every delivery marked delivered reached the receiver (by webhook-id)',
        );
        assert.deepEqual(
          cancelledSeen.map((e) => e.eventId),
          [],
          'a delivery the receiver got (and answered 2xx) is recorded delivered, not cancelled: only what had not been sent is cancelled',
        );
        assert.deepEqual(
          entries.map((e) => e.eventId).sort(),
          [...fannedOut].sort(),
          'the log holds one delivery per event published with a delivery, and no other',
        );
        assert.deepEqual(
          [...received].filter((id) => !fannedOut.includes(id)),
          [],
          'the receiver got only events published with a delivery to it',
        );
      });
    }
  });

  describe('pause under publish load through two serve processes and a worker', () => {
    for (const [round, { via, answer, how }] of ROUNDS.slice(0, 2).entries()) {
      test(`round ${round + 1}, receiver ${how}, paused through ${via}: nothing reaches the receiver after the pause answered, what was not sent is skipped, and resume replays each skipped delivery once`, async (t) => {
        const receiver = await timedReceiver(t, answer);
        const { session, token } = await tenant(`Pause race ${round + 1}`);
        const connectionId = await webhookConnection(session, receiver.url);
        const [pauser, resumer] = via === 'A' ? [a, b] : [b, a];

        const load = startLoad(token, 'race.pause', 4);
        let pause: Answer | undefined;
        try {
          await loadIsOn(load, receiver, 80);
          pause = await call(pauser, 'POST', `/api/v1/integrations/connections/${connectionId}/pause`, {
            token,
          });
          await keepPublishing(load, pause.answeredAt, 800);
        } finally {
          await load.stop();
        }
        assert.equal(pause.status, 200, `pausing the connection: ${pause.text}\n${outputs(pause.text)}`);
        const answeredAt = pause.answeredAt;
        const settledQuiet = await quiet(receiver, answeredAt, TIMEOUT_MS + 500);
        const paused = await logWhen(
          token,
          connectionId,
          (list) => list.every((e) => !UNSETTLED.has(e.status)),
          20_000,
        );

        const late = receiver.arrivals.filter((r) => reached(r) > answeredAt);
        const events = load.events();
        const after = load.shots.filter((s) => s.sentAt > answeredAt).flatMap((s) => s.events);
        const statusOf = new Map(paused.entries.map((e) => [e.eventId, e.status]));
        const receivedBefore = receiver.ids();
        const arrivalsBefore = receiver.arrivals.length;
        const skipped = paused.entries.filter((e) => e.status === 'skipped');
        const skippedButSent = skipped.filter((e) => receivedBefore.has(e.eventId));
        const deliveredUnseen = paused.entries.filter(
          (e) => e.status === 'delivered' && !receivedBefore.has(e.eventId),
        );
        t.diagnostic(
          `${load.shots.length} publishes (${events.length} events); pause took ` +
            `${Math.round(pause.answeredAt - pause.sentAt)} ms; ${after.length} events published after it answered`,
        );
        t.diagnostic(
          `receiver: ${arrivalsBefore} requests, ${receivedBefore.size} events before the resume; late arrivals ` +
            `${late.length}${late.length ? ` (${offsets(late.map(reached), answeredAt)})` : ''}; the last ` +
            `request on time ended ${lastOnTime(receiver, answeredAt)} ms before the answer; quiet ` +
            `${settledQuiet ? 'reached' : 'NOT reached in 30 s'}`,
        );
        t.diagnostic(
          `log while paused: ${paused.entries.length} deliveries ${JSON.stringify(countBy(paused.entries, (e) => e.status))}` +
            `${paused.held ? '' : ' (not settled in 20 s)'}; skipped but received ${skippedButSent.length}; ` +
            `delivered but never received ${deliveredUnseen.length}`,
        );

        assertPublishing(load);
        assert.equal(pause.body.status, 'paused', 'the pause answers the connection paused');
        assert.equal(pause.body.pausedReason, 'manual', 'a pause by hand has the reason manual');
        assert.ok(pause.body.pausedAt, 'the pause answers since when');
        assert.equal(pause.body.deliveryEnabled, false, 'a paused connection does not have delivery enabled');
        assert.deepEqual(
          late.map((r) => `${r.webhookId} +${(reached(r) - answeredAt).toFixed(1)} ms`),
          [],
          `no request reaches the receiver after the pause answered (${late.length} late of ${arrivalsBefore})`,
        );
        assert.deepEqual(
          after.filter((e) => e.deliveries !== 1).map((e) => `${e.id}: ${e.deliveries}`),
          [],
          'an event published while paused counts its (skipped) delivery in the answer',
        );
        assert.deepEqual(
          after.filter((e) => statusOf.get(e.id) !== 'skipped').map((e) => `${e.id} ${statusOf.get(e.id)}`),
          [],
          'an event published while paused is recorded as a skipped delivery',
        );
        assert.deepEqual(
          paused.entries
            .filter((e) => e.status !== 'delivered' && e.status !== 'skipped')
            .map((e) => `${e.id} ${e.status}`),
          [],
          'while paused, every delivery is delivered (it had been sent) or skipped (it had not)',
        );
        assert.deepEqual(
          skippedButSent.map((e) => e.eventId),
          [],
          'a skipped delivery had not reached the receiver',
        );
        assert.deepEqual(
          deliveredUnseen.map((e) => e.eventId),
          [],
          'every delivery marked delivered reached the receiver (by webhook-id)',
        );
        assert.deepEqual(
          paused.entries.map((e) => e.eventId).sort(),
          events.map((e) => e.id).sort(),
          'the log holds one delivery per event published, and no other',
        );

        const resume = await call(
          resumer,
          'POST',
          `/api/v1/integrations/connections/${connectionId}/resume`,
          {
            token,
            body: { replaySkipped: true },
          },
        );
        assert.equal(resume.status, 200, `resuming the connection: ${resume.text}\n${outputs(resume.text)}`);
        assert.equal(resume.body.connection?.status, 'active', 'the resume answers the connection active');
        assert.equal(resume.body.connection?.pausedReason, null, 'an active connection has no paused reason');
        assert.equal(
          resume.body.replayed,
          skipped.length,
          `the resume replays every skipped delivery (${skipped.length})`,
        );

        const skippedIds = new Set(skipped.map((e) => e.eventId));
        const replayedArrivals = () => receiver.arrivals.slice(arrivalsBefore);
        const resumed = await logWhen(
          token,
          connectionId,
          (list) =>
            list.every((e) => e.status === 'delivered') &&
            new Set(replayedArrivals().map((r) => r.webhookId)).size >= skippedIds.size,
          60_000,
        );
        const resumedQuiet = await quiet(receiver, performance.now(), TIMEOUT_MS);
        const perId = countBy(replayedArrivals(), (r) => r.webhookId);
        const missing = [...skippedIds].filter((id) => !perId[id]);
        const duplicates = Object.entries(perId).filter(([, n]) => n > 1);
        const unexpected = Object.keys(perId).filter((id) => !skippedIds.has(id));
        const allPerId = countBy(receiver.arrivals, (r) => r.webhookId);
        const allDuplicates = Object.entries(allPerId).filter(([, n]) => n > 1);
        t.diagnostic(
          `resume took ${Math.round(resume.answeredAt - resume.sentAt)} ms and replayed ${resume.body.replayed}; ` +
            `after it: ${replayedArrivals().length} requests for ${skippedIds.size} skipped deliveries, ` +
            `missing ${missing.length}, duplicated ${duplicates.length}, not skipped ${unexpected.length}; ` +
            `log ${JSON.stringify(countBy(resumed.entries, (e) => e.status))}${resumed.held ? '' : ' (not settled in 60 s)'}; ` +
            `quiet ${resumedQuiet ? 'reached' : 'NOT reached'}; over the whole round ${allDuplicates.length} events arrived more than once`,
        );
        assert.deepEqual(missing, [], 'every skipped delivery reaches the receiver after the resume');
        assert.deepEqual(
          duplicates.map(([id, n]) => `${id} ×${n}`),
          [],
          'each replayed delivery arrives once at a healthy receiver (delivery is at least once, docs/api/events.md: a duplicate here is reported)',
        );
        assert.deepEqual(
          unexpected,
          [],
          'after the resume only the skipped deliveries are sent (the others had been delivered)',
        );
        assert.deepEqual(
          resumed.entries.filter((e) => e.status !== 'delivered').map((e) => `${e.id} ${e.status}`),
          [],
          'after the resume every delivery ends delivered',
        );
        assert.deepEqual(
          allDuplicates.map(([id, n]) => `${id} ×${n}`),
          [],
          'no event reached the healthy receiver twice over the round (reported: delivery is at least once, docs/api/events.md)',
        );
      });
    }
  });

  describe('throttle across processes', () => {
    const MAX_PER_SECOND = 20;
    const EVENTS = 150;

    /** The most of `times` (ms) in any window [t, t + ms) starting at one of them. */
    function maxInWindow(times: number[], ms: number): number {
      const sorted = [...times].sort((x, y) => x - y);
      let best = 0;
      let end = 0;
      for (let i = 0; i < sorted.length; i++) {
        while (end < sorted.length && sorted[end]! < sorted[i]! + ms) end++;
        best = Math.max(best, end - i);
      }
      return best;
    }

    test(`maxPerSecond ${MAX_PER_SECOND}: ${EVENTS} events published through both serve processes reach the receiver at most ${MAX_PER_SECOND} × (N + 1) in any N seconds, all delivered`, async (t) => {
      const receiver = await timedReceiver(t, answerOk);
      const { session, token } = await tenant('Throttle');
      const connectionId = await webhookConnection(session, receiver.url, { maxPerSecond: MAX_PER_SECOND });

      // 10 batches of 10 and 50 single events, four clients at once, through A and B in turn.
      const requests = [
        ...Array.from({ length: 10 }, (_, i) => ({ batch: true, i })),
        ...Array.from({ length: 50 }, (_, i) => ({ batch: false, i })),
      ];
      const published: Array<{ id: string; deliveries: number }> = [];
      const refused: string[] = [];
      let next = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let n = 0; n < requests.length && next < requests.length; n++) {
            const j = next++;
            const { batch, i } = requests[j]!;
            const server = j % 2 ? a : b;
            const r = batch
              ? await call(server, 'POST', '/api/v1/integrations/events/batch', {
                  token,
                  body: {
                    events: Array.from({ length: 10 }, (_, k) => ({ type: 'race.throttle', data: { i, k } })),
                  },
                })
              : await call(server, 'POST', '/api/v1/integrations/events', {
                  token,
                  body: { type: 'race.throttle', data: { i } },
                });
            if (r.status !== 202) refused.push(`${r.status} ${r.text}`);
            else published.push(...((batch ? r.body.data : [r.body]) as typeof published));
          }
        }),
      );
      const publishedIn = performance.now() - started;
      assert.deepEqual(refused, [], 'every publish is accepted');
      assert.equal(published.length, EVENTS, `${EVENTS} events published`);
      assert.ok(
        published.every((e) => e.deliveries === 1),
        'each event has one delivery to the throttled connection',
      );

      const ids = new Set(published.map((e) => e.id));
      await waitUntil(() => [...ids].every((id) => receiver.ids().has(id)), {
        message: () => `every event to arrive (${receiver.ids().size} of ${EVENTS})\n${outputs()}`,
        timeoutMs: 60_000,
      });
      const lastArrival = performance.now() - started;
      const { entries, held } = await logWhen(
        token,
        connectionId,
        (list) => list.length === EVENTS && list.every((e) => !UNSETTLED.has(e.status)),
        20_000,
      );

      const arrivals = receiver.arrivals.map((r) => r.headersAt);
      const starts = entries.flatMap((e) => e.attempts.map((at) => Date.parse(at.startedAt)));
      const windows = [1, 2, 3, 4, 5].map((n) => ({
        n,
        limit: MAX_PER_SECOND * (n + 1),
        arrived: maxInWindow(arrivals, n * 1_000),
        started: maxInWindow(starts, n * 1_000),
      }));
      const failedAttempts = entries.flatMap((e) =>
        e.attempts.filter((at) => at.error !== null || (at.responseStatus ?? 0) >= 300),
      );
      t.diagnostic(
        `published ${EVENTS} events in ${Math.round(publishedIn)} ms; all arrived after ${Math.round(lastArrival)} ms ` +
          `(${receiver.arrivals.length} requests, ${(EVENTS / (lastArrival / 1_000)).toFixed(1)} events/s overall)`,
      );
      t.diagnostic(
        `most in a window of N s (limit ${MAX_PER_SECOND} × (N + 1)): ` +
          windows
            .map((w) => `N=${w.n}: ${w.arrived} arrived, ${w.started} attempts started / ${w.limit}`)
            .join('; '),
      );
      t.diagnostic(
        `log: ${JSON.stringify(countBy(entries, (e) => e.status))}${held ? '' : ' (not settled in 20 s)'}; ` +
          `${failedAttempts.length} attempts failed`,
      );
      for (const w of windows) {
        assert.ok(
          w.arrived <= w.limit,
          `at most ${w.limit} requests reach the receiver in any ${w.n} s: ${w.arrived} did`,
        );
        assert.ok(
          w.started <= w.limit,
          `at most ${w.limit} attempts start (the log's startedAt) in any ${w.n} s: ${w.started} did`,
        );
      }
      assert.deepEqual(
        entries.filter((e) => e.status !== 'delivered').map((e) => `${e.id} ${e.status}`),
        [],
        'every throttled delivery ends delivered (held back, never failed)',
      );
      assert.equal(entries.length, EVENTS, 'one delivery per event');
      assert.deepEqual(
        failedAttempts.map((at) => `${at.startedAt} ${at.error} ${at.responseStatus}`),
        [],
        'the throttle holds deliveries back without failing an attempt',
      );
    });
  });

  describe('automatic pause with two serve processes and a worker', () => {
    const CASES = [
      { status: 500, reason: 'failing', least: PAUSE_AFTER_FAILURES },
      { status: 410, reason: 'gone', least: 1 },
    ] as const;

    for (const { status, reason, least } of CASES) {
      test(`a receiver answering ${status} pauses the connection (reason ${reason}); once that is seen, nothing more arrives after one timeout, and later events are skipped`, async (t) => {
        const receiver = await timedReceiver(t, answerStatus(status));
        const { session, token } = await tenant(`Automatic pause ${status}`);
        const connectionId = await webhookConnection(session, receiver.url);

        const load = startLoad(token, 'race.auto', 2, 100);
        let seen: Answer | undefined;
        try {
          seen = await waitUntil(
            async () => {
              const r = await call(
                load.shots.length % 2 ? a : b,
                'GET',
                `/api/v1/integrations/connections/${connectionId}`,
                {
                  token,
                },
              );
              return r.status === 200 && r.body.status !== 'active' ? r : undefined;
            },
            {
              message: () =>
                `the connection to leave active (${receiver.arrivals.length} requests answered ${status}, ` +
                `${load.events().length} events published)\n${outputs()}`,
              timeoutMs: 30_000,
              intervalMs: 100,
            },
          );
          await keepPublishing(load, seen.answeredAt, 1_000);
        } finally {
          await load.stop();
        }
        const seenAt = seen.answeredAt;
        const settledQuiet = await quiet(receiver, seenAt, TIMEOUT_MS + 500);
        const { entries, held } = await logWhen(
          token,
          connectionId,
          (list) => list.every((e) => !UNSETTLED.has(e.status)),
          20_000,
        );
        const statusOf = new Map(entries.map((e) => [e.eventId, e.status]));
        const lateBound = seenAt + TIMEOUT_MS;
        const late = receiver.arrivals.filter((r) => reached(r) > lateBound);
        const afterSeen = receiver.arrivals.filter((r) => reached(r) > seenAt);
        const later = load.shots.filter((s) => s.sentAt > seenAt).flatMap((s) => s.events);
        const statuses = countBy(entries, (e) => e.status);
        t.diagnostic(
          `paused seen ${Math.round(seenAt - (load.shots[0]?.sentAt ?? seenAt))} ms after publishing began; ` +
            `${load.events().length} events published, ${later.length} after; receiver ${receiver.arrivals.length} requests, ` +
            `${afterSeen.length} after the pause was seen` +
            (afterSeen.length ? ` (${offsets(afterSeen.map(reached), seenAt)})` : '') +
            `, ${late.length} later than one timeout (${TIMEOUT_MS} ms); quiet ${settledQuiet ? 'reached' : 'NOT reached'}`,
        );
        t.diagnostic(`log: ${JSON.stringify(statuses)}${held ? '' : ' (not settled in 20 s)'}`);

        assertPublishing(load);
        assert.equal(seen.body.status, 'paused', `the connection pauses itself: ${seen.text}`);
        assert.equal(seen.body.pausedReason, reason, `the reason is ${reason}`);
        assert.ok(seen.body.pausedAt, 'it says since when');
        assert.deepEqual(
          late.map((r) => `${r.webhookId} +${(reached(r) - seenAt).toFixed(1)} ms`),
          [],
          `nothing reaches the receiver more than one timeout (${TIMEOUT_MS} ms) after the pause was seen`,
        );
        assert.deepEqual(
          later
            .filter((e) => e.deliveries !== 1 || statusOf.get(e.id) !== 'skipped')
            .map((e) => `${e.id} ${e.deliveries} ${statusOf.get(e.id)}`),
          [],
          'an event published once the pause was seen is recorded as one skipped delivery',
        );
        assert.deepEqual(
          entries
            .filter((e) => e.status !== 'failed' && e.status !== 'skipped')
            .map((e) => `${e.id} ${e.status}`),
          [],
          'every delivery ends failed (it was answered) or skipped (it was not sent)',
        );
        assert.ok(
          (statuses.failed ?? 0) >= least,
          `at least ${least} deliveries failed before the pause: ${statuses.failed ?? 0}`,
        );
      });
    }
  });
}
