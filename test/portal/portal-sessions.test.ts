import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomBase62 } from '../../src/crypto/base62.js';
import {
  assertNoLeak,
  inDays,
  makeKey,
  makeSignedInTenant,
  makeTenant,
  makeUser,
  signIn,
} from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

// Portal sessions (docs/api/portal.md): made by a platform key, a tenant key or a session, their
// link exchanged once for a ptl_ token, which reaches only the routes of its access level and only
// the connections its session names.

let h: Harness;
before(async () => {
  // Client addresses from X-Forwarded-For: each test's wrong codes count for an address of its own.
  h = await startHarness({ env: { TRUST_PROXY: '1', LOG_LEVEL: 'trace' } });
});
after(() => h.close());

const TENANT_SESSIONS = '/api/v1/integrations/portal-sessions';
const CONNECTIONS = '/api/v1/integrations/connections';
const EXCHANGE = '/api/v1/portal/exchange';
const HOOK_URL = 'https://hooks.example.com/hubgate';

let lastAddress = 0;
/** An address no other request of this file came from. */
const newAddress = () => {
  lastAddress += 1;
  return `10.9.${Math.floor(lastAddress / 250)}.${(lastAddress % 250) + 1}`;
};

function assertProblem(r: TestResponse, status: number, code: string, what: string): void {
  assert.equal(r.status, status, `${what}: answered ${r.status} ${r.text}`);
  assert.equal(r.body?.code, code, `${what}: answered ${r.text}`);
}

const platformSessions = (tenantId: string) => `/api/v1/platform/tenants/${tenantId}/portal-sessions`;

async function mintByPlatform(tenantId: string, body: Record<string, unknown>) {
  const r = await h.request('POST', platformSessions(tenantId), { token: h.platformToken, body });
  assert.equal(r.status, 201, r.text);
  return r.body as { id: string; url: string; connectionIds: string[] | null; expiresAt: string };
}

