import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { verifyPassword } from '../../src/crypto/passwords.js';
import { assertNoLeak, makeTenant, makeUser } from '../helpers/factories.js';
import { type Harness, startHarness } from '../helpers/harness.js';

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
    assert.equal(response.status, 201);
    assert.match(response.body.id, /^ten_[0-9A-Za-z]{22}$/);
    assert.equal(response.body.name, 'Acme GmbH');
    assert.deepEqual(response.body.entitlements, ['integration_hub', 'integrations']);
    assert.ok(!Number.isNaN(Date.parse(response.body.createdAt)));
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.match(response.headers.get('x-request-id') ?? '', /^req_/);

    const [audit] = await auditRows(response.body.id);
    assert.equal(audit?.action, 'tenant.create');
    assert.equal(audit?.actor_type, 'platform_key');
    assert.equal(audit?.tenant_id, response.body.id);
    assert.equal(audit?.request_id, response.headers.get('x-request-id'));
    assert.ok(audit?.ip);
  });

  test('entitlements default to none', async () => {
    const response = await h.request('POST', '/api/v1/platform/tenants', {
      token: h.platformToken,
      body: { name: 'Bare' },
    });
    assert.equal(response.status, 201);
    assert.deepEqual(response.body.entitlements, []);
  });

  test('read one tenant', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const response = await h.request('GET', `/api/v1/platform/tenants/${tenant.id}`, {
      token: h.platformToken,
    });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, tenant);
  });

  test('unknown and malformed tenant IDs are 404 not_found', async () => {
    for (const id of ['ten_0000000000000000000000', 'nope', 'usr_0000000000000000000000', '%20']) {
      const response = await h.request('GET', `/api/v1/platform/tenants/${id}`, { token: h.platformToken });
      assert.equal(response.status, 404, id);
      assert.equal(response.body.code, 'not_found');
    }
  });

  test('PUT entitlements replaces the set, is audited with before and after', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const response = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
      token: h.platformToken,
      body: { entitlements: ['integration_hub'] },
    });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.entitlements, ['integration_hub']);
    const read = await h.request('GET', `/api/v1/platform/tenants/${tenant.id}`, { token: h.platformToken });
    assert.deepEqual(read.body.entitlements, ['integration_hub']);
    const audit = (await auditRows(tenant.id)).find((r) => r.action === 'tenant.entitlements.update');
    assert.deepEqual(audit?.metadata, { before: ['integrations'], after: ['integration_hub'] });

    const cleared = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
      token: h.platformToken,
      body: { entitlements: [] },
    });
    assert.deepEqual(cleared.body.entitlements, []);
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
    assert.equal(response.status, 404);
    const afterRows = await h.database.kysely.selectFrom('audit_log').select('id').execute();
    assert.equal(afterRows.length, before.length);
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
      assert.equal(response.body.code, 'validation_failed');
      assert.ok(
        response.body.errors.some((e: { path: string }) => e.path.startsWith(field)),
        `${JSON.stringify(body)} → ${JSON.stringify(response.body.errors)}`,
      );
    }
    assert.equal(await count(), initial);
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
      assert.equal(response.status, 200);
      assert.ok(response.body.data.length <= 2);
      seen.push(...response.body.data.map((t: { id: string }) => t.id));
      cursor = response.body.nextCursor;
      pages++;
    } while (cursor && pages < 100);
    assert.equal(new Set(seen).size, seen.length, 'no repeats');
    const all = await h.database.kysely.selectFrom('tenants').select('id').execute();
    assert.equal(seen.length, all.length, 'no gaps');
    // Newest first: the five just made lead, in reverse order of creation.
    assert.deepEqual(seen.slice(0, 5), [...created].reverse());
  });

  test('default page size is 20 and nextCursor is null on the last page', async () => {
    const response = await h.request('GET', '/api/v1/platform/tenants', { token: h.platformToken });
    assert.equal(response.status, 200);
    assert.ok(response.body.data.length <= 20);
    const big = await h.request('GET', '/api/v1/platform/tenants?limit=100', { token: h.platformToken });
    assert.equal(big.body.nextCursor, null);
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
    assert.equal(response.status, 201);
    assert.deepEqual(Object.keys(response.body).sort(), ['email', 'id', 'role', 'tenantId']);
    assert.match(response.body.id, /^usr_/);
    assert.equal(response.body.email, 'ada@example.com');
    assert.equal(response.body.tenantId, tenant.id);

    const row = await h.database.kysely
      .selectFrom('users')
      .selectAll()
      .where('id', '=', response.body.id)
      .executeTakeFirstOrThrow();
    assert.match(row.password_hash ?? '', /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.ok(await verifyPassword(row.password_hash ?? '', password));

    const [audit] = await auditRows(response.body.id);
    assert.equal(audit?.action, 'user.create');
    assert.ok(!JSON.stringify(audit).includes(password));
    assertNoLeak(h, [password]);
  });

  test('every role of contract §4 can be created', async () => {
    const tenant = await makeTenant(h);
    for (const role of ['COMPANY_IT_ADMIN', 'EXECUTIVE', 'PLATFORM_ADMIN', 'MEMBER']) {
      const user = await makeUser(h, tenant.id, { role });
      assert.equal(user.role, role);
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
    assert.equal(response.status, 409);
    assert.equal(response.body.code, 'conflict');
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
      assert.equal(response.body.code, 'validation_failed');
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
    assert.equal(users.length, 0);
    assertNoLeak(h, ['twelve chars!']);
  });

  test('a user for an unknown tenant is 404', async () => {
    const response = await h.request('POST', '/api/v1/platform/tenants/ten_0000000000000000000000/users', {
      token: h.platformToken,
      body: { email: 'ghost@example.com', role: 'MEMBER', password: 'long enough password' },
    });
    assert.equal(response.status, 404);
    assert.equal(response.body.code, 'not_found');
  });
});
