import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNoLeak, makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';

// Connect links (docs/api/connect-links.md): made by a tenant key, a session or a platform key,
// completed with no account by whoever holds the link.

const PUBLIC_URL = 'https://hub.example.com';
const LINKS = '/api/v1/integrations/connect-sessions';
const SESSION = '/api/v1/connect/session';
const COMPLETE = '/api/v1/connect/complete';
const SIGNING_SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

let h: Harness;
const codes: string[] = [];
before(async () => {
  h = await startHarness({ env: { PUBLIC_URL, TRUST_PROXY: '1' } });
});
after(() => h.close());

// Each public call from its own address, so the per-address throttle counts only where a test means it.
let nextAddress = 1;
const newAddress = () => `198.51.100.${nextAddress++}`;
const fromNewAddress = () => ({ 'x-forwarded-for': newAddress() });

interface NewLink {
  id: string;
  url: string;
  status: string;
  connectorKey: string;
  subject: string;
  connectionId: string | null;
  expiresAt: string;
  createdAt: string;
}

const codeOf = (link: NewLink): string => {
  const code = new URL(link.url).hash.replace(/^#code=/, '');
  codes.push(code);
  return code;
};

async function makeLink(session: TestSession, body: Record<string, unknown>): Promise<NewLink> {
  const r = await h.request<NewLink>('POST', LINKS, { session, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

const webhookLink = (session: TestSession, extra: Record<string, unknown> = {}) =>
  makeLink(session, { connectorKey: 'webhook', subject: 'customer-42', ...extra });

const complete = (body: Record<string, unknown>, headers = fromNewAddress()): Promise<TestResponse> =>
  h.request('POST', COMPLETE, { body, headers });

function assertProblem(r: TestResponse, status: number, code: string, path?: string): void {
  assert.equal(r.status, status, r.text);
  assert.equal(r.body.code, code, r.text);
  if (path !== undefined)
    assert.ok(
      r.body.errors.some((e: { path: string }) => e.path === path),
      r.text,
    );
}

async function auditRows(session: TestSession) {
  const r = await h.request('GET', '/api/v1/company/audit-log?limit=100', { session });
  assert.equal(r.status, 200, r.text);
  return r.body.data as {
    action: string;
    actorType: string;
    actorId: string;
    metadata: Record<string, unknown>;
  }[];
}

describe('making connect links', () => {
  test('a tnt_ key with integrations:ADMIN, a session and a platform key each make one; the URL carries the code once', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    const body = {
      connectorKey: 'webhook',
      subject: 'acme-user-1',
      config: { url: 'https://hooks.example.com/a' },
    };
    const byKey = await h.request<NewLink>('POST', LINKS, { token: key.secret, body });
    assert.equal(byKey.status, 201, byKey.text);
    assert.match(byKey.body.id, /^cns_/, 'the ID is a cns_ ID');
    assert.match(
      byKey.body.url,
      new RegExp(`^${PUBLIC_URL}/connect/${tenant.id}#code=[0-9A-Za-z]{32}$`),
      'the URL is PUBLIC_URL/connect/<tenant>#code=<code>',
    );
    assert.equal(byKey.headers.get('cache-control'), 'no-store', 'an answer with the URL is not cached');
    assert.deepEqual(
      { ...byKey.body, id: '', url: '', expiresAt: '', createdAt: '' },
      {
        id: '',
        url: '',
        status: 'pending',
        connectorKey: 'webhook',
        subject: 'acme-user-1',
        connectionId: null,
        expiresAt: '',
        createdAt: '',
      },
      'the create answer as docs/api/connect-links.md shows it',
    );
    // The default life: one day.
    const life = Date.parse(byKey.body.expiresAt) - Date.parse(byKey.body.createdAt);
    assert.equal(life, 86_400_000, 'a link lives one day by default');
    const bySession = await webhookLink(session, { expiresInSeconds: 300 });
    assert.equal(
      Date.parse(bySession.expiresAt) - Date.parse(bySession.createdAt),
      300_000,
      'expiresInSeconds sets the life',
    );
    const byPlatform = await h.request<NewLink>(
      'POST',
      `/api/v1/platform/tenants/${tenant.id}/connect-sessions`,
      {
        token: h.platformToken,
        body,
      },
    );
    assert.equal(byPlatform.status, 201, byPlatform.text);
    const code = codeOf(byKey.body);
    codeOf(bySession);
    codeOf(byPlatform.body);

    // Lists and reads never show a code or URL.
    const listed = await h.request('GET', LINKS, { session });
    assert.equal(listed.status, 200, 'the list answers');
    assert.deepEqual(
      listed.body.data.map((l: NewLink) => l.id),
      [byPlatform.body.id, bySession.id, byKey.body.id],
      'the list holds the three links, newest first',
    );
    assert.ok(
      listed.body.data.every((l: object) => !('url' in l)),
      'no listed link shows its URL',
    );
    const platformList = await h.request('GET', `/api/v1/platform/tenants/${tenant.id}/connect-sessions`, {
      token: h.platformToken,
    });
    assert.equal(platformList.body.data.length, 3, 'the platform lists the tenant’s links');
    const one = await h.request('GET', `${LINKS}/${byKey.body.id}`, { token: key.secret });
    assert.equal(one.status, 200, 'one link reads');
    assert.equal(one.body.status, 'pending', 'an unused link is pending');
    assert.ok(!one.text.includes(code), 'a read never shows the code');
    assertNoLeak(h, [], [code]);
  });

  test('a platform key reads and deletes a tenant\u2019s link; another tenant\u2019s ID is 404', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const other = await makeSignedInTenant(h);
    const link = await webhookLink(session);
    codeOf(link);
    const path = `/api/v1/platform/tenants/${tenant.id}/connect-sessions/${link.id}`;
    const read = await h.request('GET', path, { token: h.platformToken });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.subject, 'customer-42', 'the platform reads the link');
    const foreign = `/api/v1/platform/tenants/${other.tenant.id}/connect-sessions/${link.id}`;
    assertProblem(await h.request('GET', foreign, { token: h.platformToken }), 404, 'not_found');
    assertProblem(await h.request('DELETE', foreign, { token: h.platformToken }), 404, 'not_found');
    const deleted = await h.request('DELETE', path, { token: h.platformToken });
    assert.equal(deleted.status, 204, deleted.text);
    assertProblem(await h.request('GET', path, { token: h.platformToken }), 404, 'not_found');
    const revoked = (await auditRows(session)).find((row) => row.action === 'connect_session.revoke');
    assert.equal(revoked?.actorType, 'platform_key', 'the delete is audited as the platform key');
  });

  test('an OAuth2 connector of the authorization-code grant is linked too (test/oauth/portal-and-links.test.ts completes one)', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = `connectlinks${Date.now().toString(36)}`;
    const provider = await h.request('POST', '/api/v1/platform/oauth-providers', {
      token: h.platformToken,
      body: {
        key,
        name: 'Example API',
        authorizationUrl: 'https://auth.example.com/authorize',
        tokenUrl: 'https://auth.example.com/token',
        apiBaseUrl: 'https://api.example.com/v1',
        clientId: 'hubgate-client',
        clientSecret: 'client-secret',
        scopes: ['read'],
      },
    });
    assert.equal(provider.status, 201, provider.text);
    const r = await h.request('POST', LINKS, {
      session,
      body: { connectorKey: `oauth2:${key}`, subject: 's' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status, 'pending', r.text);
    codeOf(r.body);
  });

  test('the list pages as every list does', async () => {
    const { session } = await makeSignedInTenant(h);
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await webhookLink(session, { subject: `person-${i}` }));
    made.forEach(codeOf);
    const first = await h.request('GET', `${LINKS}?limit=2`, { session });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.data.length, 2, 'a page of two');
    assert.ok(first.body.nextCursor, 'a cursor to the next page');
    const next = await h.request(
      'GET',
      `${LINKS}?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
      {
        session,
      },
    );
    assert.deepEqual(
      [...first.body.data, ...next.body.data].map((l: NewLink) => l.id),
      made.map((l) => l.id).reverse(),
      'both pages hold every link once, newest first',
    );
    assert.equal(next.body.nextCursor, null, 'no page after the last');
    assertProblem(await h.request('GET', `${LINKS}?cursor=nonsense`, { session }), 400, 'validation_failed');
  });

  test('a key without integrations:ADMIN may not make one', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const r = await h.request('POST', LINKS, {
      token: key.secret,
      body: { connectorKey: 'webhook', subject: 's' },
    });
    assertProblem(r, 403, 'insufficient_scope');
  });

  test('validation errors name the field, and write nothing', async () => {
    const { session } = await makeSignedInTenant(h);
    const cases: [Record<string, unknown>, string, string][] = [
      [{ connectorKey: 'nope', subject: 's' }, 'validation_failed', 'connectorKey'],
      [{ connectorKey: 'webhook', subject: '' }, 'validation_failed', 'subject'],
      [
        { connectorKey: 'webhook', subject: 's', expiresInSeconds: 299 },
        'validation_failed',
        'expiresInSeconds',
      ],
      [
        { connectorKey: 'webhook', subject: 's', expiresInSeconds: 604_801 },
        'validation_failed',
        'expiresInSeconds',
      ],
      [
        { connectorKey: 'webhook', subject: 's', config: { colour: 'red' } },
        'validation_failed',
        'config.colour',
      ],
      [{ connectorKey: 'webhook', subject: 's', config: { url: 42 } }, 'validation_failed', 'config.url'],
      [
        { connectorKey: 'webhook', subject: 's', config: { url: 'https://10.0.0.1/' } },
        'destination_forbidden',
        'url',
      ],
    ];
    for (const [body, code, path] of cases) {
      assertProblem(await h.request('POST', LINKS, { session, body }), 400, code, path);
    }
    const listed = await h.request('GET', LINKS, { session });
    assert.deepEqual(listed.body.data, [], 'a refused create stores no link');
    assert.ok(
      !(await auditRows(session)).some((row) => row.action === 'connect_session.create'),
      'a refused create is not audited',
    );
  });
});

describe('the connect page', () => {
  test('reads the tenant, the connector and its fields minus the fixed ones, with no credential', async () => {
    const { session } = await makeSignedInTenant(h);
    const link = await webhookLink(session, {
      displayName: 'Acme hook',
      config: { url: 'https://hooks.example.com/acme' },
    });
    const r = await h.request('POST', SESSION, { body: { code: codeOf(link) }, headers: fromNewAddress() });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.connector.key, 'webhook', 'the link’s connector');
    assert.equal(r.body.connector.name, 'Webhook', 'the connector’s name');
    assert.equal(r.body.displayName, 'Acme hook', 'the proposed display name');
    assert.equal(r.body.expiresAt, link.expiresAt, 'the link’s expiry');
    assert.deepEqual(r.body.branding, { name: null, logoUrl: null, accentColor: null }, 'no branding yet');
    assert.match(r.body.tenant.name, /^Tenant /, 'the tenant’s name');
    const fields = r.body.connector.fields.map((f: { kind: string; name: string }) => `${f.kind}:${f.name}`);
    assert.ok(!fields.includes('config:url'), 'a fixed field is not shown');
    assert.ok(fields.includes('config:eventTypes'), 'an open config field is shown');
    assert.ok(fields.includes('credentials:signingSecret'), 'credential fields are shown');
    const secret = r.body.connector.fields.find((f: { name: string }) => f.name === 'signingSecret');
    assert.equal(secret.generated, true, 'the signing secret can be generated');
  });

  test('an unknown or malformed code is 401, and ten wrong codes from one address are 429', async () => {
    const headers = fromNewAddress();
    assertProblem(
      await h.request('POST', SESSION, { body: { code: 'x' }, headers }),
      401,
      'invalid_credentials',
    );
    for (let i = 0; i < 9; i++) {
      const wrong = await h.request('POST', SESSION, { body: { code: 'A'.repeat(32) }, headers });
      assertProblem(wrong, 401, 'invalid_credentials');
    }
    const limited = await h.request('POST', COMPLETE, { body: { code: 'A'.repeat(32) }, headers });
    assertProblem(limited, 429, 'rate_limited');
    assert.ok(Number(limited.headers.get('retry-after')) > 0, 'a 429 says when to try again');
  });
});

describe('completing a link', () => {
  test('creates a webhook connection with its credentials bound, audited as the link; the tenant reads it', async () => {
    const { session } = await makeSignedInTenant(h);
    const link = await webhookLink(session, { config: { url: 'https://hooks.example.com/fixed' } });
    const code = codeOf(link);
    const r = await complete({
      code,
      displayName: 'My hook',
      config: { eventTypes: ['employee.*'] },
      credentials: { signingSecret: SIGNING_SECRET },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status, 'completed', 'the link completed');
    const connection = await h.request('GET', `/api/v1/integrations/connections/${r.body.connectionId}`, {
      session,
    });
    assert.equal(connection.status, 200, 'the tenant reads the connection');
    assert.equal(connection.body.displayName, 'My hook', 'the display name given');
    assert.deepEqual(
      connection.body.config,
      {
        url: 'https://hooks.example.com/fixed',
        eventTypes: ['employee.*'],
      },
      'the fixed config merged over the given one',
    );
    assert.equal(connection.body.credentialsBound, true, 'the credentials were bound');
    assert.equal(connection.body.deliveryEnabled, true, 'the connection can deliver');

    const read = await h.request('GET', `${LINKS}/${link.id}`, { session });
    assert.equal(read.body.status, 'completed', 'the link reads as completed');
    assert.equal(read.body.connectionId, r.body.connectionId, 'the link names its connection');

    const rows = await auditRows(session);
    const byLink = rows.filter((row) => row.actorType === 'connect_link');
    assert.deepEqual(
      byLink.map((row) => row.action).sort(),
      ['connection.create', 'connection.credentials.bind'],
      'the create and the binding are audited as the link',
    );
    for (const row of byLink) {
      assert.equal(row.actorId, link.id, 'the actor is the link');
      assert.equal(row.metadata.subject, 'customer-42', 'the subject is recorded');
    }
    const made = rows.find((row) => row.action === 'connect_session.create');
    assert.equal(made?.actorType, 'user', 'the link’s create is audited as its maker');

    // Used: the code works no more, for reading or completing.
    assertProblem(await complete({ code }), 401, 'invalid_credentials');
    const again = await h.request('POST', SESSION, { body: { code }, headers: fromNewAddress() });
    assertProblem(again, 401, 'invalid_credentials');
    assertNoLeak(h, [SIGNING_SECRET], []);
  });

  test('giving a field the link fixed is 400 and makes nothing; the link still works', async () => {
    const { session } = await makeSignedInTenant(h);
    const link = await webhookLink(session, { config: { url: 'https://hooks.example.com/fixed' } });
    const code = codeOf(link);
    const r = await complete({ code, config: { url: 'https://elsewhere.example.com/' } });
    assertProblem(r, 400, 'validation_failed', 'config.url');
    const unknown = await complete({ code, credentials: { password: 'x' } });
    assertProblem(unknown, 400, 'validation_failed', 'credentials.password');
    const listed = await h.request('GET', '/api/v1/integrations/connections', { session });
    assert.deepEqual(listed.body.data, [], 'a refused complete makes no connection');
    assert.equal((await complete({ code })).status, 201, 'the link still works after a refused complete');
  });

  test('a URL to a private address is refused as the create route refuses it', async () => {
    const { session } = await makeSignedInTenant(h);
    const direct = await h.request('POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: 'webhook', displayName: 'x', url: 'https://10.0.0.1/' },
    });
    const link = await webhookLink(session);
    const code = codeOf(link);
    const r = await complete({ code, config: { url: 'https://10.0.0.1/' } });
    assert.equal(r.status, direct.status, 'the same status as the create route');
    assert.equal(r.body.code, direct.body.code, 'the same code as the create route');
    assert.equal(r.body.code, 'destination_forbidden', 'a private address is refused by the SSRF policy');
    const tokenUrl = await complete({
      code,
      config: { url: 'https://hooks.example.com/' },
      credentials: {
        oauth2ClientCredentials: {
          tokenUrl: 'https://169.254.169.254/token',
          clientId: 'a',
          clientSecret: 'b',
        },
      },
    });
    assertProblem(tokenUrl, 400, 'destination_forbidden');
    const listed = await h.request('GET', '/api/v1/integrations/connections', { session });
    assert.deepEqual(listed.body.data, [], 'a refused complete makes no connection');
  });

  test('an expired link is 401 and reads as expired', async () => {
    const { session } = await makeSignedInTenant(h);
    const link = await webhookLink(session, {
      expiresInSeconds: 300,
      config: { url: 'https://hooks.example.com/' },
    });
    h.setNow(new Date(Date.parse(link.expiresAt) + 1000));
    try {
      assertProblem(await complete({ code: codeOf(link) }), 401, 'invalid_credentials');
      const read = await h.request('GET', `${LINKS}/${link.id}`, { session });
      assert.equal(read.body.status, 'expired', 'an expired link reads as expired');
    } finally {
      h.setNow(null);
    }
  });

  test('a deleted link is 401, and is gone from reads and lists', async () => {
    const { session } = await makeSignedInTenant(h);
    const link = await webhookLink(session, { config: { url: 'https://hooks.example.com/' } });
    const deleted = await h.request('DELETE', `${LINKS}/${link.id}`, { session });
    assert.equal(deleted.status, 204, 'a delete answers 204');
    assertProblem(await complete({ code: codeOf(link) }), 401, 'invalid_credentials');
    assertProblem(await h.request('GET', `${LINKS}/${link.id}`, { session }), 404, 'not_found');
    assertProblem(await h.request('DELETE', `${LINKS}/${link.id}`, { session }), 404, 'not_found');
    const revoked = (await auditRows(session)).find((row) => row.action === 'connect_session.revoke');
    assert.equal(revoked?.actorType, 'user', 'the delete is audited as its maker');
  });

  test('a tenant that lost the integrations module completes nothing', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const link = await webhookLink(session, { config: { url: 'https://hooks.example.com/' } });
    const entitlements = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
      token: h.platformToken,
      body: { entitlements: ['integration_hub'] },
    });
    assert.equal(entitlements.status, 200, entitlements.text);
    assertProblem(await complete({ code: codeOf(link) }), 403, 'entitlement_missing');
    const rows = await h.database.kysely
      .selectFrom('connections')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .execute();
    assert.deepEqual(rows, [], 'no connection was made');
  });

  test('a link whose OAuth2 provider was deleted meanwhile is 409, naming the connector', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = `gone${Date.now().toString(36)}`;
    const provider = await h.request('POST', '/api/v1/platform/oauth-providers', {
      token: h.platformToken,
      body: {
        key,
        name: 'Machine API',
        tokenUrl: 'https://auth.example.com/token',
        apiBaseUrl: 'https://api.example.com/v1',
        clientId: 'hubgate-client',
        clientSecret: 'client-secret',
        scopes: [],
        grant: 'client_credentials',
      },
    });
    assert.equal(provider.status, 201, provider.text);
    const link = await makeLink(session, { connectorKey: `oauth2:${key}`, subject: 's' });
    const removed = await h.request('DELETE', `/api/v1/platform/oauth-providers/${key}`, {
      token: h.platformToken,
    });
    assert.equal(removed.status, 204, removed.text);
    const r = await complete({ code: codeOf(link) });
    assertProblem(r, 409, 'conflict');
    assert.match(r.body.detail, new RegExp(`oauth2:${key} connector is not a known connector`), r.text);
  });

  test('a link left unmarked after its connection was made (a process died) makes no second one', async () => {
    const { session } = await makeSignedInTenant(h);
    const link = await webhookLink(session, { config: { url: 'https://hooks.example.com/' } });
    const code = codeOf(link);
    const first = await complete({ code });
    assert.equal(first.status, 201, first.text);
    // As a process that died between the create's commit and the mark leaves it, its claim lapsed.
    await h.database.kysely
      .updateTable('connect_sessions')
      .set({ completed_at: null, connection_id: null, completing_until: null })
      .where('id', '=', link.id)
      .execute();
    assertProblem(await complete({ code }), 401, 'invalid_credentials');
    const read = await h.request('GET', `${LINKS}/${link.id}`, { session });
    assert.equal(read.body.connectionId, first.body.connectionId, 'the link names the connection it made');
    const listed = await h.request('GET', '/api/v1/integrations/connections', { session });
    assert.equal(listed.body.data.length, 1, 'one connection, not two');
  });

  test('two concurrent completes make exactly one connection', async () => {
    const { session } = await makeSignedInTenant(h);
    const link = await webhookLink(session, { config: { url: 'https://hooks.example.com/' } });
    const code = codeOf(link);
    const answers = await Promise.all([complete({ code }), complete({ code }), complete({ code })]);
    assert.deepEqual(answers.map((r) => r.status).sort(), [201, 401, 401], 'exactly one complete wins');
    const listed = await h.request('GET', '/api/v1/integrations/connections', { session });
    assert.equal(listed.body.data.length, 1, 'one connection was made');
  });

  test('the codes never appear in a log or in any answer but their create', () => {
    assert.ok(codes.length > 5, 'the tests made links');
    assertNoLeak(h, [], codes);
  });
});
