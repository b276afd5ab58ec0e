import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createSessionPool,
  sessionFingerprint,
  type BrokerSession,
  type SessionPool,
} from '../../src/delivery/broker-sessions.js';
import { waitUntil } from '../helpers/wait.js';

/** A session as the pool sees one: open until it is closed (or the "broker" drops it). */
function session(name: string) {
  let open = true;
  let closed = false;
  return {
    name,
    isOpen: () => open,
    close: async () => {
      open = false;
      closed = true;
    },
    drop: () => (open = false),
    wasClosed: () => closed,
  } satisfies BrokerSession & Record<string, unknown>;
}

const QUICK = { idleMs: 200, sweepMs: 50, max: 2 };

type Session = ReturnType<typeof session>;

/** The session an attempt would get, given back at once (no attempt goes on using it). */
const acquire = (
  pool: SessionPool<Session>,
  connectionId: string,
  fingerprint: string,
  open: () => Promise<Session>,
) => pool.use(connectionId, fingerprint, open, async (got) => got);

describe('broker sessions (decision 0080)', () => {
  test('attempts of one connection share its session, opened once even when they ask at once', async () => {
    const pool = createSessionPool<ReturnType<typeof session>>(QUICK);
    let opened = 0;
    const open = async () => session(`s${++opened}`);
    const [a, b] = await Promise.all([acquire(pool, 'con_1', 'f', open), acquire(pool, 'con_1', 'f', open)]);
    const c = await acquire(pool, 'con_1', 'f', open);
    assert.equal(opened, 1, 'attempts of one connection opened more than one session');
    assert.ok(a === b && b === c, 'attempts of one connection got different sessions');
    await pool.close();
    assert.ok(a.wasClosed(), 'closing the pool left a session open');
  });

  test('an edit or a re-binding (another fingerprint) closes the old session and opens another', async () => {
    const pool = createSessionPool<ReturnType<typeof session>>(QUICK);
    const first = await acquire(pool, 'con_1', sessionFingerprint('amqp://a/', 'u', 'p1'), async () =>
      session('1'),
    );
    const second = await acquire(pool, 'con_1', sessionFingerprint('amqp://a/', 'u', 'p2'), async () =>
      session('2'),
    );
    assert.notEqual(first, second, 'new credentials reused the session logged in with the old ones');
    await waitUntil(() => first.wasClosed(), { message: 'the old session to be closed' });
    assert.equal(pool.size(), 1, 'the pool keeps more than one session for one connection');
    await pool.close();
  });

  test('a session nothing uses is closed (a paused or revoked connection), within idleMs and a sweep', async () => {
    const pool = createSessionPool<ReturnType<typeof session>>(QUICK);
    const kept = await acquire(pool, 'con_1', 'f', async () => session('1'));
    await waitUntil(() => kept.wasClosed(), { message: 'the idle session to be closed', timeoutMs: 2_000 });
    assert.equal(pool.size(), 0, 'an idle session is still kept');
    await pool.close();
  });

  test('a session the broker dropped is replaced by the next attempt (a broker that came back)', async () => {
    const pool = createSessionPool<ReturnType<typeof session>>(QUICK);
    const first = await acquire(pool, 'con_1', 'f', async () => session('1'));
    first.drop();
    const second = await acquire(pool, 'con_1', 'f', async () => session('2'));
    assert.equal(second.name, '2', 'a dropped session was handed out again');
    await pool.close();
  });

  test('a session that fails to open is not kept, and sessions are bounded in number', async () => {
    const pool = createSessionPool<ReturnType<typeof session>>(QUICK);
    await assert.rejects(
      acquire(pool, 'con_1', 'f', () => Promise.reject(new Error('refused'))),
      /refused/,
      'a failed open did not fail the attempt',
    );
    assert.equal(pool.size(), 0, 'a session that failed to open is kept');
    const sessions: Array<ReturnType<typeof session>> = [];
    for (const id of ['con_1', 'con_2', 'con_3'])
      sessions.push(await acquire(pool, id, 'f', async () => session(id)));
    assert.equal(pool.size(), 2, 'the pool holds more sessions than its bound');
    await waitUntil(() => sessions[0]!.wasClosed(), {
      message: 'the least recently used session to be closed',
    });
    await pool.close();
  });
  test('a session an attempt is using is neither evicted nor closed as idle; given back, it is', async () => {
    const pool = createSessionPool<Session>(QUICK);
    let giveBack = () => {};
    const given = new Promise<void>((resolve) => (giveBack = resolve));
    let inUse: Session | undefined;
    const using = pool.use(
      'con_1',
      'f',
      async () => session('1'),
      async (got) => {
        inUse = got;
        await given;
      },
    );
    const evicted = await acquire(pool, 'con_2', 'f', async () => session('2'));
    await acquire(pool, 'con_3', 'f', async () => session('3'));
    // Past the bound of 2 with con_1 the oldest: the least recently used of those given back goes.
    assert.equal(pool.size(), 2, 'the pool went past its bound with a session given back');
    await waitUntil(() => evicted.wasClosed(), { message: 'the idle session past the bound to be closed' });
    // Longer than idleMs: con_3, given back, is closed as idle; con_1, in use, stays open.
    const idle = await acquire(pool, 'con_3', 'f', async () => session('3 again'));
    await waitUntil(() => idle.wasClosed(), { message: 'the idle session to be closed', timeoutMs: 2_000 });
    assert.ok(inUse && !inUse.wasClosed(), 'a session was closed under the attempt using it');
    giveBack();
    await using;
    await waitUntil(() => inUse!.wasClosed(), {
      message: 'the session given back to be closed once idle',
      timeoutMs: 2_000,
    });
    await pool.close();
  });
});
