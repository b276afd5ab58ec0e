import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { createPlatformKey } from '../../src/keys/platform-keys.js';
import { startServe, type RunningServer } from '../helpers/cli.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';
import { grantAccess } from '../mcp-oauth/flow.js';

// Two `hubgate serve` processes on one PostgreSQL database: what one revokes, the other refuses
// within 1 second (docs/api/authentication.md). PostgreSQL run only: the embedded database is single-process.
if (ENGINE === 'postgres') {
  let db: TestDatabase;
  let a: RunningServer;
  let b: RunningServer;
  let plt: string;
  const secretKey = randomBytes(32);

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
    };
    [a, b] = await Promise.all([startServe(env), startServe(env)]);
  });
  after(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db.drop();
  });

  async function call(
    server: RunningServer,
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ) {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  /** Milliseconds until `server` first refuses `secret`, asking every 20 ms for at most 3 s. */
  function msUntilRefused(
    server: RunningServer,
    secret: string,
    since: number,
    path = '/api/v1/automation/health',
  ): Promise<number> {
    return waitUntil(
      async () => {
        const r = await call(server, 'GET', path, {
          authorization: `Bearer ${secret}`,
        });
        return r.status === 401 && Date.now() - since;
      },
      { message: 'the other process refusing the secret', timeoutMs: 3_000, intervalMs: 20 },
    );
  }

  async function signedInAdmin() {
    const auth = { authorization: `Bearer ${plt}` };
    const tenant = await call(a, 'POST', '/api/v1/platform/tenants', auth, {
      name: 'Acme',
      entitlements: ['integrations'],
    });
    const email = `it-${randomBytes(4).toString('hex')}@acme.example`;
    await call(a, 'POST', `/api/v1/platform/tenants/${tenant.body.id}/users`, auth, {
      email,
      role: 'COMPANY_IT_ADMIN',
      password: 'a long passphrase',
    });
    const login = await call(a, 'POST', '/api/v1/auth/login', {}, { email, password: 'a long passphrase' });
    assert.equal(login.status, 200, 'the IT admin cannot sign in');
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    return { cookie, 'x-csrf-token': login.body.csrfToken as string };
  }

  const newKey = async (session: Record<string, string>) => {
    const r = await call(a, 'POST', '/api/v1/company/api-keys', session, {
      name: 'k',
      scopes: ['integrations:READER'],
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    assert.equal(r.status, 201, 'creating a key fails');
    return r.body as { id: string; secret: string };
  };

  test('a key revoked on one process is refused by the other within 1 second', async (t) => {
    const session = await signedInAdmin();
    const key = await newKey(session);
    assert.equal(
      (await call(b, 'GET', '/api/v1/automation/health', { authorization: `Bearer ${key.secret}` })).status,
      200,
      'a fresh key is refused by the other process',
    );
    const revoked = await call(a, 'DELETE', `/api/v1/company/api-keys/${key.id}`, session);
    assert.equal(revoked.status, 204, 'revoking the key fails');
    const ms = await msUntilRefused(b, key.secret, Date.now());
    t.diagnostic(`refused after ${ms} ms`);
    assert.ok(ms < 1000, `refused after ${ms} ms`);
  });

  test('a rotated-out secret is refused by the other process within 1 second; the new one works there', async (t) => {
    const session = await signedInAdmin();
    const key = await newKey(session);
    assert.equal(
      (await call(b, 'GET', '/api/v1/automation/health', { authorization: `Bearer ${key.secret}` })).status,
      200,
      'a fresh key is refused by the other process',
    );
    const rotated = await call(a, 'POST', `/api/v1/company/api-keys/${key.id}/rotate`, session);
    assert.equal(rotated.status, 200, 'rotating the key fails');
    const ms = await msUntilRefused(b, key.secret, Date.now());
    t.diagnostic(`refused after ${ms} ms`);
    assert.ok(ms < 1000, `refused after ${ms} ms`);
    assert.equal(
      (await call(b, 'GET', '/api/v1/automation/health', { authorization: `Bearer ${rotated.body.secret}` }))
        .status,
      200,
      'the new secret is refused by the other process',
    );
  });

  test('a session signed out on one process is refused by the other at once', async () => {
    const session = await signedInAdmin();
    assert.equal(
      (await call(b, 'GET', '/api/v1/auth/session', { cookie: session.cookie })).status,
      200,
      'a fresh session is refused by the other process',
    );
    assert.equal((await call(a, 'POST', '/api/v1/auth/logout', session)).status, 204, 'signing out fails');
    assert.equal(
      (await call(b, 'GET', '/api/v1/auth/session', { cookie: session.cookie })).status,
      401,
      'a signed-out session still works on the other process',
    );
  });

  test('a portal session ended on one process: its token is refused by the other within 1 second', async (t) => {
    const auth = { authorization: `Bearer ${plt}` };
    const tenant = await call(a, 'POST', '/api/v1/platform/tenants', auth, {
      name: 'Portal',
      entitlements: ['integrations'],
    });
    const sessions = `/api/v1/platform/tenants/${tenant.body.id}/portal-sessions`;
    const created = await call(a, 'POST', sessions, auth, { subject: 'kim' });
    assert.equal(created.status, 201, 'starting a portal session fails');
    const code = new URL(created.body.url as string).hash.replace(/^#code=/, '');
    const exchanged = await call(a, 'POST', '/api/v1/portal/exchange', {}, { code });
    assert.equal(exchanged.status, 200, 'exchanging the code fails');
    const token = exchanged.body.token as string;
    assert.equal(
      (await call(b, 'GET', '/api/v1/portal/session', { authorization: `Bearer ${token}` })).status,
      200,
      'a fresh portal token is refused by the other process',
    );
    const ended = await call(a, 'DELETE', `${sessions}/${created.body.id}`, auth);
    assert.equal(ended.status, 204, 'ending the portal session fails');
    const ms = await msUntilRefused(b, token, Date.now(), '/api/v1/portal/session');
    t.diagnostic(`refused after ${ms} ms`);
    assert.ok(ms < 1000, `refused after ${ms} ms`);
  });

  test('an MCP client’s grant revoked on one process: its access token is refused by the other within 1 second', async (t) => {
    const session = await signedInAdmin();
    const granted = await grantAccess(
      a.baseUrl,
      undefined,
      { cookie: session.cookie, csrfToken: session['x-csrf-token'] },
      ['integrations:READER'],
    );
    const toolsList = () =>
      call(
        b,
        'POST',
        '/api/v1/mcp',
        { authorization: `Bearer ${granted.access}`, accept: 'application/json, text/event-stream' },
        { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
      );
    assert.equal((await toolsList()).status, 200, 'a fresh grant is refused by the other process');
    const grants = await call(a, 'GET', '/api/v1/company/oauth-grants', session);
    const [grant] = grants.body.data as Array<{ id: string }>;
    const revoked = await call(a, 'DELETE', `/api/v1/company/oauth-grants/${grant?.id}`, session);
    assert.equal(revoked.status, 204, 'revoking the grant fails');
    const since = Date.now();
    const ms = await waitUntil(async () => (await toolsList()).status === 401 && Date.now() - since, {
      message: 'the other process refusing the grant',
      timeoutMs: 3_000,
      intervalMs: 20,
    });
    t.diagnostic(`refused after ${ms} ms`);
    assert.ok(ms < 1000, `refused after ${ms} ms`);
  });

  test('a source paused on one process: its ingest URL answers 503 on the other within 1 second', async (t) => {
    const session = await signedInAdmin();
    const secret = 'a github webhook secret';
    const created = await call(a, 'POST', '/api/v1/integrations/sources', session, {
      name: 'gh',
      scheme: 'github',
      secret,
    });
    assert.equal(created.status, 201, 'creating the source fails');
    const path = new URL(created.body.ingestUrl as string).pathname;
    let n = 0;
    const push = async () => {
      const body = JSON.stringify({ ref: 'refs/heads/main', n: ++n });
      const response = await fetch(`${b.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
          'x-github-event': 'push',
          'x-github-delivery': `d-${n}`,
        },
        body,
      });
      await response.arrayBuffer();
      return response.status;
    };
    assert.equal(await push(), 202, 'the other process refuses a signed request to an active source');
    const paused = await call(a, 'PATCH', `/api/v1/integrations/sources/${created.body.id}`, session, {
      status: 'paused',
    });
    assert.equal(paused.status, 200, 'pausing the source fails');
    const since = Date.now();
    const ms = await waitUntil(async () => (await push()) === 503 && Date.now() - since, {
      message: 'the other process refusing the paused source',
      timeoutMs: 3_000,
      intervalMs: 20,
    });
    t.diagnostic(`refused after ${ms} ms`);
    assert.ok(ms < 1000, `refused after ${ms} ms`);
  });
}
