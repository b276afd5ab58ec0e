import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { createPlatformKey } from '../../src/keys/platform-keys.js';
import { startServe, type RunningServer } from '../helpers/cli.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';

// Two `hubgate serve` processes on one PostgreSQL database publishing for one tenant at once: its
// `eventsPerDay` quota holds across them exactly (docs/api/quotas.md). PostgreSQL only: the embedded
// database belongs to one process.
if (ENGINE === 'postgres') {
  const secretKey = randomBytes(32);
  let db: TestDatabase;
  let plt: string;
  const servers: RunningServer[] = [];

  before(async () => {
    db = await createTestDatabase();
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    const keyring = createKeyring(secretKey);
    plt = (await createPlatformKey(db.database.kysely, keyring, { name: 'ops', expiresAt: null }, new Date()))
      .secret;
    const env = {
      DATABASE_URL: db.target.url,
      HUBGATE_SECRET_KEY: secretKey.toString('base64'),
      RATE_LIMIT_PER_MINUTE: '100000',
    };
    servers.push(...(await Promise.all([startServe(env), startServe(env)])));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await db?.drop();
  });

  async function call(server: RunningServer, method: string, path: string, token: string, body?: unknown) {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: text ? JSON.parse(text) : undefined,
    };
  }

  /** An automation key of the tenant with `integrations:OPERATOR`, made by its first admin. */
  async function tenantKey(server: RunningServer, tenantId: string): Promise<string> {
    const email = `admin-${randomBytes(4).toString('hex')}@example.com`;
    const password = 'a long passphrase for quota tests';
    const user = await call(server, 'POST', `/api/v1/platform/tenants/${tenantId}/users`, plt, {
      email,
      role: 'COMPANY_IT_ADMIN',
      password,
    });
    assert.equal(user.status, 201, `creating a user: ${user.text}`);
    const login = await fetch(`${server.baseUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    assert.equal(login.status, 200, `signing in answered ${login.status}`);
    const { csrfToken } = (await login.json()) as { csrfToken: string };
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const key = await fetch(`${server.baseUrl}/api/v1/company/api-keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrfToken },
      body: JSON.stringify({
        name: 'quota',
        scopes: ['integrations:OPERATOR'],
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      }),
    });
    const created = (await key.json()) as { secret?: string };
    assert.equal(key.status, 201, `creating a key answered ${key.status}`);
    return created.secret ?? '';
  }

  test('two processes publishing at once to a tenant with eventsPerDay = N create exactly N events; the rest are 429', async () => {
    const [a, b] = servers as [RunningServer, RunningServer];
    const tenant = await call(a, 'POST', '/api/v1/platform/tenants', plt, {
      name: 'quota',
      entitlements: ['integrations'],
    });
    assert.equal(tenant.status, 201, `creating a tenant: ${tenant.text}`);
    const tenantId = tenant.body.id as string;
    const token = await tenantKey(a, tenantId);
    const N = 25;
    const set = await call(b, 'PUT', `/api/v1/platform/tenants/${tenantId}/quotas`, plt, {
      eventsPerDay: N,
      connections: null,
      requestsPerMinute: null,
      retentionDays: null,
    });
    assert.equal(set.status, 200, `setting the quota: ${set.text}`);
    // Both processes read the quota fresh: a's cache has never seen the tenant.
    const answers = await Promise.all(
      Array.from({ length: 2 * N }, (_, i) =>
        call(i % 2 === 0 ? a : b, 'POST', '/api/v1/integrations/events', token, {
          type: 'order.created',
          data: { i },
        }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    const other = answers
      .filter((r) => r.status !== 202 && r.status !== 429)
      .map((r) => `${r.status} ${r.text}`);
    assert.deepEqual(other, [], 'a publish answered something else than 202 or 429');
    assert.equal(statuses.filter((s) => s === 202).length, N, `not exactly ${N} publishes were accepted`);
    for (const refused of answers.filter((r) => r.status === 429)) {
      assert.equal(refused.body.code, 'quota_exceeded', `a refusal is not quota_exceeded: ${refused.text}`);
      assert.ok(Number(refused.headers.get('retry-after')) > 0, 'a refusal has no Retry-After');
    }
    const { n } = await db.database.kysely
      .selectFrom('events')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('tenant_id', '=', tenantId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(n), N, `the processes created ${n} events, not ${N}`);
  });
}
