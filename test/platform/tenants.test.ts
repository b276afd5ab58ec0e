import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyPassword } from '../../src/crypto/passwords.js';
import { assertNoLeak, makeTenant, makeUser } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const auditRows = (targetId: string) =>
  h.database.kysely.selectFrom('audit_log').selectAll().where('target_id', '=', targetId).execute();

describe('tenants', () => {
  test('create answers 201 with the tenant and records an audit row', async () => {
    const response = await h.request('POST', '/api/v1/platform/tenants', {
      token: h.platformToken,
      body: { name: 'Acme GmbH', entitlements: ['integration_hub', 'integrations'] },
    });
    assert.equal(response.status, 201, 'a tenant cannot be created');
    assert.match(response.body.id, /^ten_[0-9A-Za-z]{22}$/, 'the tenant ID is not a ten_ ID');
    assert.equal(response.body.name, 'Acme GmbH', "the tenant's name was not kept");
    assert.deepEqual(
      response.body.entitlements,
      ['integration_hub', 'integrations'],
      "the tenant's entitlements were not kept",
    );
    assert.ok(!Number.isNaN(Date.parse(response.body.createdAt)), 'the tenant has no valid creation time');
    assert.equal(response.headers.get('cache-control'), 'no-store', 'the tenant answer may be cached');
    assert.match(response.headers.get('x-request-id') ?? '', /^req_/, 'the answer has no request ID');

    const [audit] = await auditRows(response.body.id);
    assert.equal(audit?.action, 'tenant.create', 'the creation is not audited as tenant.create');
    assert.equal(audit?.actor_type, 'platform_key', 'the creation is not audited as by the platform key');
    assert.equal(audit?.tenant_id, response.body.id, 'the creation is filed under another tenant');
    assert.equal(
      audit?.request_id,
      response.headers.get('x-request-id'),
      'the audit row carries another request ID than the answer',
    );
    assert.ok(audit?.ip, 'the audit row has no client address');
  });

  test('entitlements default to none', async () => {
    const response = await h.request('POST', '/api/v1/platform/tenants', {
      token: h.platformToken,
      body: { name: 'Bare' },
    });
    assert.equal(response.status, 201, 'a tenant without entitlements cannot be created');
    assert.deepEqual(response.body.entitlements, [], 'a tenant created without entitlements has some');
  });

  test('read one tenant', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const response = await h.request('GET', `/api/v1/platform/tenants/${tenant.id}`, {
      token: h.platformToken,
    });
    assert.equal(response.status, 200, 'a tenant cannot be read');
    assert.deepEqual(response.body, tenant, 'the tenant read differs from the one created');
  });

  test('unknown and malformed tenant IDs are 404 not_found', async () => {
    for (const id of ['ten_0000000000000000000000', 'nope', 'usr_0000000000000000000000', '%20']) {
      const response = await h.request('GET', `/api/v1/platform/tenants/${id}`, { token: h.platformToken });
      assert.equal(response.status, 404, id);
      assert.equal(
        response.body.code,
        'not_found',
        `${id}: an unknown or malformed tenant ID is refused for another reason than not_found`,
      );
    }
  });

  test('PUT entitlements replaces the set, is audited with before and after', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const response = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
      token: h.platformToken,
      body: { entitlements: ['integration_hub'] },
    });
    assert.equal(response.status, 200, 'the entitlements cannot be replaced');
    assert.deepEqual(
      response.body.entitlements,
      ['integration_hub'],
      'the answer does not show the new entitlements',
    );
    const read = await h.request('GET', `/api/v1/platform/tenants/${tenant.id}`, { token: h.platformToken });
    assert.deepEqual(
      read.body.entitlements,
      ['integration_hub'],
      'the tenant read back does not show the new entitlements',
    );
    const audit = (await auditRows(tenant.id)).find((r) => r.action === 'tenant.entitlements.update');
    assert.deepEqual(
      audit?.metadata,
      { before: ['integrations'], after: ['integration_hub'] },
      'the change is not audited with its before and after',
    );

    const cleared = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
      token: h.platformToken,
      body: { entitlements: [] },
    });
    assert.deepEqual(cleared.body.entitlements, [], 'the entitlements cannot be cleared');
  });

  test('PUT entitlements on an unknown tenant is 404 and writes nothing', async () => {
    const before = await h.database.kysely.selectFrom('audit_log').select('id').execute();
    const response = await h.request(
      'PUT',
      '/api/v1/platform/tenants/ten_0000000000000000000000/entitlements',
      {
        token: h.platformToken,
        body: { entitlements: ['integrations'] },
      },
    );
    assert.equal(response.status, 404, 'entitlements of an unknown tenant can be replaced');
    const afterRows = await h.database.kysely.selectFrom('audit_log').select('id').execute();
    assert.equal(afterRows.length, before.length, 'a refused change of entitlements was audited');
  });

  test('bad tenant bodies are 400 validation_failed naming the field, and nothing is stored', async () => {
    const count = async () => (await h.database.kysely.selectFrom('tenants').select('id').execute()).length;
    const initial = await count();
    const cases: Array<[unknown, string]> = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: 'ok', entitlements: ['billing'] }, 'entitlements'],
      [{ name: 'ok', entitlements: ['integrations', 'integrations'] }, 'entitlements'],
      [{ name: 'ok', entitlements: 'integrations' }, 'entitlements'],
      [{ name: 'ok', plan: 'gold' }, 'plan'],
      [[], 'body'],
      ['just a string', 'body'],
    ];
    for (const [body, field] of cases) {
      const response = await h.request('POST', '/api/v1/platform/tenants', { token: h.platformToken, body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(
        response.body.code,
        'validation_failed',
        `${JSON.stringify(body)}: refused for another reason than validation`,
      );
      assert.ok(
        response.body.errors.some((e: { path: string }) => e.path.startsWith(field)),
        `${JSON.stringify(body)} → ${JSON.stringify(response.body.errors)}`,
      );
    }
    assert.equal(await count(), initial, 'a refused tenant body stored a tenant');
  });
});

