import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config.js';
import { randomBase62 } from '../../src/crypto/base62.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';

// The address the app saw for a request, as the audit log records it: a failed sign-in for an
// address of its own, sent with whatever X-Forwarded-For the client chose to write.
async function seenAs(h: Harness, forwardedFor?: string): Promise<string | null> {
  const email = `probe-${randomBase62(8).toLowerCase()}@example.com`;
  const r = await h.request('POST', '/api/v1/auth/login', {
    body: { email, password: 'x' },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  });
  assert.equal(r.status, 401, r.text);
  const rows = await h.database.kysely
    .selectFrom('audit_log')
    .select(['ip', 'metadata'])
    .where('action', '=', 'sign_in.failure')
    .execute();
  const row = rows.find((x) => (x.metadata as { email?: string }).email === email);
  assert.ok(row, 'the failure is audited');
  return row.ip;
}

// A client writes the left-most entries itself; only what trusted proxies appended may count.
const FORGED = '6.6.6.6, 203.0.113.7, 10.1.2.3';

describe('TRUST_PROXY decides which X-Forwarded-For entry is the client', () => {
  let testDatabase: TestDatabase;
  before(async () => {
    testDatabase = await createTestDatabase();
  });
  after(() => testDatabase.drop());

  // One app per setting, on one database, one after the other.
  async function withApp(env: Record<string, string>, run: (h: Harness) => Promise<void>) {
    const h = await startHarness({ env, testDatabase });
    try {
      await run(h);
    } finally {
      await h.close();
    }
  }

  test('unset or false: the header is ignored, the peer is the client', async () => {
    for (const env of [{}, { TRUST_PROXY: 'false' }] as Record<string, string>[]) {
      await withApp(env, async (h) => {
        assert.equal(
          await seenAs(h, FORGED),
          '127.0.0.1',
          `a forged X-Forwarded-For is believed with TRUST_PROXY ${JSON.stringify(env)}`,
        );
        assert.equal(
          await seenAs(h),
          '127.0.0.1',
          `the client is recorded as other than the peer with TRUST_PROXY ${JSON.stringify(env)}`,
        );
      });
    }
  });

  test('a hop count: the right-most entry after that many trusted hops, never a client-written one', async () => {
    await withApp({ TRUST_PROXY: '1' }, async (h) => {
      assert.equal(
        await seenAs(h, FORGED),
        '10.1.2.3',
        'one trusted hop: the client is not the right-most entry',
      );
      assert.equal(
        await seenAs(h, '198.51.100.9'),
        '198.51.100.9',
        'one trusted hop: the client is not the single forwarded entry',
      );
      assert.equal(
        await seenAs(h),
        '127.0.0.1',
        'one trusted hop without the header: the client is not the peer',
      );
    });
    await withApp({ TRUST_PROXY: '2' }, async (h) => {
      assert.equal(
        await seenAs(h, FORGED),
        '203.0.113.7',
        'two trusted hops: the client is not the second entry from the right',
      );
    });
  });

  test('a list of proxy CIDRs: the right-most entry that is not a trusted proxy', async () => {
    await withApp({ TRUST_PROXY: '127.0.0.1/32, 10.0.0.0/8' }, async (h) => {
      assert.equal(
        await seenAs(h, FORGED),
        '203.0.113.7',
        'listed proxies: the client is not the right-most untrusted entry',
      );
      // Every entry trusted: the left-most one is the best there is.
      assert.equal(
        await seenAs(h, '10.9.9.9, 10.1.2.3'),
        '10.9.9.9',
        'every entry trusted: the client is not the left-most entry',
      );
    });
    // The peer itself is not a listed proxy: its header counts for nothing.
    await withApp({ TRUST_PROXY: '10.0.0.0/8' }, async (h) => {
      assert.equal(await seenAs(h, FORGED), '127.0.0.1', "an unlisted peer's X-Forwarded-For is believed");
    });
  });

  test('the chosen entry is recorded in its canonical form; one that is not an address is the peer', async () => {
    await withApp({ TRUST_PROXY: '127.0.0.1/32' }, async (h) => {
      const seen: Record<string, string> = {
        '203.0.113.7:1234': '203.0.113.7',
        '[2001:db8::1]': '2001:db8::1',
        '[2001:DB8:0:0:0:0:0:1]:443': '2001:db8::1',
        '::ffff:198.51.100.9': '198.51.100.9',
        // Not addresses: a client could invent a new one for every request.
        garbage: '127.0.0.1',
        '198.051.100.050': '127.0.0.1',
        '0x7f.0.0.2': '127.0.0.1',
        '203.0.113.7:http': '127.0.0.1',
        '[198.51.100.9]': '127.0.0.1',
      };
      for (const [sent, recorded] of Object.entries(seen)) {
        assert.equal(await seenAs(h, `6.6.6.6, ${sent}`), recorded, sent);
      }
    });
  });

  test("every spelling of one address shares its rate limit; every non-address shares the peer's", async () => {
    const LIMIT = 4;
    await withApp({ TRUST_PROXY: '127.0.0.1/32', RATE_LIMIT_PER_MINUTE: String(LIMIT) }, async (h) => {
      // A window of its own (the earlier apps counted 127.0.0.1 in the shared rows of this minute),
      // fixed, so the test stays inside it however slow the machine.
      h.setNow(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 3_600_000));
      const guess = (forwardedFor: string) =>
        h.request('GET', '/api/v1/automation/health', {
          token: 'tnt_garbage',
          headers: { 'x-forwarded-for': forwardedFor },
        });
      const spend = async (forwardedFor: string) => {
        for (let i = 0; i < LIMIT; i++) assert.equal((await guess(forwardedFor)).status, 401, forwardedFor);
        assert.equal((await guess(forwardedFor)).status, 429, forwardedFor);
      };
      const refused = async (forms: string[]) => {
        for (const form of forms) assert.equal((await guess(form)).status, 429, form);
      };

      await spend('198.51.100.50');
      await refused(['198.51.100.50:1234', '::ffff:198.51.100.50', '[::ffff:c633:6432]:80']);
      await spend('2001:db8:1:2::1');
      await refused(['[2001:db8:1:2::1]', '[2001:DB8:1:2:0:0:0:99]:443', '2001:db8:1:2:ffff::1']);
      await spend('garbage-0');
      await refused(['garbage-1', '198.051.100.050', '[not-an-address]', '', '127.0.0.1']);
      // …and a different address is a different client.
      assert.equal(
        (await guess('198.51.100.51')).status,
        401,
        "a different address shares the spent address's rate limit",
      );
    });
  });
});

