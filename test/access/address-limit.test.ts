import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from 'kysely';
import { Agent, fetch } from 'undici';
import { addressBucket } from '../../src/access/client-address.js';
import { generateToken } from '../../src/crypto/api-tokens.js';
import { randomBase62 } from '../../src/crypto/base62.js';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

const LIMIT = 12;

/** Requests from another loopback address than the test's own 127.0.0.1: another client. */
const from = (address: string) => new Agent({ localAddress: address });

/** Every query the app sends, as the text of its operation tree: what we assert never happens. */
function queryRecorder() {
  const seen: string[] = [];
  const plugin: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs) {
      seen.push(JSON.stringify(args.node));
      return args.node;
    },
    transformResult: (args: PluginTransformResultArgs) => Promise.resolve(args.result),
  };
  return { plugin, seen };
}

// Background writes are bounded by time, not by requests: the rate limiter's exchange (once per
// bucket per sync interval) and the keys' last-used flush. Everything else is a request's work.
const requestWork = (queries: string[]) =>
  queries.filter((q) => !q.includes('rate_limit_windows') && !q.includes('set last_used_at'));

// Garbage of each kind the gate would otherwise look up: well-formed keys of both kinds, sessions.
const garbage = (i: number): Record<string, string> => {
  switch (i % 3) {
    case 0:
      return { authorization: `Bearer ${generateToken('tnt_')}` };
    case 1:
      return { authorization: `Bearer ${generateToken('plt_')}` };
    default:
      return { cookie: `svc_access=${randomBase62(43)}` };
  }
};