describe('tenant list', () => {
  test('pages newest first without gaps or repeats', async () => {
    const created = [];
    for (let i = 0; i < 5; i++) created.push((await makeTenant(h, { name: `page-${i}` })).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const response = await h.request('GET', `/api/v1/platform/tenants${query}`, { token: h.platformToken });
      assert.equal(response.status, 200, 'a page of the tenant list cannot be read');
      assert.ok(response.body.data.length <= 2, 'a page holds more tenants than the limit');
      seen.push(...response.body.data.map((t: { id: string }) => t.id));
      cursor = response.body.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    assert.equal(new Set(seen).size, seen.length, 'no repeats');
    const all = await h.database.kysely.selectFrom('tenants').select('id').execute();
    assert.equal(seen.length, all.length, 'no gaps');
    // Newest first: the five just made lead, in reverse order of creation.
    assert.deepEqual(seen.slice(0, 5), [...created].reverse(), 'the newest tenants are not listed first');
  });

  test('default page size is 20 and nextCursor is null on the last page', async () => {
    const response = await h.request('GET', '/api/v1/platform/tenants', { token: h.platformToken });
    assert.equal(response.status, 200, 'the tenant list cannot be read');
    assert.ok(response.body.data.length <= 20, 'the default page holds more than 20 tenants');
    const big = await h.request('GET', '/api/v1/platform/tenants?limit=100', { token: h.platformToken });
    assert.equal(big.body.nextCursor, null, 'the last page offers another page');
  });

  test('a bad limit or cursor is 400 validation_failed', async () => {
    for (const query of [
      'limit=0',
      'limit=101',
      'limit=abc',
      'limit=1.5',
      'cursor=garbage',
      'cursor=',
      'sort=name',
    ]) {
      const response = await h.request('GET', `/api/v1/platform/tenants?${query}`, {
        token: h.platformToken,
      });
      assert.equal(response.status, 400, query);
      assert.equal(response.body.code, 'validation_failed', query);
    }
  });
});

describe('users', () => {
  test('create a user: 201 without the password, stored hashed with Argon2id, audited', async () => {
    const tenant = await makeTenant(h);
    const password = 'a long enough password 123';
    const response = await h.request('POST', `/api/v1/platform/tenants/${tenant.id}/users`, {
      token: h.platformToken,
      body: { email: 'Ada@Example.com', role: 'EXECUTIVE', password },
    });
    assert.equal(response.status, 201, 'a user cannot be created');
    assert.deepEqual(
      Object.keys(response.body).sort(),
      ['email', 'id', 'role', 'tenantId'],
      'the user answer shows the password or lacks a field',
    );
    assert.match(response.body.id, /^usr_/, 'the user ID is not a usr_ ID');
    assert.equal(response.body.email, 'ada@example.com', 'the e-mail address is not stored lower-cased');
    assert.equal(response.body.tenantId, tenant.id, 'the user is in another tenant');

    const row = await h.database.kysely
      .selectFrom('users')
      .selectAll()
      .where('id', '=', response.body.id)
      .executeTakeFirstOrThrow();
    assert.match(
      row.password_hash ?? '',
      /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/,
      'the password is not hashed with Argon2id at the cost docs/api/platform.md states',
    );
    assert.ok(
      await verifyPassword(row.password_hash ?? '', password),
      'the stored hash does not verify the password',
    );

    const [audit] = await auditRows(response.body.id);
    assert.equal(audit?.action, 'user.create', "the user's creation is not audited as user.create");
    assert.ok(!JSON.stringify(audit).includes(password), 'the audit row carries the password');
    assertNoLeak(h, [password]);
  });

  test('every role of docs/api/authentication.md can be created', async () => {
    const tenant = await makeTenant(h);
    for (const role of ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN', 'MEMBER']) {
      const user = await makeUser(h, tenant.id, { role });
      assert.equal(user.role, role, `a ${role} user is created with another role`);
    }
  });

  test('an e-mail address already in use (in any tenant, any case) is 409 conflict', async () => {
    const a = await makeTenant(h);
    const b = await makeTenant(h);
    await makeUser(h, a.id, { email: 'taken@example.com' });
    const response = await h.request('POST', `/api/v1/platform/tenants/${b.id}/users`, {
      token: h.platformToken,
      body: { email: 'TAKEN@example.com', role: 'MEMBER', password: 'another long password' },
    });
    assert.equal(response.status, 409, 'an e-mail address in use in another tenant is taken again');
    assert.equal(
      response.body.code,
      'conflict',
      'the duplicate address is refused for another reason than conflict',
    );
  });

  test('bad user bodies are 400 naming the field; nothing stored', async () => {
    const tenant = await makeTenant(h);
    const good = { email: 'new@example.com', role: 'MEMBER', password: 'twelve chars!' };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...good, email: 'not-an-email' }, 'email'],
      [{ ...good, role: 'ROOT' }, 'role'],
      [{ ...good, password: 'short' }, 'password'],
      [{ ...good, password: 'x'.repeat(201) }, 'password'],
      [{ ...good, password: 123456789012 }, 'password'],
      [{ ...good, isAdmin: true }, 'isAdmin'],
      [{ email: good.email, role: good.role }, 'password'],
    ];
    for (const [body, field] of cases) {
      const response = await h.request('POST', `/api/v1/platform/tenants/${tenant.id}/users`, {
        token: h.platformToken,
        body,
      });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(
        response.body.code,
        'validation_failed',
        `${JSON.stringify(body)}: refused for another reason than validation`,
      );
      assert.ok(
        response.body.errors.some((e: { path: string }) => e.path === field),
        JSON.stringify(response.body),
      );
    }
    const users = await h.database.kysely
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .execute();
    assert.equal(users.length, 0, 'a refused user body stored a user');
    assertNoLeak(h, ['twelve chars!']);
  });

  test('a user for an unknown tenant is 404', async () => {
    const response = await h.request('POST', '/api/v1/platform/tenants/ten_0000000000000000000000/users', {
      token: h.platformToken,
      body: { email: 'ghost@example.com', role: 'MEMBER', password: 'long enough password' },
    });
    assert.equal(response.status, 404, 'a user can be created for an unknown tenant');
    assert.equal(
      response.body.code,
      'not_found',
      'the user for an unknown tenant is refused for another reason than not_found',
    );
  });
});