describe('TRUST_PROXY configuration', () => {
  test('accepts false, 1 to 10, and a list of CIDRs or addresses', () => {
    assert.equal(parseConfig({}).trustProxy, false, 'unset TRUST_PROXY trusts a proxy');
    assert.equal(parseConfig({ TRUST_PROXY: 'false' }).trustProxy, false, 'TRUST_PROXY=false trusts a proxy');
    assert.equal(parseConfig({ TRUST_PROXY: '1' }).trustProxy, 1, 'TRUST_PROXY=1 is not one hop');
    assert.equal(parseConfig({ TRUST_PROXY: '10' }).trustProxy, 10, 'TRUST_PROXY=10 is not ten hops');
    assert.deepEqual(
      parseConfig({ TRUST_PROXY: '10.0.0.0/8, fd00::/8,192.0.2.1' }).trustProxy,
      ['10.0.0.0/8', 'fd00::/8', '192.0.2.1/32'],
      'a TRUST_PROXY list is read as other ranges than written',
    );
  });

  test('ranges are kept in their canonical form; IPv4-mapped ranges as the IPv4 range they are', () => {
    assert.deepEqual(
      parseConfig({ TRUST_PROXY: '10.0.0.0/8,fc00::/7,2a06:98c0::/29,::ffff:192.0.2.0/120' }).trustProxy,
      ['10.0.0.0/8', 'fc00::/7', '2a06:98c0::/29', '192.0.2.0/24'],
      'TRUST_PROXY ranges are not kept in canonical form',
    );
  });

  // Ranges wide enough to hold clients, not only proxies: `true` in disguise.
  for (const value of [
    '0.0.0.0/1,128.0.0.0/1',
    '0.0.0.0/0',
    '10.0.0.0/8, 64.0.0.0/2',
    '::/0',
    '2000::/3',
    'fc00::/6',
    '::ffff:0:0/96',
    '::ffff:0.0.0.0/97',
    '::/64',
  ]) {
    test(`TRUST_PROXY=${value} is refused: it would trust addresses clients write`, () => {
      assert.throws(
        () => parseConfig({ TRUST_PROXY: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith('invalid TRUST_PROXY') &&
          error.message.includes('addresses clients write') &&
          !error.message.includes('\n'),
        `TRUST_PROXY=${value} is accepted, or refused without the reason on one line`,
      );
    });
  }

  for (const value of [
    'true',
    'TRUE',
    '0',
    '11',
    '1.5',
    'yes',
    '10.0.0.0/33',
    '10.0.0.0/8,',
    'loopback',
    '010.0.0.0/8',
  ]) {
    test(`TRUST_PROXY=${value} stops start-up with one line naming the variable`, () => {
      assert.throws(
        () => parseConfig({ TRUST_PROXY: value }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.includes('TRUST_PROXY') &&
          !error.message.includes('\n'),
        `TRUST_PROXY=${value} is accepted, or refused without one line naming the variable`,
      );
    });
  }

  test('true is refused with the reason', () => {
    assert.throws(
      () => parseConfig({ TRUST_PROXY: 'true' }),
      /client/,
      'TRUST_PROXY=true is accepted, or refused without saying it would trust the client',
    );
  });
});
