import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { registerProvider, startOAuthProvider, type TestOAuthProvider } from '../helpers/oauth-provider.js';

// OAuth2 authorization-code connections authorized from a portal session and from a connect link
// (docs/api/oauth.md, portal.md, connect-links.md), against a real provider (oidc-provider on
// 127.0.0.1): the callback comes back with no cookie, and the state alone says whose it is.

let h: Harness;
let idp: TestOAuthProvider;
let closeIdp: () => Promise<unknown>;
/** What must never show: the provider's codes (and the client secret and the tokens hubgate holds). */
const never: string[] = [];
/** Portal codes the callback hands back (in its Location) and states (in the authorization URL): once, never in a log. */
const shownOnce: string[] = [];

before(async () => {
  h = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_TIMEOUT_MS: '5000',
      TRUST_PROXY: '1',
      LOG_LEVEL: 'trace',
    },
  });
  const closing: Array<() => unknown> = [];
  idp = await startOAuthProvider(
    { after: (fn) => closing.push(fn) },
    { redirectUri: new URL(CALLBACK, h.config.publicUrl).href },
  );
  closeIdp = () => Promise.all(closing.map((fn) => fn()));
});
after(async () => {
  try {
    assertNoLeak(h, [idp.clientSecret, ...never, ...(await heldTokens())], shownOnce);
  } finally {
    await closeIdp();
    await h.close();
  }
});

const CALLBACK = '/api/v1/oauth/callback';
const CONNECTIONS = '/api/v1/integrations/connections';
const LINKS = '/api/v1/integrations/connect-sessions';
const EXCHANGE = '/api/v1/portal/exchange';
const COMPLETE = '/api/v1/connect/complete';
let lastAddress = 0;
const newAddress = () => {
  lastAddress += 1;
  return `10.77.${Math.floor(lastAddress / 250)}.${(lastAddress % 250) + 1}`;
};

async function makeProvider(): Promise<string> {
  return (await registerProvider(h, idp)).connectorKey;
}

async function makeConnection(session: TestSession, connectorKey: string): Promise<string> {
  const r = await h.request('POST', CONNECTIONS, { session, body: { connectorKey, displayName: 'IdP API' } });
  assert.equal(r.status, 201, r.text);
  return r.body.id as string;
}

/** A tenant with a signed-in admin and an OAuth2 connection not yet authorized. */
async function tenantWithConnection() {
  const t = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const connectorKey = await makeProvider();
  const connectionId = await makeConnection(t.session, connectorKey);
  return { ...t, connectorKey, connectionId };
}

