import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '../../src/crypto/api-tokens.js';
import { createPlatformKey, revokePlatformKey } from '../../src/keys/platform-keys.js';
import { assertNoLeak } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** Every platform route, with a body that would be valid, so only the credential decides. */
const PLATFORM_ROUTES: Array<[string, string, unknown?]> = [
  ['GET', '/api/v1/platform/tenants'],
  ['POST', '/api/v1/platform/tenants', { name: 'x' }],
  ['GET', '/api/v1/platform/tenants/ten_0000000000000000000000'],
  ['PUT', '/api/v1/platform/tenants/ten_0000000000000000000000/entitlements', { entitlements: [] }],
  [
    'POST',
    '/api/v1/platform/tenants/ten_0000000000000000000000/users',
    { email: 'a@b.co', role: 'MEMBER', password: 'x'.repeat(12) },
  ],
  ['GET', '/api/v1/platform/tenants/ten_0000000000000000000000/users'],
  ['DELETE', '/api/v1/platform/tenants/ten_0000000000000000000000/users/usr_0000000000000000000000'],
];

const platformKey = (expiresAt: Date | null = null) =>
  createPlatformKey(h.database.kysely, h.keyring, { name: 'gate', expiresAt }, new Date());

describe('platform routes refuse every credential but a live plt_ key', () => {
  const badCredentials: Array<[string, () => Promise<Record<string, string>>]> = [
    ['no credential', async () => ({})],
    ['an empty bearer', async () => ({ authorization: 'Bearer ' })],
    [
      'a non-bearer scheme',
      async () => ({ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }),
    ],
    ['a malformed token', async () => ({ authorization: 'Bearer plt_short' })],
    [
      'a wrong checksum',
      async () => ({
        authorization: `Bearer ${h.platformToken.slice(0, -1)}${h.platformToken.endsWith('a') ? 'b' : 'a'}`,
      }),
    ],
    ['a well-formed unknown key', async () => ({ authorization: `Bearer ${generateToken('plt_')}` })],
    ['an unknown tenant key', async () => ({ authorization: `Bearer ${generateToken('tnt_')}` })],
    [
      'a revoked key',
      async () => {
        const key = await platformKey();
        await revokePlatformKey(h.database.kysely, key.id, new Date());
        return { authorization: `Bearer ${key.secret}` };
      },
    ],
    [
      'an expired key',
      async () => {
        const key = await platformKey(new Date(Date.now() + 60_000));
        h.setNow(new Date(Date.now() + 120_000));
        return { authorization: `Bearer ${key.secret}` };
      },
    ],
    ['a session cookie alone', async () => ({ cookie: 'svc_access=whatever' })],
  ];

  for (const [label, credential] of badCredentials) {
    test(`${label}: 401 unauthenticated with WWW-Authenticate on every platform route`, async () => {
      const headers = await credential();
      try {
        for (const [method, path, body] of PLATFORM_ROUTES) {
          const response = await h.request(method, path, { headers, body });
          assert.equal(response.status, 401, `${method} ${path}`);
          assert.equal(
            response.body.code,
            'unauthenticated',
            `${label}: ${method} ${path} is refused with another code than unauthenticated`,
          );
          assert.equal(
            response.headers.get('www-authenticate'),
            'Bearer',
            `${label}: ${method} ${path} does not tell the client to send a Bearer token`,
          );
        }
      } finally {
        h.setNow(null);
      }
    });
  }

  test('a bad credential writes nothing', async () => {
    const before = await h.database.kysely.selectFrom('tenants').select('id').execute();
    await h.request('POST', '/api/v1/platform/tenants', {
      token: generateToken('plt_'),
      body: { name: 'no' },
    });
    const afterRows = await h.database.kysely.selectFrom('tenants').select('id').execute();
    assert.equal(
      afterRows.length,
      before.length,
      'a request with a bad platform credential created a tenant',
    );
  });

  test('a live key works, and records when it was last used', async () => {
    const key = await platformKey(new Date(Date.now() + 3_600_000));
    const response = await h.request('GET', '/api/v1/platform/tenants', { token: key.secret });
    assert.equal(response.status, 200, 'a live platform key is refused');
    const row = await h.database.kysely
      .selectFrom('platform_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    assert.ok(row.last_used_at, "the platform key's last use is not recorded");
    assertNoLeak(h, [key.secret]);
  });

  test('a key stops working the moment it is revoked', async () => {
    const key = await platformKey();
    assert.equal(
      (await h.request('GET', '/api/v1/platform/tenants', { token: key.secret })).status,
      200,
      'a fresh platform key is refused',
    );
    await revokePlatformKey(h.database.kysely, key.id, new Date());
    assert.equal(
      (await h.request('GET', '/api/v1/platform/tenants', { token: key.secret })).status,
      401,
      'a revoked platform key still works',
    );
  });

  test('the secret is stored only as a hash', async () => {
    const key = await platformKey();
    const row = await h.database.kysely
      .selectFrom('platform_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(key.secret), 'the platform secret is stored in the clear');
    assert.ok(
      !JSON.stringify(row).includes(key.secret.slice(12)),
      'the random part of the platform secret is stored in the clear',
    );
    assert.equal(
      row.prefix,
      key.secret.slice(0, 12),
      "the stored prefix is not the secret's first 12 characters",
    );
  });

  test('public routes ignore a bad credential', async () => {
    for (const path of ['/healthz', '/readyz', '/api/v1/openapi.json']) {
      const response = await h.request('GET', path, { token: 'garbage' });
      assert.equal(response.status, 200, path);
    }
  });
});