const codeOf = (url: string): string => {
  const code = new URL(url).hash.replace(/^#code=/, '');
  assert.match(code, /^[0-9A-Za-z]{20,}$/, `the url carries no code in its fragment: ${url}`);
  return code;
};

const exchange = (code: string, address = newAddress()) =>
  h.request('POST', EXCHANGE, { headers: { 'x-forwarded-for': address }, body: { code } });

/** A session minted by the platform and exchanged: its ID and token. */
async function portalToken(tenantId: string, body: Record<string, unknown> = {}) {
  const created = await mintByPlatform(tenantId, { subject: 'kim@customer.example', ...body });
  const r = await exchange(codeOf(created.url));
  assert.equal(r.status, 200, r.text);
  return { id: created.id, token: r.body.token as string, code: codeOf(created.url) };
}

async function connect(session: TestSession, displayName = 'hook'): Promise<string> {
  const r = await h.request('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'webhook', displayName, url: HOOK_URL },
  });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

async function auditEntries(session: TestSession, action: string) {
  const r = await h.request('GET', '/api/v1/company/audit-log?limit=100', { session });
  assert.equal(r.status, 200, r.text);
  return (r.body.data as Array<Record<string, unknown>>).filter((e) => e.action === action);
}

describe('making a portal session', () => {
  test('by platform key: 201, the link with its code in the fragment, no-store, audited', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const before = Date.now();
    const r = await h.request('POST', platformSessions(tenant.id), {
      token: h.platformToken,
      body: { subject: 'kim@customer.example' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers.get('cache-control'), 'no-store', 'the answer with a link may be cached');
    assert.match(r.body.id, /^pts_[0-9A-Za-z]{22}$/, 'the session ID is not pts_ + 22 base62');
    assert.ok(
      r.body.url.startsWith(`${h.config.publicUrl.origin}/portal/${tenant.id}#code=`),
      `the url is not PUBLIC_URL/portal/<tenantId>#code=…: ${r.body.url}`,
    );
    codeOf(r.body.url);
    assert.deepEqual(
      Object.keys(r.body).sort(),
      ['access', 'connectionIds', 'createdAt', 'expiresAt', 'id', 'subject', 'url'],
      'the answer has other fields than the contract says',
    );
    assert.equal(r.body.access, 'operate', 'the default access is not operate');
    assert.equal(r.body.connectionIds, null, 'no connectionIds given is not null (every connection)');
    const lifetime = new Date(r.body.expiresAt).getTime() - before;
    assert.ok(
      lifetime > 3_590_000 && lifetime < 3_610_000,
      `the default lifetime is not an hour: ${lifetime}`,
    );
    const [entry] = await auditEntries(session, 'portal_session.create');
    assert.ok(entry, 'portal_session.create is not audited');
    assert.equal(entry.actorType, 'platform_key', 'the audit row names another kind of actor');
    assert.equal(entry.targetId, r.body.id, 'the audit row names another session');
    assert.equal(
      (entry.metadata as { subject: string }).subject,
      'kim@customer.example',
      'the audit row does not record the subject',
    );
  });

  test('by a tenant key with integrations:ADMIN, and by sessions of an admin role; not below', async () => {
    const { session } = await makeSignedInTenant(h);
    const admin = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    const operator = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const byKey = await h.request('POST', TENANT_SESSIONS, {
      token: admin.secret,
      body: { subject: 'by key', access: 'read', expiresInSeconds: 300 },
    });
    assert.equal(byKey.status, 201, byKey.text);
    assert.equal(byKey.body.access, 'read', 'the session has another access than asked');
    const bySession = await h.request('POST', TENANT_SESSIONS, { session, body: { subject: 'by session' } });
    assert.equal(bySession.status, 201, bySession.text);
    assertProblem(
      await h.request('POST', TENANT_SESSIONS, { token: operator.secret, body: { subject: 'x' } }),
      403,
      'insufficient_scope',
      'an OPERATOR key making a portal session',
    );
    const list = await h.request('GET', TENANT_SESSIONS, { token: admin.secret });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.data.map((s: { id: string }) => s.id),
      [bySession.body.id, byKey.body.id],
      'the list is not the two sessions, newest first',
    );
    assert.equal(list.body.data[0].status, 'pending', 'an unused link is not pending');
    assert.ok(!list.text.includes(codeOf(byKey.body.url)), 'the list shows a code');
    assert.ok(!('url' in list.body.data[0]), 'the list shows the link');
  });

  test('a member session may not', async () => {
    const { tenant } = await makeSignedInTenant(h);
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    assertProblem(
      await h.request('POST', TENANT_SESSIONS, { session: member, body: { subject: 'x' } }),
      403,
      'role_forbidden',
      'a MEMBER making a portal session',
    );
  });

  test('validation: subject, access, lifetime, unknown fields, connections not of the tenant', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const other = await makeSignedInTenant(h);
    const foreign = await connect(other.session);
    const own = await connect(session);
    const bad: Array<[string, Record<string, unknown>]> = [
      ['an empty subject', { subject: '' }],
      ['a subject of 201 characters', { subject: 'x'.repeat(201) }],
      ['an unknown access', { subject: 'x', access: 'admin' }],
      ['a lifetime under 300 s', { subject: 'x', expiresInSeconds: 299 }],
      ['a lifetime over a day', { subject: 'x', expiresInSeconds: 86_401 }],
      ['an empty connection list', { subject: 'x', connectionIds: [] }],
      ['an unknown field', { subject: 'x', scopes: [] }],
    ];
    for (const [what, body] of bad) {
      assertProblem(
        await h.request('POST', platformSessions(tenant.id), { token: h.platformToken, body }),
        400,
        'validation_failed',
        what,
      );
    }
    for (const id of [foreign, 'con_nope']) {
      const r = await h.request('POST', TENANT_SESSIONS, {
        session,
        body: { subject: 'x', connectionIds: [own, id] },
      });
      assertProblem(r, 400, 'validation_failed', `naming ${id}`);
      assert.ok(r.body.detail.includes(id), `the problem does not name ${id}: ${r.text}`);
    }
    assertProblem(
      await h.request('POST', platformSessions('ten_unknown'), {
        token: h.platformToken,
        body: { subject: 'x' },
      }),
      404,
      'not_found',
      'an unknown tenant',
    );
  });
});

