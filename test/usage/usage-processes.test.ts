import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { createKeyring } from '../../src/crypto/keyring.js';
import { createPlatformKey } from '../../src/keys/platform-keys.js';
import { startServe, type RunningServer } from '../helpers/cli.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// Usage counted across processes (docs/api/usage.md, decision 0089): two `serve` processes publish to
// one tenant at once, each counting in its own memory and adding to the same hour rows; the usage
// equals the rows exactly. PostgreSQL only: the embedded database belongs to one process.
if (ENGINE === 'postgres') {
  const secretKey = randomBytes(32);
  const PASSWORD = 'a long passphrase for usage tests';
  let db: TestDatabase;
  let plt: string;
  const servers: RunningServer[] = [];

  before(async () => {
    db = await createTestDatabase();
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    plt = (
      await createPlatformKey(
        db.database.kysely,
        createKeyring(secretKey),
        { name: 'ops', expiresAt: null },
        new Date(),
      )
    ).secret;
    const env = {
      DATABASE_URL: db.target.url,
      HUBGATE_SECRET_KEY: secretKey.toString('base64'),
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_RETRY_SCHEDULE: '0,0',
      DELIVERY_TIMEOUT_MS: '5000',
      RATE_LIMIT_PER_MINUTE: '1000000',
    };
    const started = await Promise.allSettled([startServe(env), startServe(env)]);
    for (const s of started) if (s.status === 'fulfilled') servers.push(s.value);
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await db?.drop();
  });

  async function call(
    server: RunningServer,
    method: string,
    path: string,
    options: { token?: string; cookie?: string; csrf?: string; body?: unknown } = {},
  ) {
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.cookie) headers.cookie = options.cookie;
    if (options.csrf) headers['x-csrf-token'] = options.csrf;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON came back
      body: (text ? JSON.parse(text) : {}) as any,
    };
  }

  test('two serve processes publishing to one tenant at once: usage equals the rows exactly', async (t) => {
    const receiver = await startReceiver(t, (request, _i, res) => {
      const { data } = JSON.parse(request.body) as { data: { i: number } };
      // Every fifth event fails each of its three attempts.
      res.statusCode = data.i % 5 === 0 ? 500 : 200;
      res.end();
    });
    const [a, b] = [servers[0]!, servers[1]!];
    const tenant = await call(a, 'POST', '/api/v1/platform/tenants', {
      token: plt,
      body: { name: 'Usage', entitlements: ['integrations'] },
    });
    assert.equal(tenant.status, 201, `creating a tenant: ${tenant.text}`);
    const tenantId = tenant.body.id as string;
    const email = `admin-${randomBytes(4).toString('hex')}@example.com`;
    const user = await call(a, 'POST', `/api/v1/platform/tenants/${tenantId}/users`, {
      token: plt,
      body: { email, role: 'COMPANY_IT_ADMIN', password: PASSWORD },
    });
    assert.equal(user.status, 201, `creating a user: ${user.text}`);
    const login = await call(a, 'POST', '/api/v1/auth/login', { body: { email, password: PASSWORD } });
    assert.equal(login.status, 200, `signing in: ${login.text}`);
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = login.body.csrfToken as string;
    const created = await call(a, 'POST', '/api/v1/integrations/connections', {
      cookie,
      csrf,
      body: { connectorKey: 'webhook', displayName: 'usage', url: receiver.url('/usage') },
    });
    assert.equal(created.status, 201, `creating a connection: ${created.text}`);
    const bound = await call(a, 'PUT', `/api/v1/integrations/connections/${created.body.id}/credentials`, {
      cookie,
      csrf,
      body: {},
    });
    assert.equal(bound.status, 200, `binding credentials: ${bound.text}`);
    const key = await call(a, 'POST', '/api/v1/company/api-keys', {
      cookie,
      csrf,
      body: {
        name: 'usage',
        scopes: ['integrations:OPERATOR'],
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    assert.equal(key.status, 201, `creating a key: ${key.text}`);
    const token = key.body.secret as string;

    const EVENTS = 200;
    let next = 0;
    const refused: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < EVENTS) {
          const i = next++;
          const server = i % 2 === 0 ? a : b;
          const r =
            i % 10 === 1
              ? await call(server, 'POST', '/api/v1/integrations/events/batch', {
                  token,
                  body: {
                    events: [
                      { type: 'usage.batch', data: { i } },
                      { type: 'usage.batch', data: { i: i + 1 } },
                    ],
                  },
                })
              : await call(server, 'POST', '/api/v1/integrations/events', {
                  token,
                  body: { type: 'usage.test', data: { i } },
                });
          if (r.status !== 202) refused.push(`${i}: ${r.status} ${r.text}`);
        }
      }),
    );
    assert.deepEqual(refused, [], 'every publish is accepted');

    const kdb = db.database.kysely;
    const rows = async () => {
      const result = await sql<Record<string, string | number>>`
        select
          (select count(*) from events where tenant_id = ${tenantId}) as events,
          (select count(*) from deliveries where tenant_id = ${tenantId} and status = 'delivered') as delivered,
          (select count(*) from deliveries where tenant_id = ${tenantId} and status = 'failed') as failed,
          (select count(*) from deliveries where tenant_id = ${tenantId} and status = 'skipped') as skipped,
          (select count(*) from deliveries where tenant_id = ${tenantId}
            and status not in ('delivered', 'failed', 'skipped', 'cancelled')) as open,
          (select count(*) from delivery_attempts a join deliveries d
            on d.id = a.delivery_id and d.created_at = a.delivery_created_at
            where d.tenant_id = ${tenantId}) as attempts`.execute(kdb);
      return Object.fromEntries(Object.entries(result.rows[0]!).map(([k, v]) => [k, Number(v)])) as Record<
        'events' | 'delivered' | 'failed' | 'skipped' | 'open' | 'attempts',
        number
      >;
    };
    const settled = await waitUntil(
      async () => {
        const now = await rows();
        return now.open === 0 && now.events > 0 && now;
      },
      { message: 'every delivery settled', timeoutMs: 60_000 },
    );
    assert.ok(settled.failed > 0, 'no delivery failed: the run mixes failures with successes');
    let last = '';
    await waitUntil(
      async () => {
        const usage = await call(b, 'GET', `/api/v1/platform/usage?granularity=hour&tenantId=${tenantId}`, {
          token: plt,
        });
        assert.equal(usage.status, 200, `the platform usage answered ${usage.status}: ${usage.text}`);
        const sum = { events: 0, delivered: 0, failed: 0, skipped: 0, attempts: 0 };
        for (const bucket of usage.body.data as Array<{
          eventsPublished: number;
          deliveries: { delivered: number; failed: number; skipped: number };
          attempts: number;
        }>) {
          sum.events += bucket.eventsPublished;
          sum.delivered += bucket.deliveries.delivered;
          sum.failed += bucket.deliveries.failed;
          sum.skipped += bucket.deliveries.skipped;
          sum.attempts += bucket.attempts;
        }
        const { open: _open, ...expected } = settled;
        last = `usage ${JSON.stringify(sum)}, rows ${JSON.stringify(expected)}`;
        return JSON.stringify(sum) === JSON.stringify(expected);
      },
      { message: () => `usage to equal the rows: ${last}`, timeoutMs: 15_000 },
    );
  });
}
