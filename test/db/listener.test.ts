import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { listenForever } from '../../src/db/listener.js';
import { MAX_RECONNECT_DELAY_MS, reconnectDelayMs } from '../../src/db/reconnect.js';
import { createLogger } from '../../src/logger.js';
import { startDatabaseProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

test('reconnect delays grow from a fraction of a second to at most 5 s, never all at the same instant', () => {
  const highest = (failures: number) => reconnectDelayMs(failures, () => 1);
  const lowest = (failures: number) => reconnectDelayMs(failures, () => 0);
  assert.ok(highest(0) <= 200, 'the first try again comes quickly');
  for (let failures = 0; failures < 1_000; failures++) {
    assert.ok(highest(failures) <= MAX_RECONNECT_DELAY_MS, `try ${failures + 1} waits at most 5 s`);
    assert.ok(lowest(failures) > 0, `try ${failures + 1} is tried again at once, with no delay at all`);
    assert.ok(highest(failures + 1) >= highest(failures), 'never shorter after one more failure');
  }
  assert.equal(highest(30), MAX_RECONNECT_DELAY_MS, 'a long outage is tried every 5 s at most');
  assert.ok(lowest(30) < highest(30), 'jittered');
});

// The LISTEN connection on its own, through a proxy the test cuts. PostgreSQL only.
if (ENGINE === 'postgres') {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let proxiedUrl: string;

  before(async () => {
    db = await createTestDatabase();
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    ({ proxy, url: proxiedUrl } = await startDatabaseProxy(db.target.url));
  });
  after(async () => {
    await proxy.close();
    await db.drop();
  });

  /** A debug logger, and how many failed tries to re-open LISTEN it has seen. */
  const capturedTries = () => {
    let lines = '';
    const logger = createLogger(
      'debug',
      new Writable({
        write(chunk, _encoding, done) {
          lines += chunk.toString();
          done();
        },
      }),
    );
    const tries = () => lines.split('\n').filter((l) => l.includes('could not be re-opened yet')).length;
    return { logger, tries };
  };

  const notify = async (channel: string) => {
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    const client = new pg.Client({ connectionString: db.target.url });
    await client.connect();
    try {
      await client.query(`select pg_notify('${channel}', '')`);
    } finally {
      await client.end();
    }
  };

  test('a lost LISTEN connection is tried again and again until the server is back, then hears NOTIFY', async () => {
    const { logger, tries } = capturedTries();
    let heard = 0;
    const stop = await listenForever(proxiedUrl, 'hubgate_listen_test', () => heard++, logger);
    try {
      assert.equal(heard, 1, 'listening starts with a wake-up of its own');
      await notify('hubgate_listen_test');
      await waitUntil(() => heard === 2, { message: 'the first NOTIFY' });

      await proxy.cut();
      // More than one try: the old code tried once, a second later, and then never again.
      await waitUntil(() => tries() >= 4, { message: 'four failed tries to re-open LISTEN' });
      await proxy.restore();
      // The reconnect itself wakes the listener once: what was announced meanwhile was not heard.
      await waitUntil(() => heard === 3, { message: 'the wake-up on reconnect', timeoutMs: 10_000 });
      await notify('hubgate_listen_test');
      await waitUntil(() => heard === 4, { message: 'a NOTIFY after the reconnect' });
    } finally {
      await stop();
    }
  });

  test('stopping while the server is gone leaves no timer, socket or try behind', async () => {
    const resources = () => {
      const counts = new Map<string, number>();
      for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
      return counts;
    };
    const before = resources();
    const { logger, tries } = capturedTries();
    const stop = await listenForever(proxiedUrl, 'hubgate_listen_test', () => {}, logger);
    await proxy.cut();
    try {
      await waitUntil(() => tries() >= 2, { message: 'failed tries to re-open LISTEN' });
      const stopping = Date.now();
      await stop();
      assert.ok(Date.now() - stopping < 1_000, 'stop does not wait for the backoff');
      const triesAtStop = tries();
      await proxy.restore();
      // Other sockets of the test process may have closed meanwhile; none may have been added.
      for (const [kind, n] of resources()) {
        assert.ok(n <= (before.get(kind) ?? 0), `${n} ${kind} now, ${before.get(kind) ?? 0} before`);
      }
      assert.equal(tries(), triesAtStop, 'the listener kept trying to re-open LISTEN after it was stopped');
    } finally {
      await proxy.restore();
    }
  });
}