describe('the exchange', () => {
  test('once: the token, the session, the tenant and its branding; the second time 401', async () => {
    const tenant = await makeTenant(h, { name: 'Acme', entitlements: ['integrations'] });
    const created = await mintByPlatform(tenant.id, { subject: 'kim', access: 'read' });
    const code = codeOf(created.url);
    const r = await exchange(code);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('cache-control'), 'no-store', 'the answer with the token may be cached');
    assert.match(r.body.token, /^ptl_[0-9A-Za-z]{38}$/, 'the token is not in the tnt_ format with ptl_');
    assert.deepEqual(
      { ...r.body, token: undefined },
      {
        token: undefined,
        expiresAt: created.expiresAt,
        session: { id: created.id, subject: 'kim', access: 'read', connectionIds: null },
        tenant: { id: tenant.id, name: 'Acme' },
        branding: { name: null, logoUrl: null, accentColor: null },
      },
      'the exchange answers otherwise than the contract says',
    );
    assert.equal(r.headers.get('set-cookie'), null, 'the exchange sets a cookie');
    assertProblem(await exchange(code), 401, 'invalid_credentials', 'the second use of a code');
    const own = await h.request('GET', '/api/v1/portal/session', { token: r.body.token });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(
      own.body,
      {
        expiresAt: created.expiresAt,
        session: { id: created.id, subject: 'kim', access: 'read', connectionIds: null },
        tenant: { id: tenant.id, name: 'Acme' },
        branding: { name: null, logoUrl: null, accentColor: null },
      },
      'the session route answers otherwise than the exchange, less the token',
    );
    const list = await h.request('GET', platformSessions(tenant.id), { token: h.platformToken });
    assert.equal(list.body.data[0].status, 'active', 'an exchanged session is not active');
    assert.ok(!list.text.includes(r.body.token), 'the list shows the token');
    assertNoLeak(h, [], [code, r.body.token]);
  });

  test('a code is valid 10 minutes, never past the session; a wrong one is 401', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const start = new Date();
    h.setNow(start);
    try {
      const tenMinutes = codeOf((await mintByPlatform(tenant.id, { subject: 'a' })).url);
      const fiveMinutes = codeOf(
        (await mintByPlatform(tenant.id, { subject: 'b', expiresInSeconds: 300 })).url,
      );
      h.setNow(new Date(start.getTime() + 301_000));
      assertProblem(await exchange(fiveMinutes), 401, 'invalid_credentials', 'a code past its session');
      h.setNow(new Date(start.getTime() + 601_000));
      assertProblem(await exchange(tenMinutes), 401, 'invalid_credentials', 'a code after 10 minutes');
    } finally {
      h.setNow(null);
    }
    assertProblem(await exchange(randomBase62(32)), 401, 'invalid_credentials', 'an unknown code');
    assertProblem(await exchange('not a code'), 401, 'invalid_credentials', 'a malformed code');
  });

  test('ten wrong codes from one address within 15 minutes, and it gets 429', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const good = codeOf((await mintByPlatform(tenant.id, { subject: 'a' })).url);
    const address = newAddress();
    for (let i = 0; i < 10; i++) {
      assertProblem(await exchange(randomBase62(32), address), 401, 'invalid_credentials', `wrong code ${i}`);
    }
    assertProblem(await exchange(good, address), 429, 'rate_limited', 'a good code after ten wrong ones');
    assert.equal(
      (await exchange(good)).status,
      200,
      'another address is held back by the first one’s failures',
    );
  });

  test('the token stops at expiresAt', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const { token } = await portalToken(tenant.id, { expiresInSeconds: 300 });
    assert.equal(
      (await h.request('GET', '/api/v1/portal/session', { token })).status,
      200,
      'a live token is refused',
    );
    h.setNow(new Date(Date.now() + 301_000));
    try {
      assertProblem(
        await h.request('GET', '/api/v1/portal/session', { token }),
        401,
        'unauthenticated',
        'a token past its session',
      );
    } finally {
      h.setNow(null);
    }
  });
});