describe('credential guessing is limited per client address before any database work', () => {
  let h: Harness;
  let testDatabase: TestDatabase;
  const recorder = queryRecorder();
  const pings = { inFlight: 0, most: 0, total: 0 };

  before(async () => {
    testDatabase = await createTestDatabase();
    const database = {
      ...testDatabase.database,
      kysely: testDatabase.database.kysely.withPlugin(recorder.plugin),
      ping: async () => {
        pings.total += 1;
        pings.most = Math.max(pings.most, ++pings.inFlight);
        try {
          await testDatabase.database.ping();
        } finally {
          pings.inFlight -= 1;
        }
      },
    };
    h = await startHarness({
      env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) },
      testDatabase: { ...testDatabase, database },
    });
    // Mid-minute, so each test stays inside one fixed rate-limit window however slow the machine.
    h.setNow(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 20_000));
  });
  after(async () => {
    await h.close();
    await testDatabase.drop();
  });

  test('a flood of garbage tnt_/plt_/session credentials: 401 up to the limit, then 429 with no query made', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    const path = '/api/v1/automation/health';
    const attacker = from('127.0.0.2');
    const send = (headers: Record<string, string>) =>
      fetch(`${h.baseUrl}${path}`, { headers, dispatcher: attacker });

    const before = recorder.seen.length;
    for (let i = 0; i < LIMIT; i++) assert.equal((await send(garbage(i))).status, 401, `garbage ${i}`);
    assert.ok(requestWork(recorder.seen.slice(before)).length >= LIMIT - 2, 'verification does query');

    const flood = recorder.seen.length;
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => send(garbage(i))));
    for (const response of statuses) {
      assert.equal(response.status, 429, 'a guessing client past its limit is not refused with 429');
      assert.ok(
        Number(response.headers.get('retry-after')) > 0,
        'a refused client is not told when to retry',
      );
    }
    const made = requestWork(recorder.seen.slice(flood)).length;
    assert.equal(made, 0, `${made} queries made for ${statuses.length} refused requests`);

    // The spent address is refused before any credential is looked at, a valid one included…
    assert.equal(
      (await send({ authorization: `Bearer ${key.secret}` })).status,
      429,
      'a valid key from the spent address gets through the limit',
    );
    // …while a valid key from another address is not affected.
    const other = await h.request('GET', path, { token: key.secret });
    assert.equal(other.status, 200, 'a valid key from another address is refused along with the attacker');
  });

  test('a burst of garbage arriving all at once: no more lookups than the limit', async () => {
    // Connected first, then written in one go, so the server reads them all before any lookup ends.
    const BURST = 100;
    const sockets = await Promise.all(
      Array.from(
        { length: BURST },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const socket = connect({
              host: '127.0.0.1',
              port: Number(new URL(h.baseUrl).port),
              localAddress: '127.0.0.4',
            });
            socket.once('connect', () => resolve(socket)).once('error', reject);
          }),
      ),
    );
    const answers = sockets.map((socket) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString();
      });
      return () => /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
    });
    const start = recorder.seen.length;
    sockets.forEach((socket, i) => {
      const header = Object.entries(garbage(i))
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('');
      socket.write(`GET /api/v1/automation/health HTTP/1.1\r\nHost: 127.0.0.1\r\n${header}\r\n`);
    });
    try {
      await waitUntil(() => answers.every((status) => status() !== undefined), { message: 'every answer' });
      const statuses = answers.map((status) => status());
      assert.equal(statuses.filter((s) => s === '401').length, LIMIT, statuses.join());
      assert.equal(
        statuses.filter((s) => s === '429').length,
        BURST - LIMIT,
        'part of a burst of garbage beyond the limit is not refused with 429',
      );
      const made = requestWork(recorder.seen.slice(start)).length;
      assert.ok(made <= LIMIT, `${made} lookups for ${LIMIT} allowed`);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  test('unauthenticated sign-in attempts from one address are refused before the database too', async () => {
    const attacker = from('127.0.0.3');
    const login = (i: number) =>
      fetch(`${h.baseUrl}/api/v1/auth/login`, {
        dispatcher: attacker,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `nobody-${i}@example.com`, password: 'x' }),
      });
    for (let i = 0; i < LIMIT; i++)
      assert.equal((await login(i)).status, 401, 'an unknown sign-in within the limit is not answered 401');
    const flood = recorder.seen.length;
    for (let i = 0; i < 20; i++)
      assert.equal((await login(i)).status, 429, 'sign-in attempts past the limit are not refused with 429');
    assert.equal(
      requestWork(recorder.seen.slice(flood)).length,
      0,
      'refused sign-in attempts still query the database',
    );
  });

  test('readiness checks from one address are limited like other unauthenticated requests; liveness is not', async () => {
    const prober = from('127.0.0.5');
    const get = (path: string) => fetch(`${h.baseUrl}${path}`, { dispatcher: prober });
    for (let i = 0; i < LIMIT; i++) assert.equal((await get('/readyz')).status, 200, `check ${i}`);
    const before = pings.total;
    for (let i = 0; i < 20; i++) {
      const refused = await get('/readyz');
      assert.equal(refused.status, 429, 'a readiness check past the limit is not refused with 429');
      assert.ok(
        Number(refused.headers.get('retry-after')) > 0,
        'a refused readiness check is not told when to retry',
      );
    }
    assert.equal(pings.total - before, 0, 'a refused check pings nothing');
    // /healthz does no database work and stays open to probes.
    assert.equal((await get('/healthz')).status, 200, 'liveness checks are limited along with readiness');
    // The published document says so.
    const paths = (h.app.swagger() as { paths: Record<string, { get: { responses: object } }> }).paths;
    assert.ok(
      '429' in paths['/readyz']!.get.responses,
      'the published document does not show that /readyz can answer 429',
    );
    assert.ok(
      !('429' in paths['/healthz']!.get.responses),
      'the published document shows a 429 on /healthz, which is never limited',
    );
  });

  // An embedded ping finishes before the next request is even read, so only PostgreSQL can show it.
  test(
    'a flood of readiness checks holds one database ping at a time',
    { skip: ENGINE !== 'postgres' },
    async () => {
      pings.most = 0;
      // Ten probers with ten checks each: within every address's allowance.
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, p) => from(`127.0.0.${10 + p}`)).flatMap((prober) =>
          Array.from({ length: 10 }, () => fetch(`${h.baseUrl}/readyz`, { dispatcher: prober })),
        ),
      );
      for (const r of answers)
        assert.equal(r.status, 200, "a readiness check within its address's allowance fails");
      assert.equal(pings.most, 1, `${pings.most} pings at once`);
    },
  );
});

test('an IPv6 client shares one allowance across its /64; IPv4-mapped addresses count as IPv4', () => {
  assert.equal(
    addressBucket('2001:db8:1:2:aaaa::1'),
    addressBucket('2001:db8:1:2:bbbb::9'),
    'two addresses in one IPv6 /64 get separate allowances',
  );
  assert.notEqual(
    addressBucket('2001:db8:1:2::1'),
    addressBucket('2001:db8:1:3::1'),
    'two IPv6 /64 networks share one allowance',
  );
  assert.equal(
    addressBucket('::ffff:192.0.2.7'),
    addressBucket('192.0.2.7'),
    'an IPv4-mapped IPv6 address gets another allowance than the same IPv4 address',
  );
  assert.notEqual(
    addressBucket('192.0.2.7'),
    addressBucket('192.0.2.8'),
    'two IPv4 addresses share one allowance',
  );
});
