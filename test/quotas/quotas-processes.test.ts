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
      // Not reached; its bucket's name in a's answers shows a's cache has read the new quotas.
      requestsPerMinute: 100_000,
      retentionDays: null,
    });
    assert.equal(set.status, 200, `setting the quota: ${set.text}`);
    // a read the tenant's quotas (none) while its key was made, and trusts them for a second
    // (docs/api/quotas.md); the quotas apply there once an answer names the tenant's bucket.
    for (;;) {
      const r = await call(a, 'GET', '/api/v1/automation/health', token);
      if ((r.headers.get('ratelimit-policy') ?? '').includes('"tenant"')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
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

  test('two processes hammering a tenant with requestsPerMinute = 100, a key through each: together they admit 100 within 10 %', async () => {
    const [a, b] = servers as [RunningServer, RunningServer];
    const tenant = await call(a, 'POST', '/api/v1/platform/tenants', plt, {
      name: 'requests',
      entitlements: ['integrations'],
    });
    assert.equal(tenant.status, 201, `creating a tenant: ${tenant.text}`);
    const tenantId = tenant.body.id as string;
    const [onA, onB] = [await tenantKey(a, tenantId), await tenantKey(b, tenantId)];
    const LIMIT = 100;
    // Well inside one fixed minute: the whole hammering must fall in one window.
    const second = new Date().getUTCSeconds();
    if (second > 40) await new Promise((resolve) => setTimeout(resolve, (61 - second) * 1000));
    const set = await call(a, 'PUT', `/api/v1/platform/tenants/${tenantId}/quotas`, plt, {
      eventsPerDay: null,
      connections: null,
      requestsPerMinute: LIMIT,
      retentionDays: null,
    });
    assert.equal(set.status, 200, `setting the quota: ${set.text}`);
    const health = (server: RunningServer, token: string) =>
      call(server, 'GET', '/api/v1/automation/health', token);
    // Each process applies the quota once its cache has read it: the first answer that names the
    // tenant's bucket says so (a at once, b within its cache's second).
    let admitted = 0;
    for (const [server, token] of [
      [a, onA],
      [b, onB],
    ] as const) {
      for (;;) {
        const r = await health(server, token);
        // Before its cache read the quota, a process counted nothing on the tenant's bucket
        // (docs/api/quotas.md: within a second); the first answer that names the bucket was counted.
        if ((r.headers.get('ratelimit-policy') ?? '').includes('"tenant"')) {
          if (r.status === 200) admitted++;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    const answers = await Promise.all(
      Array.from({ length: 3 * LIMIT }, (_, i) => (i % 2 === 0 ? health(a, onA) : health(b, onB))),
    );
    const other = answers
      .filter((r) => r.status !== 200 && r.status !== 429)
      .map((r) => `${r.status} ${r.text}`);
    assert.deepEqual(other, [], 'a request answered something else than 200 or 429');
    admitted += answers.filter((r) => r.status === 200).length;
    assert.ok(
      admitted >= LIMIT * 0.9 && admitted <= LIMIT * 1.1,
      `the two processes admitted ${admitted} requests of the tenant, not ${LIMIT} within 10 %`,
    );
    for (const refused of answers.filter((r) => r.status === 429)) {
      assert.equal(refused.body.code, 'rate_limited', `a refusal is not rate_limited: ${refused.text}`);
      assert.match(refused.headers.get('ratelimit-policy') ?? '', /"tenant";q=100;w=60/, 'no tenant policy');
    }
  });
}