describe('ending a session', () => {
  test('DELETE: 204, its token answers 401 here and on another process within 1 s, audited', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const other = await startHarness({ testDatabase: h.testDatabase, keyring: h.keyring });
    try {
      const { id, token } = await portalToken(tenant.id);
      const there = await other.request('GET', '/api/v1/portal/session', { token });
      assert.equal(there.status, 200, there.text);
      const ended = await h.request('DELETE', `${TENANT_SESSIONS}/${id}`, { session });
      assert.equal(ended.status, 204, ended.text);
      const at = Date.now();
      assertProblem(
        await h.request('GET', '/api/v1/portal/session', { token }),
        401,
        'unauthenticated',
        'the token of an ended session, on the process that ended it',
      );
      await waitUntil(
        async () => (await other.request('GET', '/api/v1/portal/session', { token })).status === 401,
        { message: 'the other process refusing the token', timeoutMs: 3_000, intervalMs: 20 },
      );
      assert.ok(Date.now() - at < 1_000, `the other process took ${Date.now() - at} ms`);
      assertProblem(
        await h.request('DELETE', `${TENANT_SESSIONS}/${id}`, { session }),
        404,
        'not_found',
        'ending it again',
      );
      const list = await h.request('GET', TENANT_SESSIONS, { session });
      assert.ok(!list.text.includes(id), 'the list shows an ended session');
      const [entry] = await auditEntries(session, 'portal_session.revoke');
      assert.equal(entry?.targetId, id, 'portal_session.revoke is not audited');
    } finally {
      await other.close();
    }
  });

  test('by the platform, and a code not yet used stops working', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integrations'] });
    const created = await mintByPlatform(tenant.id, { subject: 'a' });
    const other = await makeTenant(h, { entitlements: ['integrations'] });
    assertProblem(
      await h.request('DELETE', `${platformSessions(other.id)}/${created.id}`, { token: h.platformToken }),
      404,
      'not_found',
      'ending a session through another tenant',
    );
    const r = await h.request('DELETE', `${platformSessions(tenant.id)}/${created.id}`, {
      token: h.platformToken,
    });
    assert.equal(r.status, 204, r.text);
    assertProblem(
      await exchange(codeOf(created.url)),
      401,
      'invalid_credentials',
      'the code of an ended session',
    );
  });
});

