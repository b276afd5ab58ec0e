import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { crc32 } from 'node:zlib';
import { BASE62_ALPHABET } from '../../src/crypto/base62.js';
import { assertNoLeak, inDays, makeKey, makeSignedInTenant, makeUser, signIn } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const health = (token: string) => h.request('GET', '/api/v1/automation/health', { token });

describe('key lifecycle', () => {
  test('create: 201 with the record and the secret once, in the checksummed format, stored only hashed', async () => {
    const { session, user } = await makeSignedInTenant(h);
    const expiresAt = inDays(90);
    const r = await h.request('POST', '/api/v1/company/api-keys', {
      session,
      body: { name: 'ci deploy', scopes: ['integrations:READER', 'integration_hub:READER'], expiresAt },
    });
    assert.equal(r.status, 201, 'creating a key fails');
    assert.equal(
      r.headers.get('cache-control'),
      'no-store',
      'the response carrying the secret may be cached',
    );
    const key = r.body;
    assert.deepEqual(
      Object.keys(key).sort(),
      [
        'createdAt',
        'createdBy',
        'expiresAt',
        'id',
        'lastUsedAt',
        'name',
        'prefix',
        'rateLimitPerMinute',
        'revokedAt',
        'rotatedAt',
        'scopes',
        'secret',
        'status',
      ],
      'the created key has other fields than docs/api/keys.md lists',
    );
    assert.match(key.id, /^key_[0-9A-Za-z]{22}$/, 'the key ID is not in the key_ + 22 base62 format');
    assert.match(key.secret, /^tnt_[0-9A-Za-z]{38}$/, 'the secret is not in the tnt_ + 38 base62 format');
    const random = key.secret.slice(4, 36);
    const checksum = [...key.secret.slice(36)].reduce(
      (n: number, c: string) => n * 62 + BASE62_ALPHABET.indexOf(c),
      0,
    );
    assert.equal(checksum, crc32(random), "the secret's checksum does not match its random part");
    assert.equal(
      key.prefix,
      key.secret.slice(0, 12),
      "the shown prefix is not the secret's first 12 characters",
    );
    assert.equal(key.status, 'active', 'a new key is not active');
    assert.equal(key.createdBy, user.id, 'the key does not name its creator');
    assert.equal(key.expiresAt, expiresAt, 'the key has another expiry than asked for');
    assert.equal(key.lastUsedAt, null, 'a new key shows as already used');
    assert.equal(key.revokedAt, null, 'a new key shows as revoked');
    assert.equal(key.rotatedAt, null, 'a new key shows as rotated');

    const row = await h.database.kysely
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(key.secret.slice(4)), 'the secret is stored in the clear');

    assert.equal((await health(key.secret)).status, 200, 'a new key does not work');
    const list = await h.request('GET', '/api/v1/company/api-keys', { session });
    assert.equal(list.status, 200, 'listing keys fails');
    const listed = list.body.data.find((k: { id: string }) => k.id === key.id);
    const { secret: _secret, ...record } = key;
    assert.deepEqual(
      { ...listed, lastUsedAt: null },
      record,
      'the listed key differs from the created one (or shows its secret)',
    );
    assert.equal(list.body.nextCursor, null, 'a one-key list offers a next page');

    const audit = await h.request('GET', '/api/v1/company/audit-log', { session });
    assert.ok(
      audit.body.data.some(
        (e: { action: string; targetId: string }) => e.action === 'api_key.create' && e.targetId === key.id,
      ),
      'creating a key is not in the audit log',
    );
    assertNoLeak(h, [], [key.secret]);
  });

  test('lastUsedAt follows use without a write per request', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    for (let i = 0; i < 5; i++)
      assert.equal((await health(key.secret)).status, 200, 'a fresh key is refused');
    // Recorded later, off the request path.
    const listed = await waitUntil(
      async () => {
        const list = await h.request('GET', '/api/v1/company/api-keys', { session });
        const found = list.body.data.find((k: { id: string }) => k.id === key.id);
        return found?.lastUsedAt ? found : undefined;
      },
      { message: 'lastUsedAt recorded' },
    );
    assert.ok(Date.parse(listed.lastUsedAt) <= Date.now(), 'lastUsedAt lies in the future');
  });

  test('rotate keeps the ID and returns a new secret once; the old one stops at once', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    assert.equal((await health(key.secret)).status, 200, 'a fresh key is refused');
    const r = await h.request('POST', `/api/v1/company/api-keys/${key.id}/rotate`, { session });
    assert.equal(r.status, 200, 'rotating a key fails');
    assert.equal(
      r.headers.get('cache-control'),
      'no-store',
      'the response carrying the new secret may be cached',
    );
    assert.equal(r.body.id, key.id, 'rotation gives the key another ID');
    assert.notEqual(r.body.secret, key.secret, 'rotation returns the old secret');
    assert.equal(
      r.body.prefix,
      r.body.secret.slice(0, 12),
      "the shown prefix is not the new secret's first 12 characters",
    );
    assert.ok(r.body.rotatedAt, 'a rotated key does not say when it was rotated');
    assert.equal(
      (await health(key.secret)).status,
      401,
      'the old secret still works after rotation without overlap',
    );
    assert.equal((await health(r.body.secret)).status, 200, 'the new secret does not work');
    assertNoLeak(h, [], [key.secret, r.body.secret]);
  });

  test('rotate with an overlap keeps the old secret valid for that long only; expiresAt may change', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    const newExpiry = inDays(200);
    const r = await h.request('POST', `/api/v1/company/api-keys/${key.id}/rotate`, {
      session,
      body: { previousSecretValidForSeconds: 600, expiresAt: newExpiry },
    });
    assert.equal(r.status, 200, 'rotating with an overlap fails');
    assert.equal(r.body.expiresAt, newExpiry, 'rotation ignores the new expiresAt');
    assert.equal((await health(key.secret)).status, 200, 'old secret inside the overlap');
    assert.equal(
      (await health(r.body.secret)).status,
      200,
      'the new secret does not work inside the overlap',
    );
    h.setNow(new Date(Date.now() + 601_000));
    try {
      // The verification cache lets the old secret through for at most a second (docs/api/authentication.md);
      // half a second more for a loaded machine.
      await waitUntil(async () => (await health(key.secret)).status === 401, {
        message: 'the old secret refused after the overlap',
        timeoutMs: 1_500,
      });
      assert.equal(
        (await health(r.body.secret)).status,
        200,
        'the new secret does not work after the overlap',
      );
    } finally {
      h.setNow(null);
    }
  });

  test('revoke: 204, then the key is 401 everywhere; rotating it is 409; revoking again is 204', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    assert.equal((await health(key.secret)).status, 200, 'a fresh key is refused');
    const r = await h.request('DELETE', `/api/v1/company/api-keys/${key.id}`, { session });
    assert.equal(r.status, 204, 'revoking a key fails');
    const denied = await health(key.secret);
    assert.equal(denied.status, 401, 'a revoked key still works');
    assert.equal(
      denied.body.code,
      'unauthenticated',
      'a revoked key is refused with another code than unauthenticated',
    );
    const rotate = await h.request('POST', `/api/v1/company/api-keys/${key.id}/rotate`, { session });
    assert.equal(rotate.status, 409, 'a revoked key can be rotated');
    assert.equal(
      rotate.body.code,
      'conflict',
      'rotating a revoked key is refused with another code than conflict',
    );
    assert.equal(
      (await h.request('DELETE', `/api/v1/company/api-keys/${key.id}`, { session })).status,
      204,
      'revoking a key twice is not idempotent',
    );
    const listed = (await h.request('GET', '/api/v1/company/api-keys', { session })).body.data[0];
    assert.equal(listed.status, 'revoked', 'a revoked key is listed as other than revoked');
    assert.ok(listed.revokedAt, 'a revoked key does not say when it was revoked');
    const actions = (await h.request('GET', '/api/v1/company/audit-log', { session })).body.data.map(
      (e: { action: string }) => e.action,
    );
    assert.equal(
      actions.filter((a: string) => a === 'api_key.revoke').length,
      1,
      'revoking twice is audited other than once',
    );
  });

  test('an expired key is 401 and cannot be rotated', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { expiresAt: new Date(Date.now() + 120_000).toISOString() });
    h.setNow(new Date(Date.now() + 180_000));
    try {
      assert.equal((await health(key.secret)).status, 401, 'an expired key still works');
      const rotate = await h.request('POST', `/api/v1/company/api-keys/${key.id}/rotate`, { session });
      assert.equal(rotate.status, 409, 'an expired key can be rotated');
      const listed = (await h.request('GET', '/api/v1/company/api-keys', { session })).body.data[0];
      assert.equal(listed.status, 'expired', 'an expired key is listed as other than expired');
    } finally {
      h.setNow(null);
    }
  });

  test('another tenant’s key, an unknown ID and a malformed ID are 404 for rotate and revoke', async () => {
    const a = await makeSignedInTenant(h);
    const b = await makeSignedInTenant(h);
    const key = await makeKey(h, a.session);
    for (const id of [key.id, 'key_0000000000000000000000', 'garbage']) {
      const rotate = await h.request('POST', `/api/v1/company/api-keys/${id}/rotate`, { session: b.session });
      assert.equal(rotate.status, 404, id);
      assert.equal(
        rotate.body.code,
        'not_found',
        `${id}: another tenant's or an unknown key is refused with another code than not_found`,
      );
      const revoke = await h.request('DELETE', `/api/v1/company/api-keys/${id}`, { session: b.session });
      assert.equal(revoke.status, 404, id);
    }
    assert.equal((await health(key.secret)).status, 200, 'untouched');
    const listB = await h.request('GET', '/api/v1/company/api-keys', { session: b.session });
    assert.equal(listB.body.data.length, 0, 'lists are per tenant');
  });

  test('lists page without gaps or repeats', async () => {
    const { session } = await makeSignedInTenant(h);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await makeKey(h, session)).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const r = await h.request('GET', `/api/v1/company/api-keys${q}`, { session });
      seen.push(...r.body.data.map((k: { id: string }) => k.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      [...ids].reverse(),
      'paging the key list skips or repeats keys, or is not newest first',
    );
  });
});

