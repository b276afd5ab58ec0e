import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startServe } from '../helpers/cli.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

const TIMEOUT_MS = 500;
// Node checks for expired requests on an interval; the cut may come that much after the timeout.
const CUT_WITHIN_MS = TIMEOUT_MS * 4;

/** A raw client connection: what the server sent, and whether (and when) it hung up. */
function rawClient(port: number) {
  const socket: Socket = connect({ host: '127.0.0.1', port });
  const openedAt = Date.now();
  const state = { received: '', closedAfterMs: null as number | null };
  socket.on('data', (chunk) => {
    state.received += chunk.toString();
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    state.closedAfterMs = Date.now() - openedAt;
  });
  return {
    socket,
    state,
    write: (text: string) => new Promise<void>((resolve) => socket.write(text, () => resolve())),
    /** Waits until the server ends the connection; fails after `ms`. */
    cut: async (ms: number) => {
      await waitUntil(() => state.closedAfterMs !== null, {
        message: 'the server to cut the connection',
        timeoutMs: ms,
      });
      return state.closedAfterMs ?? Number.POSITIVE_INFINITY;
    },
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const LOGIN_HEAD = (length: number) =>
  `POST /api/v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe('slow clients are cut off after REQUEST_TIMEOUT_MS (docs/api/limits.md)', () => {
  let h: Harness;
  let port: number;
  const clients: Array<ReturnType<typeof rawClient>> = [];
  const client = () => {
    const c = rawClient(port);
    clients.push(c);
    return c;
  };

  before(async () => {
    h = await startHarness({ env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });
    port = Number(new URL(h.baseUrl).port);
  });
  after(async () => {
    for (const c of clients) c.socket.destroy();
    await h.close();
  });

  /** The sum of `hubgate_http_requests_total` over the series with status 408 and this route. */
  const timeouts = async (route: string) => {
    const metrics = await h.request('GET', '/metrics', { token: h.platformToken });
    return [...metrics.text.matchAll(/^hubgate_http_requests_total\{([^}]*)\} (\d+)$/gm)]
      .filter((m) => m[1]?.includes('status="408"') && m[1].includes(`route="${route}"`))
      .reduce((sum, m) => sum + Number(m[2]), 0);
  };

  /** Answered 408 in problem details with a request ID, then logged once and counted once. */
  async function assertTimedOut(c: ReturnType<typeof rawClient>, route: string, countedBefore: number) {
    const [head = '', body = ''] = c.state.received.split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 408 /, c.state.received);
    assert.match(head, /^content-type: application\/problem\+json/im, head);
    const requestId = /^x-request-id: (\S+)/im.exec(head)?.[1];
    assert.ok(requestId, `no X-Request-Id: ${head}`);
    assert.deepEqual(
      { ...JSON.parse(body), detail: undefined },
      {
        type: 'about:blank',
        title: 'Request timeout',
        status: 408,
        code: 'request_timeout',
        detail: undefined,
        requestId,
      },
      'the 408 answer is not a request_timeout problem with the request ID',
    );
    const lines = () =>
      h
        .logs()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"') && l.includes(`"requestId":"${requestId}"`));
    await waitUntil(() => lines().length > 0, { message: 'the access line' });
    assert.equal(lines().length, 1, lines().join('\n'));
    assert.match(
      lines()[0] ?? '',
      /"statusCode":408/,
      'the slow request is logged with another status than 408',
    );
    assert.equal((await timeouts(route)) - countedBefore, 1, 'counted once, as 408');
  }

  test('a sign-in whose body never finishes arriving', async (t) => {
    const body = JSON.stringify({ email: 'someone@example.com', password: 'a password' });
    const before = await timeouts('/api/v1/auth/login');
    const c = client();
    await c.write(LOGIN_HEAD(body.length) + body.slice(0, 10));
    const ms = await c.cut(CUT_WITHIN_MS);
    t.diagnostic(`cut after ${ms} ms, answered ${JSON.stringify(c.state.received.split('\r\n')[0])}`);
    assert.ok(ms >= TIMEOUT_MS - 50, `cut after ${ms} ms, before the timeout`);
    await assertTimedOut(c, '/api/v1/auth/login', before);
  });

  test('headers that never end', async (t) => {
    const before = await timeouts('unmatched');
    const c = client();
    await c.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    t.diagnostic(`cut after ${await c.cut(CUT_WITHIN_MS)} ms`);
    await assertTimedOut(c, 'unmatched', before);
  });

  test('a body dripped one byte at a time, forever', async (t) => {
    const c = client();
    await c.write(LOGIN_HEAD(100_000));
    const drip = (async () => {
      while (c.state.closedAfterMs === null && !c.socket.destroyed) {
        await c.write(' ');
        await pause(50);
      }
    })();
    const ms = await c.cut(CUT_WITHIN_MS);
    await drip;
    t.diagnostic(`cut after ${ms} ms`);
  });

  test('a connection that sends nothing', async (t) => {
    const c = client();
    t.diagnostic(`cut after ${await c.cut(CUT_WITHIN_MS)} ms`);
  });

  test('a slow but complete request is answered', async () => {
    const body = JSON.stringify({ email: 'slow@example.com', password: 'a password' });
    const c = client();
    await c.write(LOGIN_HEAD(body.length));
    for (let i = 0; i < body.length; i += 20) {
      await pause(TIMEOUT_MS / 10);
      await c.write(body.slice(i, i + 20));
    }
    await waitUntil(() => c.state.received.includes('\r\n\r\n'), { message: 'an answer' });
    assert.match(c.state.received, /^HTTP\/1\.1 401 /, 'a slow but complete sign-in is not answered');
  });

  test('idle keep-alive connections close after at most 75 s; header time within the request time', () => {
    const server = h.app.server;
    assert.ok(
      server.keepAliveTimeout > 0 && server.keepAliveTimeout <= 75_000,
      String(server.keepAliveTimeout),
    );
    assert.equal(server.requestTimeout, TIMEOUT_MS, "the server's request timeout is not REQUEST_TIMEOUT_MS");
    assert.ok(
      server.headersTimeout > 0 && server.headersTimeout <= TIMEOUT_MS,
      String(server.headersTimeout),
    );
  });
});

test('hubgate serve cuts slow clients off the same way', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hubgate-slow-'));
  const server = await startServe({ DATA_DIR: dataDir, REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) });
  try {
    const c = rawClient(Number(new URL(server.baseUrl).port));
    await c.write(LOGIN_HEAD(100));
    await c.cut(CUT_WITHIN_MS);
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