describe('what a token may call', () => {
  test('read, operate and manage: each its routes, nothing else', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const id = await connect(session);
    const read = (await portalToken(tenant.id, { access: 'read' })).token;
    const operate = (await portalToken(tenant.id, { access: 'operate' })).token;
    const manage = (await portalToken(tenant.id, { access: 'manage' })).token;
    const call = (token: string, method: string, path: string, body?: unknown) =>
      h.request(method, path, { token, body });

    for (const path of [
      CONNECTIONS,
      `${CONNECTIONS}/${id}`,
      `${CONNECTIONS}/${id}/events`,
      '/api/v1/integrations/event-types',
      '/api/v1/integration-hub/connectors',
      '/api/v1/portal/session',
    ]) {
      const r = await call(read, 'GET', path);
      assert.equal(r.status, 200, `read on GET ${path}: ${r.text}`);
    }
    const refused: Array<[string, string, string, unknown?]> = [
      [read, 'PATCH', `${CONNECTIONS}/${id}`, { displayName: 'renamed' }],
      [read, 'POST', `${CONNECTIONS}/${id}/pause`],
      [operate, 'POST', `${CONNECTIONS}/${id}/revoke`],
      [operate, 'POST', CONNECTIONS, { connectorKey: 'webhook', displayName: 'x', url: HOOK_URL }],
      [manage, 'GET', '/api/v1/company/api-keys'],
      [manage, 'GET', '/api/v1/company/audit-log'],
      [manage, 'POST', '/api/v1/integrations/events', { type: 'a.b', data: {} }],
      [manage, 'POST', '/api/v1/integrations/event-types', { name: 'a.b' }],
      [manage, 'GET', '/api/v1/integration-hub/overview'],
      [manage, 'GET', TENANT_SESSIONS],
      [manage, 'GET', '/api/v1/auth/session'],
    ];
    for (const [token, method, path, body] of refused) {
      assertProblem(await call(token, method, path, body), 403, 'route_not_allowed', `${method} ${path}`);
    }
    assertProblem(
      await call(manage, 'GET', '/api/v1/platform/tenants'),
      403,
      'platform_key_required',
      'a platform route',
    );

    const renamed = await call(operate, 'PATCH', `${CONNECTIONS}/${id}`, { displayName: 'renamed' });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(
      (await call(operate, 'POST', `${CONNECTIONS}/${id}/pause`)).status,
      200,
      'operate cannot pause its connection',
    );
    assert.equal(
      (await call(manage, 'POST', `${CONNECTIONS}/${id}/resume`, {})).status,
      200,
      'manage cannot resume its connection',
    );
    const bound = await call(manage, 'PUT', `${CONNECTIONS}/${id}/credentials`, {});
    assert.equal(bound.status, 200, bound.text);
    const made = await call(manage, 'POST', CONNECTIONS, {
      connectorKey: 'webhook',
      displayName: 'x',
      url: HOOK_URL,
    });
    assert.equal(made.status, 201, made.text);
    assert.equal(
      (await call(manage, 'POST', `${CONNECTIONS}/${made.body.id}/revoke`)).status,
      200,
      'manage cannot revoke its new connection',
    );
  });

  test('within the tenant’s entitlements', async () => {
    const tenant = await makeTenant(h, { entitlements: ['integration_hub'] });
    const { token } = await portalToken(tenant.id, { access: 'manage' });
    assertProblem(
      await h.request('GET', CONNECTIONS, { token }),
      403,
      'entitlement_missing',
      'a tenant not entitled to integrations',
    );
    assert.equal(
      (await h.request('GET', '/api/v1/portal/session', { token })).status,
      200,
      'the portal session route is entitled to nothing',
    );
  });

  test('only its session’s connections: others are 404, the list shows its own; a new one joins', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const mine = await connect(session, 'mine');
    const theirs = await connect(session, 'theirs');
    const { id, token } = await portalToken(tenant.id, { access: 'manage', connectionIds: [mine] });
    const list = await h.request('GET', CONNECTIONS, { token });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.data.map((c: { id: string }) => c.id),
      [mine],
      'the list shows other connections than the session’s',
    );
    assert.equal(
      (await h.request('GET', `${CONNECTIONS}/${mine}`, { token })).status,
      200,
      'the session cannot read its own connection',
    );
    const others: Array<[string, string, unknown?]> = [
      ['GET', `${CONNECTIONS}/${theirs}`],
      ['GET', `${CONNECTIONS}/${theirs}/events`],
      ['PATCH', `${CONNECTIONS}/${theirs}`, { displayName: 'x' }],
      ['POST', `${CONNECTIONS}/${theirs}/pause`],
      ['POST', `${CONNECTIONS}/${theirs}/test`, { type: 'b.test', data: {} }],
      ['PUT', `${CONNECTIONS}/${theirs}/credentials`, {}],
      ['POST', `${CONNECTIONS}/${theirs}/revoke`],
    ];
    for (const [method, path, body] of others) {
      assertProblem(await h.request(method, path, { token, body }), 404, 'not_found', `${method} ${path}`);
    }
    const theirsNow = await h.request('GET', `${CONNECTIONS}/${theirs}`, { session });
    assert.equal(theirsNow.body.displayName, 'theirs', 'a connection outside the session was changed');
    assert.equal(theirsNow.body.status, 'active', 'a connection outside the session was changed');

    const made = await h.request('POST', CONNECTIONS, {
      token,
      body: { connectorKey: 'webhook', displayName: 'new', url: HOOK_URL },
    });
    assert.equal(made.status, 201, made.text);
    const after = await h.request('GET', CONNECTIONS, { token });
    assert.deepEqual(
      after.body.data.map((c: { id: string }) => c.id),
      [made.body.id, mine],
      'the new connection did not join the session',
    );
    const view = await h.request('GET', '/api/v1/portal/session', { token });
    assert.deepEqual(
      view.body.session.connectionIds,
      [mine, made.body.id],
      'the session view lacks the new connection',
    );
    const listed = await h.request('GET', TENANT_SESSIONS, { session });
    const record = listed.body.data.find((s: { id: string }) => s.id === id);
    assert.deepEqual(
      record.connectionIds,
      [mine, made.body.id],
      'the session record lacks the new connection',
    );
  });

  test('changes are audited as the portal session, with its subject', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const connection = await connect(session);
    const { id, token } = await portalToken(tenant.id, { subject: 'pat@customer.example' });
    const r = await h.request('POST', `${CONNECTIONS}/${connection}/pause`, { token });
    assert.equal(r.status, 200, r.text);
    const [entry] = await auditEntries(session, 'connection.pause');
    assert.ok(entry, 'the pause is not audited');
    assert.equal(entry.actorType, 'portal', 'the audit row names another kind of actor');
    assert.equal(entry.actorId, id, 'the audit row does not name the session');
    assert.equal(
      (entry.metadata as { subject?: string }).subject,
      'pat@customer.example',
      'the audit row does not record the subject',
    );
  });

  test('a portal token is no session: no cookie is looked at, and a tenant key is not one', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN'], expiresAt: inDays(1) });
    assertProblem(
      await h.request('GET', '/api/v1/portal/session', { token: key.secret }),
      403,
      'route_not_allowed',
      'a tenant key on the portal session route',
    );
    assertProblem(
      await h.request('GET', '/api/v1/portal/session', { session }),
      403,
      'route_not_allowed',
      'a browser session on the portal session route',
    );
    const { token } = await portalToken(tenant.id);
    assertProblem(
      await h.request('GET', '/api/v1/portal/session', { token: `${token.slice(0, -1)}x` }),
      401,
      'unauthenticated',
      'a token with a wrong checksum',
    );
  });
});