describe('bad key requests', () => {
  test('each field is checked; 400 names the field; nothing is created', async () => {
    const { session } = await makeSignedInTenant(h);
    const good = { name: 'k', scopes: ['integrations:READER'], expiresAt: inDays(10) };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, name: '' }, 'name'],
      [{ ...good, name: 'x'.repeat(101) }, 'name'],
      [{ ...good, scopes: [] }, 'scopes'],
      [{ ...good, scopes: ['integrations:READER', 'integrations:READER'] }, 'scopes'],
      [{ ...good, scopes: Array.from({ length: 21 }, (_, i) => `integrations:READER${i}`) }, 'scopes'],
      [{ ...good, scopes: ['billing:READER'] }, 'scopes.0'],
      [{ ...good, scopes: ['integrations:READER', 'integrations:OWNER'] }, 'scopes.1'],
      [{ ...good, scopes: ['integrations'] }, 'scopes.0'],
      [{ ...good, scopes: 'integrations:READER' }, 'scopes'],
      [{ ...good, expiresAt: undefined }, 'expiresAt'],
      [{ ...good, expiresAt: 'next week' }, 'expiresAt'],
      [{ ...good, expiresAt: new Date(Date.now() - 1000).toISOString() }, 'expiresAt'],
      [{ ...good, expiresAt: new Date(Date.now() + 30_000).toISOString() }, 'expiresAt'],
      [{ ...good, expiresAt: inDays(367) }, 'expiresAt'],
      [{ ...good, owner: 'me' }, 'owner'],
    ];
    for (const [body, field] of cases) {
      const r = await h.request('POST', '/api/v1/company/api-keys', { session, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(
        r.body.code,
        'validation_failed',
        `a bad key request is refused with another code than validation_failed: ${JSON.stringify(body)}`,
      );
      assert.ok(
        r.body.errors.some((e: { path: string }) => e.path === field),
        `${field}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    const r = await h.request('POST', '/api/v1/company/api-keys', {
      session,
      body: { ...good, expiresAt: inDays(366) },
    });
    assert.equal(r.status, 201, '366 days is allowed');
    const list = await h.request('GET', '/api/v1/company/api-keys', { session });
    assert.equal(list.body.data.length, 1, 'a refused key request created a key anyway');
  });

  test('a scope of a module the tenant is not entitled to is 403 entitlement_missing', async () => {
    const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const r = await h.request('POST', '/api/v1/company/api-keys', {
      session,
      body: { name: 'k', scopes: ['integration_hub:READER'], expiresAt: inDays(1) },
    });
    assert.equal(r.status, 403, 'a key with a scope of an unentitled module is not refused with 403');
    assert.equal(
      r.body.code,
      'entitlement_missing',
      'an unentitled scope is refused with another code than entitlement_missing',
    );
  });

  test('rotate checks its fields', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    for (const body of [
      { previousSecretValidForSeconds: -1 },
      { previousSecretValidForSeconds: 86_401 },
      { expiresAt: 'soon' },
      { keep: true },
    ]) {
      const r = await h.request('POST', `/api/v1/company/api-keys/${key.id}/rotate`, { session, body });
      assert.equal(r.status, 400, JSON.stringify(body));
    }
    assert.equal((await health(key.secret)).status, 200, 'not rotated');
  });
});

describe('who may manage keys', () => {
  test('COMPANY_IT_ADMIN, EXECUTIVE and PLATFORM_ADMIN may; MEMBER is 403 role_forbidden on every key route', async () => {
    const { tenant } = await makeSignedInTenant(h);
    for (const role of ['EXECUTIVE', 'PLATFORM_ADMIN']) {
      const session = await signIn(h, await makeUser(h, tenant.id, { role }));
      await makeKey(h, session);
    }
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/company/api-keys'],
      [
        'POST',
        '/api/v1/company/api-keys',
        { name: 'k', scopes: ['integrations:READER'], expiresAt: inDays(1) },
      ],
      ['POST', '/api/v1/company/api-keys/key_0000000000000000000000/rotate'],
      ['DELETE', '/api/v1/company/api-keys/key_0000000000000000000000'],
      ['GET', '/api/v1/company/api-keys/allowed-scopes'],
    ];
    for (const [method, path, body] of routes) {
      const r = await h.request(method, path, { session: member, body });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(
        r.body.code,
        'role_forbidden',
        `${method} ${path}: a MEMBER is refused with another code than role_forbidden`,
      );
    }
  });

  test('an automation key on any key-management route is 403 interactive_session_required', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN', 'integration_hub:ADMIN'] });
    for (const [method, path] of [
      ['GET', '/api/v1/company/api-keys'],
      ['POST', '/api/v1/company/api-keys'],
      ['POST', `/api/v1/company/api-keys/${key.id}/rotate`],
      ['DELETE', `/api/v1/company/api-keys/${key.id}`],
      ['GET', '/api/v1/company/api-keys/allowed-scopes'],
    ] as const) {
      const r = await h.request(method, path, {
        token: key.secret,
        body: method === 'POST' ? {} : undefined,
      });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(
        r.body.code,
        'interactive_session_required',
        `${method} ${path}: an automation key is refused with another code than interactive_session_required`,
      );
    }
    assert.equal((await health(key.secret)).status, 200, 'the key is still alive');
  });

  test('allowed-scopes lists every module with its levels and whether the tenant is entitled', async () => {
    const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const r = await h.request('GET', '/api/v1/company/api-keys/allowed-scopes', { session });
    assert.equal(r.status, 200, 'listing allowed scopes fails');
    assert.deepEqual(
      r.body,
      {
        modules: [
          { moduleKey: 'integrations', levels: ['READER', 'OPERATOR', 'ADMIN'], entitled: true },
          { moduleKey: 'integration_hub', levels: ['READER', 'OPERATOR', 'ADMIN'], entitled: false },
        ],
        scopes: ['integrations:READER', 'integrations:OPERATOR', 'integrations:ADMIN'],
      },
      'allowed scopes show other modules, levels or entitlements than the tenant has',
    );
  });
});