const codeOf = (url: string): string => new URL(url).hash.replace(/^#code=/, '');

const exchange = (code: string) =>
  h.request('POST', EXCHANGE, { headers: { 'x-forwarded-for': newAddress() }, body: { code } });

/** A portal session made by the platform key and exchanged: its ID and token. */
async function portalSession(tenantId: string, body: Record<string, unknown>) {
  const r = await h.request('POST', `/api/v1/platform/tenants/${tenantId}/portal-sessions`, {
    token: h.platformToken,
    body: { subject: 'kim@customer.example', ...body },
  });
  assert.equal(r.status, 201, r.text);
  const exchanged = await exchange(codeOf(r.body.url));
  assert.equal(exchanged.status, 200, exchanged.text);
  return { id: r.body.id as string, token: exchanged.body.token as string };
}

async function authorizeWith(
  options: { token: string } | { session: TestSession },
  connectionId: string,
): Promise<TestResponse> {
  return h.request('POST', `${CONNECTIONS}/${connectionId}/authorize`, options);
}

/** The provider's redirect back to hubgate, after the person signed in and consented (or refused). */
async function atProvider(authorizationUrl: string, deny = false): Promise<URL> {
  const back = await idp.authorize(authorizationUrl, { deny });
  const code = back.searchParams.get('code');
  const state = back.searchParams.get('state');
  if (code) never.push(code);
  // The state is in the authorize (or complete) answer's URL, once; never in a log.
  if (state) shownOnce.push(state);
  return back;
}

/** The browser arriving at the callback in a new tab: no cookie, no token. */
async function callback(back: URL | string) {
  const query = typeof back === 'string' ? back : back.search;
  const r = await h.request('GET', `${CALLBACK}${query}`, { headers: { 'x-forwarded-for': newAddress() } });
  assert.equal(r.status, 303, `the callback answered ${r.status}: ${r.text}`);
  const location = new URL(r.headers.get('location') ?? 'about:blank');
  const code = codeOf(location.href);
  if (code) shownOnce.push(code);
  return { response: r, location, code };
}

async function authorizationOf(options: { session: TestSession } | { token: string }, id: string) {
  const r = await h.request('GET', `${CONNECTIONS}/${id}`, options);
  assert.equal(r.status, 200, r.text);
  return r.body as { credentialsBound: boolean; authorization: { status: string } };
}

/** Every token hubgate holds, as only the test can read them: never in an answer or a log. */
async function heldTokens(): Promise<string[]> {
  const rows = await h.database.kysely
    .selectFrom('connections')
    .select(['id', 'credentials_sealed'])
    .where('connector_key', 'like', 'oauth2:pidp%')
    .execute();
  return rows.flatMap((row) => {
    if (!row.credentials_sealed) return [];
    const held = JSON.parse(h.keyring.open('connection-credentials', row.credentials_sealed, row.id));
    return [held.accessToken, ...(held.refreshToken ? [held.refreshToken] : [])];
  });
}

async function auditOf(session: TestSession, action: string) {
  const r = await h.request('GET', '/api/v1/company/audit-log?limit=100', { session });
  assert.equal(r.status, 200, r.text);
  return (
    r.body.data as {
      action: string;
      actorType: string;
      actorId: string;
      targetId: string;
      metadata: Record<string, unknown>;
    }[]
  ).filter((row) => row.action === action);
}

describe('a portal session authorizes', () => {
  test('read and operate sessions may not start an authorization (403 route_not_allowed)', async () => {
    const t = await tenantWithConnection();
    for (const access of ['read', 'operate']) {
      const portal = await portalSession(t.tenant.id, { access });
      const r = await authorizeWith({ token: portal.token }, t.connectionId);
      assert.equal(r.status, 403, `${access}: ${r.text}`);
      assert.equal(r.body.code, 'route_not_allowed', `${access}: ${r.text}`);
    }
    const states = await h.database.kysely
      .selectFrom('oauth_states')
      .select('state_hash')
      .where('connection_id', '=', t.connectionId)
      .execute();
    assert.equal(states.length, 0, 'a refused authorize started an authorization');
  });

  test('a connection outside the session’s set, or of another tenant, is 404', async () => {
    const t = await tenantWithConnection();
    const other = await makeConnection(t.session, t.connectorKey);
    const portal = await portalSession(t.tenant.id, { access: 'manage', connectionIds: [t.connectionId] });
    const outside = await authorizeWith({ token: portal.token }, other);
    assert.equal(outside.status, 404, outside.text);
    const u = await tenantWithConnection();
    const foreign = await authorizeWith({ token: portal.token }, u.connectionId);
    assert.equal(foreign.status, 404, foreign.text);
  });

  test('manage: the callback, with no cookie, binds the tokens and returns to the portal page with a fresh code that works', async () => {
    const t = await tenantWithConnection();
    const portal = await portalSession(t.tenant.id, { access: 'manage', connectionIds: [t.connectionId] });
    const started = await authorizeWith({ token: portal.token }, t.connectionId);
    assert.equal(started.status, 200, started.text);
    const back = await atProvider(started.body.authorizationUrl);
    const { response, location, code } = await callback(back);
    assert.equal(
      `${location.origin}${location.pathname}`,
      new URL(`/portal/${t.tenant.id}/connections/${t.connectionId}`, h.config.publicUrl).href,
      `the callback went elsewhere: ${location.href}`,
    );
    assert.equal(location.searchParams.get('authorized'), 'true', location.href);
    assert.match(code, /^[0-9A-Za-z]{32}$/, `no code in the fragment: ${location.href}`);
    assert.equal(response.headers.get('cache-control'), 'no-store', 'the callback’s answer may be cached');
    assert.equal(
      response.headers.get('referrer-policy'),
      'no-referrer',
      'the callback’s answer sends a referrer',
    );

    const fresh = await exchange(code);
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal(fresh.body.session.id, portal.id, 'the code is of another session');
    const seen = await authorizationOf({ token: fresh.body.token }, t.connectionId);
    assert.equal(seen.authorization.status, 'authorized', 'the connection is not authorized');
    assert.equal(seen.credentialsBound, true, 'the connection holds no tokens');
    // The first tab's token still works: the new code added a token, it did not replace one.
    const firstTab = await authorizationOf({ token: portal.token }, t.connectionId);
    assert.equal(firstTab.authorization.status, 'authorized', 'the first tab no longer sees the binding');
    assert.equal((await exchange(code)).status, 401, 'the fresh code worked twice');

    const [row] = await auditOf(t.session, 'connection.authorize');
    assert.ok(row, 'the binding was not audited');
    assert.equal(row.actorType, 'portal', 'not audited as the portal');
    assert.equal(row.actorId, portal.id, 'not audited as this session');
    assert.equal(row.metadata.subject, 'kim@customer.example', 'the audit row does not name the subject');
  });

  test('a session revoked before the provider sends the browser back: nothing is bound, and the page says the session ended (no code)', async () => {
    const t = await tenantWithConnection();
    const portal = await portalSession(t.tenant.id, { access: 'manage' });
    const started = await authorizeWith({ token: portal.token }, t.connectionId);
    assert.equal(started.status, 200, started.text);
    const back = await atProvider(started.body.authorizationUrl);
    const revoked = await h.request(
      'DELETE',
      `/api/v1/platform/tenants/${t.tenant.id}/portal-sessions/${portal.id}`,
      { token: h.platformToken },
    );
    assert.equal(revoked.status, 204, revoked.text);
    const { location, code } = await callback(back);
    assert.equal(location.pathname, `/portal/${t.tenant.id}`, location.href);
    assert.equal(code, '', `an ended session got a code: ${location.href}`);
    assert.match(location.searchParams.get('authorizationError') ?? '', /ended/, location.href);
    const seen = await authorizationOf({ session: t.session }, t.connectionId);
    assert.equal(seen.authorization.status, 'none', 'a revoked session’s authorization was bound');
  });

  test('the tenant’s admin coming back with a portal’s state: the state decides whose it is, not the cookie', async () => {
    const t = await tenantWithConnection();
    const portal = await portalSession(t.tenant.id, { access: 'manage' });
    const started = await authorizeWith({ token: portal.token }, t.connectionId);
    const back = await atProvider(started.body.authorizationUrl);
    // The tenant's own admin comes back with the portal's state: the state decides, not the cookie.
    const r = await h.request('GET', `${CALLBACK}${back.search}`, { session: t.session });
    assert.equal(r.status, 303, r.text);
    const location = new URL(r.headers.get('location') ?? '');
    shownOnce.push(codeOf(location.href));
    assert.equal(
      location.pathname,
      `/portal/${t.tenant.id}/connections/${t.connectionId}`,
      `the callback went elsewhere: ${location.href}`,
    );
    const [row] = await auditOf(t.session, 'connection.authorize');
    assert.equal(row?.actorType, 'portal', 'the binding was audited as the signed-in user');
  });
});

describe('a connect link authorizes', () => {
  async function oauthLink(session: TestSession, connectorKey: string) {
    const r = await h.request('POST', LINKS, { session, body: { connectorKey, subject: 'customer-7' } });
    assert.equal(r.status, 201, `an authorization-code link is refused: ${r.text}`);
    return { id: r.body.id as string, code: codeOf(r.body.url) };
  }
  const complete = (code: string) =>
    h.request('POST', COMPLETE, { headers: { 'x-forwarded-for': newAddress() }, body: { code } });
  const linkOf = async (session: TestSession, id: string) => {
    const r = await h.request('GET', `${LINKS}/${id}`, { session });
    assert.equal(r.status, 200, r.text);
    return r.body as { status: string; connectionId: string | null };
  };
  const linkConnections = async (session: TestSession, connectorKey: string) => {
    const r = await h.request('GET', `${CONNECTIONS}?limit=100`, { session });
    assert.equal(r.status, 200, r.text);
    return (r.body.data as { id: string; connectorKey: string }[]).filter(
      (c) => c.connectorKey === connectorKey,
    );
  };

  test('complete answers the provider’s URL; the callback binds the tokens and completes the link', async () => {
    const t = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const connectorKey = await makeProvider();
    const link = await oauthLink(t.session, connectorKey);
    const started = await complete(link.code);
    assert.equal(started.status, 200, started.text);
    assert.ok(started.body.authorizationUrl.startsWith(idp.authorizationUrl), started.text);
    assert.equal(
      (await linkOf(t.session, link.id)).status,
      'pending',
      'the link completed before the callback',
    );
    const { response, location } = await callback(await atProvider(started.body.authorizationUrl));
    assert.equal(
      location.href,
      new URL(`/connect/${t.tenant.id}?status=completed`, h.config.publicUrl).href,
      location.href,
    );
    assert.equal(response.headers.get('cache-control'), 'no-store', 'the callback’s answer may be cached');
    const done = await linkOf(t.session, link.id);
    assert.equal(done.status, 'completed', 'the link is not completed');
    const [made] = await linkConnections(t.session, connectorKey);
    assert.equal(done.connectionId, made?.id, 'the link names another connection');
    const seen = await authorizationOf({ session: t.session }, made?.id ?? '');
    assert.equal(seen.authorization.status, 'authorized', 'the connection is not authorized');
    assert.equal((await complete(link.code)).status, 401, 'a completed link still works');
    const [row] = await auditOf(t.session, 'connection.authorize');
    assert.equal(row?.actorType, 'connect_link', 'not audited as the link');
    assert.equal(row?.actorId, link.id, 'not audited as this link');
    assert.equal(row?.metadata.subject, 'customer-7', 'the audit row does not name the subject');
  });

  test('the provider refuses: the page says so, the link stays pending, and a retry reuses the same connection', async () => {
    const t = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const connectorKey = await makeProvider();
    const link = await oauthLink(t.session, connectorKey);
    const first = await complete(link.code);
    assert.equal(first.status, 200, first.text);
    const refused = await callback(await atProvider(first.body.authorizationUrl, true));
    assert.equal(
      refused.location.pathname,
      `/connect/${t.tenant.id}`,
      `the refusal went elsewhere: ${refused.location.href}`,
    );
    assert.match(
      refused.location.searchParams.get('authorizationError') ?? '',
      /access_denied/,
      `the page does not say the provider refused: ${refused.location.href}`,
    );
    assert.equal((await linkOf(t.session, link.id)).status, 'pending', 'a refusal ended the link');
    const [half] = await linkConnections(t.session, connectorKey);
    assert.ok(half, 'the link made no connection');

    const again = await complete(link.code);
    assert.equal(again.status, 200, again.text);
    const { location } = await callback(await atProvider(again.body.authorizationUrl));
    assert.equal(location.searchParams.get('status'), 'completed', location.href);
    const made = await linkConnections(t.session, connectorKey);
    assert.equal(made.length, 1, `the link made ${made.length} connections`);
    assert.equal(
      (await linkOf(t.session, link.id)).connectionId,
      half.id,
      'the link completed with another connection',
    );
  });

  test('a state works once: of two callbacks with it, one binds and one is told it was used', async () => {
    const t = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const connectorKey = await makeProvider();
    const link = await oauthLink(t.session, connectorKey);
    const started = await complete(link.code);
    const back = await atProvider(started.body.authorizationUrl);
    const answers = await Promise.all([callback(back), callback(back)]);
    const completed = answers.filter((a) => a.location.searchParams.get('status') === 'completed');
    assert.equal(completed.length, 1, answers.map((a) => a.location.href).join(' '));
    const other = answers.find((a) => a !== completed[0]);
    assert.match(
      other?.location.searchParams.get('authorizationError') ?? '',
      /already used/,
      `the second callback: ${other?.location.href}`,
    );
  });

  test('a link deleted after the complete binds nothing at the callback', async () => {
    const t = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const connectorKey = await makeProvider();
    const link = await oauthLink(t.session, connectorKey);
    const started = await complete(link.code);
    const back = await atProvider(started.body.authorizationUrl);
    const deleted = await h.request('DELETE', `${LINKS}/${link.id}`, { session: t.session });
    assert.equal(deleted.status, 204, deleted.text);
    const { location } = await callback(back);
    assert.match(location.searchParams.get('authorizationError') ?? '', /deleted/, location.href);
    const [half] = await linkConnections(t.session, connectorKey);
    assert.equal(
      (await authorizationOf({ session: t.session }, half?.id ?? '')).authorization.status,
      'none',
      'a deleted link’s authorization was bound',
    );
  });

  test('a retry after the tenant revoked the link’s connection makes no second one (409)', async () => {
    const t = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const connectorKey = await makeProvider();
    const link = await oauthLink(t.session, connectorKey);
    assert.equal((await complete(link.code)).status, 200, 'the first complete failed');
    const [half] = await linkConnections(t.session, connectorKey);
    const revoked = await h.request('POST', `${CONNECTIONS}/${half?.id}/revoke`, { session: t.session });
    assert.equal(revoked.status, 200, revoked.text);
    const again = await complete(link.code);
    assert.equal(again.status, 409, again.text);
    assert.match(again.body.detail, /revoked/, again.text);
    assert.equal((await linkConnections(t.session, connectorKey)).length, 1, 'the retry made a connection');
  });

  test('one tenant’s state with another authorization’s code binds nothing in either tenant (PKCE)', async () => {
    const a = await tenantWithConnection();
    const b = await tenantWithConnection();
    const portalA = await portalSession(a.tenant.id, { access: 'manage' });
    const portalB = await portalSession(b.tenant.id, { access: 'manage' });
    const backA = await atProvider(
      (await authorizeWith({ token: portalA.token }, a.connectionId)).body.authorizationUrl,
    );
    const backB = await atProvider(
      (await authorizeWith({ token: portalB.token }, b.connectionId)).body.authorizationUrl,
    );
    const swapped = new URLSearchParams({
      code: backB.searchParams.get('code') ?? '',
      state: backA.searchParams.get('state') ?? '',
    });
    const { location } = await callback(`?${swapped.toString()}`);
    assert.equal(
      location.pathname,
      `/portal/${a.tenant.id}/connections/${a.connectionId}`,
      `the swapped callback went elsewhere: ${location.href}`,
    );
    assert.ok(location.searchParams.get('authorizationError'), `a swapped code was bound: ${location.href}`);
    assert.equal(
      (await authorizationOf({ session: a.session }, a.connectionId)).authorization.status,
      'none',
      'a swapped code bound tokens in tenant A',
    );
    assert.equal(
      (await authorizationOf({ session: b.session }, b.connectionId)).authorization.status,
      'none',
      'a swapped code bound tokens in tenant B',
    );
    assert.ok(
      !location.href.includes(b.connectionId) && !location.href.includes(b.tenant.id),
      'the page names the other tenant’s connection or tenant',
    );
  });
});
