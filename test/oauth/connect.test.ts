import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { systemScopeOf } from '../../src/access/scope.js';
import { HttpProblem } from '../../src/http/problem.js';
import { accessTokenFor, type TokenDeps } from '../../src/oauth/tokens.js';
import { createSender } from '../../src/outbound/sender.js';
import { assertNoLeak, makeKey, makeSignedInTenant, makeUser, signIn } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startOAuthProvider, type TestOAuthProvider } from '../helpers/oauth-provider.js';
import { firingAlerts } from '../helpers/operate.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// Connecting to a real OAuth 2.0 provider (oidc-provider on 127.0.0.1, docs/api/oauth.md): authorize
// with PKCE, the callback's code exchange, refresh before expiry and with rotation, invalid_grant,
// and client credentials.
let h: Harness;
let idp: TestOAuthProvider;
let tokens: TokenDeps;
let clock: Date | null = null;
let close: () => Promise<unknown>;
const seen: string[] = [];

before(async () => {
  h = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_TIMEOUT_MS: '5000',
      ALERT_EVALUATION_INTERVAL_MS: '100',
    },
    workers: { pollMs: 50 },
  });
  const closing: Array<() => unknown> = [];
  idp = await startOAuthProvider({ after: (fn) => closing.push(fn) }, { redirectUri: CALLBACK_URL(h) });
  const sender = createSender({ policy: h.config.delivery, timeoutMs: 5000 });
  closing.push(() => sender.close());
  close = () => Promise.all(closing.map((fn) => fn()));
  tokens = { ctx: { db: h.database.kysely, keyring: h.keyring, now: () => clock ?? new Date() }, sender };
});
after(async () => {
  // Every token the provider handed out, and its client secret, never in a log or an answer.
  assertNoLeak(h, [idp.clientSecret, ...seen]);
  await close();
  await h.close();
});

const CALLBACK_URL = (harness: Harness) => new URL('/api/v1/oauth/callback', harness.config.publicUrl).href;
const PROVIDERS = '/api/v1/platform/oauth-providers';
const CONNECTIONS = '/api/v1/integrations/connections';
let n = 0;

async function makeProvider(overrides: Record<string, unknown> = {}) {
  const r = await h.request('POST', PROVIDERS, {
    token: h.platformToken,
    body: {
      key: `idp${++n}-${Date.now().toString(36)}`,
      name: 'Test IdP',
      authorizationUrl: idp.authorizationUrl,
      tokenUrl: idp.tokenUrl,
      apiBaseUrl: idp.apiBaseUrl,
      clientId: idp.clientId,
      clientSecret: idp.clientSecret,
      scopes: idp.scopes,
      ...overrides,
    },
  });
  assert.equal(r.status, 201, `creating the provider answered ${r.status}: ${r.text}`);
  return r.body as { key: string; connectorKey: string };
}

async function makeConnection(session: TestSession, connectorKey: string) {
  const r = await h.request('POST', CONNECTIONS, { session, body: { connectorKey, displayName: 'IdP API' } });
  assert.equal(r.status, 201, `creating the connection answered ${r.status}: ${r.text}`);
  return r.body as { id: string; credentialsBound: boolean; authorization: Record<string, unknown> };
}

async function authorizationUrl(session: TestSession, connectionId: string): Promise<URL> {
  const r = await h.request('POST', `${CONNECTIONS}/${connectionId}/authorize`, { session });
  assert.equal(r.status, 200, `authorize answered ${r.status}: ${r.text}`);
  return new URL(r.body.authorizationUrl);
}

/** The browser arriving at hubgate's callback with what the provider sent; answers where it is sent next. */
async function callback(session: TestSession, back: URL | string): Promise<URL> {
  const query = typeof back === 'string' ? back : back.search;
  const r = await h.request('GET', `/api/v1/oauth/callback${query}`, { session });
  assert.equal(r.status, 303, `the callback answered ${r.status}: ${r.text}`);
  return new URL(r.headers.get('location') ?? 'about:blank');
}

async function connection(session: TestSession, id: string) {
  const r = await h.request('GET', `${CONNECTIONS}/${id}`, { session });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/** The tokens hubgate holds for a connection, as only the test can read them. */
async function storedTokens(id: string): Promise<{ accessToken: string; refreshToken: string | null }> {
  const row = await h.database.kysely
    .selectFrom('connections')
    .select('credentials_sealed')
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  assert.ok(row.credentials_sealed, 'the connection holds no tokens');
  const held = JSON.parse(h.keyring.open('connection-credentials', row.credentials_sealed, id));
  seen.push(held.accessToken, ...(held.refreshToken ? [held.refreshToken] : []));
  return held;
}

/** A tenant with an authorized connection to the provider, through the whole browser flow. */
async function authorizedConnection() {
  const t = await makeSignedInTenant(h);
  const provider = await makeProvider();
  const c = await makeConnection(t.session, provider.connectorKey);
  const back = await idp.authorize((await authorizationUrl(t.session, c.id)).href);
  const page = await callback(t.session, back);
  assert.equal(page.searchParams.get('authorizationError'), null, `the callback failed: ${page.href}`);
  return { ...t, provider, connectionId: c.id, scope: systemScopeOf(t.tenant.id) };
}

describe('authorize', () => {
  test('the authorization URL: code, client, redirect URI, scopes, a state stored hashed, PKCE S256', async () => {
    const { session, tenant } = await makeSignedInTenant(h);
    const provider = await makeProvider();
    const c = await makeConnection(session, provider.connectorKey);
    assert.equal(c.credentialsBound, false, 'a new connection is bound');
    assert.deepEqual(
      c.authorization,
      { status: 'none', scopes: [], expiresAt: null },
      'a new connection is authorized',
    );
    const url = await authorizationUrl(session, c.id);
    assert.equal(url.origin + url.pathname, idp.authorizationUrl, 'the URL is not the provider’s');
    const q = url.searchParams;
    assert.equal(q.get('response_type'), 'code', 'response_type is not code');
    assert.equal(q.get('client_id'), idp.clientId, 'client_id is not the provider’s client');
    assert.equal(
      q.get('redirect_uri'),
      CALLBACK_URL(h),
      'redirect_uri is not PUBLIC_URL/api/v1/oauth/callback',
    );
    assert.equal(q.get('scope'), idp.scopes.join(' '), 'scope is not the provider’s scopes');
    assert.equal(q.get('code_challenge_method'), 'S256', 'PKCE is not S256');
    assert.match(
      q.get('code_challenge') ?? '',
      /^[A-Za-z0-9_-]{43}$/,
      'the code challenge is not a SHA-256 in base64url',
    );
    const state = q.get('state') ?? '';
    assert.ok(state.length >= 32, 'the state is short');
    const rows = await h.database.kysely
      .selectFrom('oauth_states')
      .selectAll()
      .where('tenant_id', '=', tenant.id)
      .execute();
    assert.equal(rows.length, 1, 'not one state is stored');
    assert.ok(!JSON.stringify(rows).includes(state), 'the state is stored in clear');
    const again = await authorizationUrl(session, c.id);
    assert.notEqual(again.searchParams.get('state'), state, 'two authorizations share a state');
    assert.notEqual(
      again.searchParams.get('code_challenge'),
      q.get('code_challenge'),
      'two authorizations share a PKCE verifier',
    );
  });

  test('the whole code flow through the provider ends authorized, audited, with a token the provider takes', async () => {
    const { session, provider, connectionId, user } = await authorizedConnection().then(async (a) => ({
      ...a,
    }));
    const c = await connection(session, connectionId);
    assert.equal(c.credentialsBound, true, 'the authorized connection is not bound');
    assert.equal(c.authorization.status, 'authorized', `the authorization is ${c.authorization.status}`);
    assert.deepEqual(c.authorization.scopes, idp.scopes, 'the granted scopes differ');
    const expiresIn = Date.parse(c.authorization.expiresAt) - Date.now();
    assert.ok(
      expiresIn > 3500_000 && expiresIn <= 3600_000,
      `the token expires in ${expiresIn} ms, not an hour`,
    );
    assert.equal(JSON.stringify(c).includes('accessToken'), false, 'the connection shows a token field');
    const held = await storedTokens(connectionId);
    assert.ok(await idp.accepts(held.accessToken), 'the provider does not take the stored access token');
    assert.ok(held.refreshToken, 'no refresh token was kept');
    const code = idp.tokenCalls.filter((call) => call.grantType === 'authorization_code');
    assert.ok(
      code.length > 0 && code.every((call) => call.ok),
      'the code exchange failed at the provider (PKCE, Basic)',
    );
    const audit = await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', connectionId)
      .where('action', '=', 'connection.authorize')
      .execute();
    assert.equal(audit.length, 1, 'the authorization is not audited once');
    assert.equal(audit[0]?.actor_id, user.id, 'the audit row names another actor');
    assert.equal(audit[0]?.tenant_id, c.id ? audit[0]?.tenant_id : '', 'unreachable');
    assert.ok(provider.key, 'the provider has no key');
  });

  test('the callback lands on the connection page, authorized=true', async () => {
    const { session } = await makeSignedInTenant(h);
    const provider = await makeProvider();
    const c = await makeConnection(session, provider.connectorKey);
    const back = await idp.authorize((await authorizationUrl(session, c.id)).href);
    const page = await callback(session, back);
    assert.equal(page.origin, h.config.publicUrl.origin, 'the page is not on PUBLIC_URL');
    assert.equal(page.pathname, `/connections/${c.id}`, 'the page is not the connection’s');
    assert.equal(page.searchParams.get('authorized'), 'true', 'the page is not told it worked');
    // The same state again: used.
    const reused = await callback(session, back);
    assert.match(
      reused.searchParams.get('authorizationError') ?? '',
      /already used/,
      'a used state is not refused in words',
    );
  });

  test('a forged, missing, expired or foreign state binds nothing', async () => {
    const { session, tenant } = await makeSignedInTenant(h);
    const provider = await makeProvider();
    const c = await makeConnection(session, provider.connectorKey);
    const forged = await callback(session, '?code=abc&state=forged-state-value');
    assert.match(
      forged.searchParams.get('authorizationError') ?? '',
      /not started here/,
      'a forged state is not refused in words',
    );
    const missing = await callback(session, '?code=abc');
    assert.match(
      missing.searchParams.get('authorizationError') ?? '',
      /no state/,
      'a missing state is not refused in words',
    );

    // Another person of the same tenant cannot finish what this one started.
    const other = await signIn(h, await makeUser(h, tenant.id));
    const back = await idp.authorize((await authorizationUrl(session, c.id)).href);
    const foreign = await callback(other, back);
    assert.match(
      foreign.searchParams.get('authorizationError') ?? '',
      /someone else/,
      'another user’s state is not refused',
    );

    // Another tenant: the state is not even found.
    const b = await makeSignedInTenant(h);
    const back2 = await idp.authorize((await authorizationUrl(session, c.id)).href);
    const crossTenant = await callback(b.session, back2);
    assert.match(
      crossTenant.searchParams.get('authorizationError') ?? '',
      /not started here/,
      'another tenant’s state is taken',
    );
    assert.equal(crossTenant.pathname, '/connections', 'the page names the other tenant’s connection');

    // Eleven minutes later: expired.
    const back3 = await idp.authorize((await authorizationUrl(session, c.id)).href);
    h.setNow(new Date(Date.now() + 11 * 60_000));
    try {
      const expired = await callback(session, back3);
      assert.match(
        expired.searchParams.get('authorizationError') ?? '',
        /10 minutes/,
        'an expired state is not refused in words',
      );
    } finally {
      h.setNow(null);
    }
    const after = await connection(session, c.id);
    assert.equal(after.authorization.status, 'none', 'a refused callback authorized the connection');
    assert.equal(after.credentialsBound, false, 'a refused callback bound tokens');
  });

  test('the provider’s refusal is said in words', async () => {
    const { session } = await makeSignedInTenant(h);
    const provider = await makeProvider();
    const c = await makeConnection(session, provider.connectorKey);
    const back = await idp.authorize((await authorizationUrl(session, c.id)).href, { deny: true });
    assert.equal(back.searchParams.get('error'), 'access_denied', 'the provider did not refuse');
    const page = await callback(session, back);
    assert.equal(page.pathname, `/connections/${c.id}`, 'the page is not the connection’s');
    assert.match(
      page.searchParams.get('authorizationError') ?? '',
      /did not authorize hubgate \(access_denied\): The person refused/,
      'the refusal is not said in words',
    );
    assert.equal((await connection(session, c.id)).authorization.status, 'none', 'a refusal authorized');
  });

  test('a tenant key cannot authorize (route_not_allowed), a member cannot (role_forbidden), another tenant gets 404', async () => {
    const { session, tenant } = await makeSignedInTenant(h);
    const provider = await makeProvider();
    const c = await makeConnection(session, provider.connectorKey);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    const byKey = await h.request('POST', `${CONNECTIONS}/${c.id}/authorize`, { token: key.secret });
    assert.equal(byKey.status, 403, `a key answered ${byKey.status}`);
    assert.equal(byKey.body.code, 'route_not_allowed', `a key is refused with ${byKey.body.code}`);
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    const byMember = await h.request('POST', `${CONNECTIONS}/${c.id}/authorize`, { session: member });
    assert.equal(byMember.body.code, 'role_forbidden', `a member is refused with ${byMember.body.code}`);
    const b = await makeSignedInTenant(h);
    const byOther = await h.request('POST', `${CONNECTIONS}/${c.id}/authorize`, { session: b.session });
    assert.equal(byOther.status, 404, `another tenant answered ${byOther.status}`);
    const webhook = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: 'slack', displayName: 'chat' },
    });
    const notOAuth = await h.request('POST', `${CONNECTIONS}/${webhook.body.id}/authorize`, { session });
    assert.equal(notOAuth.status, 409, `authorizing a slack connection answered ${notOAuth.status}`);
  });
});

describe('tokens', () => {
  test('a fresh token is used as it is; one near its expiry is refreshed first, the refresh token rotated', async () => {
    const a = await authorizedConnection();
    const first = await storedTokens(a.connectionId);
    const calls = idp.tokenCalls.length;
    const same = await accessTokenFor(tokens, a.scope, a.connectionId);
    assert.equal(same.accessToken, first.accessToken, 'a fresh token was replaced');
    assert.equal(idp.tokenCalls.length, calls, 'a fresh token was refreshed');

    const expiresAt = Date.parse((await connection(a.session, a.connectionId)).authorization.expiresAt);
    clock = new Date(expiresAt - 30_000);
    try {
      const renewed = await accessTokenFor(tokens, a.scope, a.connectionId);
      assert.notEqual(renewed.accessToken, first.accessToken, 'a token 30 s from expiry was not refreshed');
      assert.ok(await idp.accepts(renewed.accessToken), 'the provider does not take the refreshed token');
    } finally {
      clock = null;
    }
    const refreshes = idp.tokenCalls.slice(calls);
    assert.deepEqual(refreshes, [{ grantType: 'refresh_token', ok: true }], 'not one refresh was made');
    const second = await storedTokens(a.connectionId);
    assert.notEqual(second.refreshToken, first.refreshToken, 'the rotated refresh token was not kept');
    // The stored (rotated) refresh token is the one that works: a forced refresh succeeds again.
    const forced = await accessTokenFor(tokens, a.scope, a.connectionId, { forceRefresh: true });
    assert.notEqual(forced.accessToken, second.accessToken, 'a forced refresh kept the token');
    assert.deepEqual(
      idp.tokenCalls.slice(calls).map((c) => c.ok),
      [true, true],
      'a refresh with the kept refresh token failed',
    );
    const c = await connection(a.session, a.connectionId);
    assert.equal(c.authorization.status, 'authorized', 'the connection is no longer authorized');
  });

  test('two refreshes at once spend the refresh token once', async () => {
    const a = await authorizedConnection();
    const calls = idp.tokenCalls.length;
    const expiresAt = Date.parse((await connection(a.session, a.connectionId)).authorization.expiresAt);
    clock = new Date(expiresAt - 10_000);
    try {
      const [x, y] = await Promise.all([
        accessTokenFor(tokens, a.scope, a.connectionId),
        accessTokenFor(tokens, a.scope, a.connectionId),
      ]);
      assert.equal(x.accessToken, y.accessToken, 'two callers got different tokens');
    } finally {
      clock = null;
    }
    assert.deepEqual(
      idp.tokenCalls.slice(calls),
      [{ grantType: 'refresh_token', ok: true }],
      'not exactly one refresh',
    );
    await storedTokens(a.connectionId);
  });

  test('a refresh waiting on a slow provider holds no other write: the token call runs outside any transaction', async (t) => {
    const a = await authorizedConnection();
    await storedTokens(a.connectionId);
    // The provider's token endpoint behind a door the test opens: the refresh waits at it.
    const { door: slow, reached, letGo } = await doorToTokenEndpoint(t, a.provider.key);
    const expiresAt = Date.parse((await connection(a.session, a.connectionId)).authorization.expiresAt);
    clock = new Date(expiresAt - 10_000);
    try {
      const refreshing = accessTokenFor(tokens, a.scope, a.connectionId);
      await reached;
      // While the refresh waits for the provider, the same connection and the rest of the hub take writes.
      const renamed = await h.request('PATCH', `${CONNECTIONS}/${a.connectionId}`, {
        session: a.session,
        body: { displayName: 'Renamed meanwhile' },
      });
      assert.equal(
        renamed.status,
        200,
        `an edit during the refresh answered ${renamed.status}: ${renamed.text}`,
      );
      const other = await makeSignedInTenant(h);
      await makeConnection(other.session, a.provider.connectorKey);
      letGo();
      const token = await refreshing;
      seen.push(token.accessToken);
      assert.equal(slow.received.length, 1, 'the refresh did not call the token endpoint exactly once');
    } finally {
      letGo();
      clock = null;
    }
    const after = await connection(a.session, a.connectionId);
    assert.equal(after.displayName, 'Renamed meanwhile', 'the edit made during the refresh was lost');
    assert.equal(after.authorization.status, 'authorized', 'the refresh did not store its tokens');
    await storedTokens(a.connectionId);
  });

  /** A token endpoint behind a door the test opens: the first call waits there; every call goes on to the IdP. */
  async function doorToTokenEndpoint(t: Parameters<typeof startReceiver>[0], providerKey: string) {
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const door = await startReceiver(t, async (request, i, res) => {
      // Only the first call waits: a later one (authorizing again) goes straight on.
      if (i === 0) {
        arrived();
        await held;
      }
      const answer = await fetch(idp.tokenUrl, {
        method: 'POST',
        headers: {
          authorization: String(request.headers.authorization),
          'content-type': String(request.headers['content-type']),
        },
        body: request.body,
      });
      res.statusCode = answer.status;
      res.setHeader('content-type', answer.headers.get('content-type') ?? 'application/json');
      res.end(await answer.text());
    });
    const moved = await h.request('PATCH', `${PROVIDERS}/${providerKey}`, {
      token: h.platformToken,
      body: { tokenUrl: door.url('/token'), clientSecret: idp.clientSecret },
    });
    assert.equal(moved.status, 200, moved.text);
    return { door, reached, letGo };
  }

  test('paused while a refresh waits on the provider: the call answers 409, the rotated tokens are kept, and resumed they are used', async (t) => {
    const a = await authorizedConnection();
    const before = await storedTokens(a.connectionId);
    const { door, reached, letGo } = await doorToTokenEndpoint(t, a.provider.key);
    const expiresAt = Date.parse((await connection(a.session, a.connectionId)).authorization.expiresAt);
    clock = new Date(expiresAt - 10_000);
    try {
      const refreshing = accessTokenFor(tokens, a.scope, a.connectionId).then(
        () => undefined,
        (error: unknown) => error,
      );
      await reached;
      const paused = await h.request('POST', `${CONNECTIONS}/${a.connectionId}/pause`, {
        session: a.session,
      });
      assert.equal(
        paused.status,
        200,
        `pausing during the refresh answered ${paused.status}: ${paused.text}`,
      );
      letGo();
      const error = await refreshing;
      assert.ok(
        error instanceof HttpProblem && error.status === 409,
        `a refresh answered after the pause did not end in a 409: ${String(error)}`,
      );
      // The provider rotated the refresh token: dropping its answer would lose the authorization.
      const held = await storedTokens(a.connectionId);
      assert.notEqual(
        held.accessToken,
        before.accessToken,
        'the refreshed tokens of a paused connection were dropped',
      );
      const resumed = await h.request('POST', `${CONNECTIONS}/${a.connectionId}/resume`, {
        session: a.session,
      });
      assert.equal(resumed.status, 200, resumed.text);
      // The lease was given back, and the token kept is used: no second refresh, no wait.
      const token = await accessTokenFor(tokens, a.scope, a.connectionId);
      assert.equal(
        token.accessToken,
        held.accessToken,
        'the call after the resume did not use the kept token',
      );
      assert.equal(door.received.length, 1, 'the call after the resume refreshed again');
      const c = await connection(a.session, a.connectionId);
      assert.equal(c.authorization.status, 'authorized', `the authorization is ${c.authorization.status}`);
    } finally {
      letGo();
      clock = null;
    }
    await storedTokens(a.connectionId);
  });

  test('authorized again while a refresh of the old tokens is out: the refresh, refused, does not mark it expired', async (t) => {
    const a = await authorizedConnection();
    await storedTokens(a.connectionId);
    const { reached, letGo } = await doorToTokenEndpoint(t, a.provider.key);
    const expiresAt = Date.parse((await connection(a.session, a.connectionId)).authorization.expiresAt);
    clock = new Date(expiresAt - 10_000);
    try {
      const refreshing = accessTokenFor(tokens, a.scope, a.connectionId).then(
        (token) => token.accessToken,
        (error: unknown) => error,
      );
      await reached;
      // Meanwhile someone authorizes again, and the provider forgets the refresh token being used.
      idp.revokeRefreshTokens();
      const back = await idp.authorize((await authorizationUrl(a.session, a.connectionId)).href);
      const page = await callback(a.session, back);
      assert.equal(
        page.searchParams.get('authorizationError'),
        null,
        `authorizing again failed: ${page.href}`,
      );
      letGo();
      const outcome = await refreshing;
      assert.equal(
        typeof outcome,
        'string',
        `the caller got no token after the new authorization: ${String(outcome)}`,
      );
      seen.push(String(outcome));
    } finally {
      letGo();
      clock = null;
    }
    const after = await connection(a.session, a.connectionId);
    assert.equal(
      after.authorization.status,
      'authorized',
      'the refused refresh marked the new authorization expired',
    );
    await storedTokens(a.connectionId);
  });

  test('the code exchange waiting on a slow provider holds no other write', async (t) => {
    const tenant = await makeSignedInTenant(h);
    const provider = await makeProvider();
    const c = await makeConnection(tenant.session, provider.connectorKey);
    const { reached, letGo } = await doorToTokenEndpoint(t, provider.key);
    try {
      const back = await idp.authorize((await authorizationUrl(tenant.session, c.id)).href);
      const arriving = callback(tenant.session, back);
      await reached;
      const renamed = await h.request('PATCH', `${CONNECTIONS}/${c.id}`, {
        session: tenant.session,
        body: { displayName: 'Renamed during the exchange' },
      });
      assert.equal(
        renamed.status,
        200,
        `an edit during the code exchange answered ${renamed.status}: ${renamed.text}`,
      );
      letGo();
      const page = await arriving;
      assert.equal(page.searchParams.get('authorizationError'), null, `the callback failed: ${page.href}`);
    } finally {
      letGo();
    }
    const after = await connection(tenant.session, c.id);
    assert.equal(
      after.displayName,
      'Renamed during the exchange',
      'the edit made during the exchange was lost',
    );
    assert.equal(after.authorization.status, 'authorized', 'the exchange did not bind its tokens');
    await storedTokens(c.id);
  });

  test('invalid_grant: expired, audited, ConnectionAuthorizationExpired fires; authorizing again fixes it', async () => {
    const a = await authorizedConnection();
    await storedTokens(a.connectionId);
    idp.revokeRefreshTokens();
    await assert.rejects(
      accessTokenFor(tokens, a.scope, a.connectionId, { forceRefresh: true }),
      (error: unknown) =>
        error instanceof HttpProblem && error.status === 409 && /authorize it again/.test(error.message),
      'a refused refresh is not a 409 asking to authorize again',
    );
    const c = await connection(a.session, a.connectionId);
    assert.equal(c.authorization.status, 'expired', `the authorization is ${c.authorization.status}`);
    const audit = await h.database.kysely
      .selectFrom('audit_log')
      .selectAll()
      .where('target_id', '=', a.connectionId)
      .where('action', '=', 'connection.authorization.expire')
      .execute();
    assert.equal(audit.length, 1, 'the expiry is not audited once');
    const alert = await waitUntil(
      async () =>
        (await firingAlerts(h)).find(
          (x) =>
            x.labels.alertname === 'ConnectionAuthorizationExpired' &&
            x.labels.connectionId === a.connectionId,
        ),
      { message: 'the ConnectionAuthorizationExpired alert' },
    );
    assert.equal(alert.labels.tenantId, a.tenant.id, 'the alert names another tenant');
    await assert.rejects(
      accessTokenFor(tokens, a.scope, a.connectionId),
      (error: unknown) => error instanceof HttpProblem && error.status === 409,
      'an expired connection still hands out a token',
    );

    const back = await idp.authorize((await authorizationUrl(a.session, a.connectionId)).href);
    const page = await callback(a.session, back);
    assert.equal(page.searchParams.get('authorized'), 'true', `authorizing again failed: ${page.href}`);
    assert.equal(
      (await connection(a.session, a.connectionId)).authorization.status,
      'authorized',
      'not authorized again',
    );
    await waitUntil(
      async () =>
        !(await firingAlerts(h)).some(
          (x) =>
            x.labels.alertname === 'ConnectionAuthorizationExpired' &&
            x.labels.connectionId === a.connectionId,
        ),
      { message: 'the ConnectionAuthorizationExpired alert to resolve' },
    );
    await storedTokens(a.connectionId);
  });
});

describe('client credentials', () => {
  test('creating the connection fetches a token and binds it; authorize is refused', async () => {
    const { session, tenant } = await makeSignedInTenant(h);
    const provider = await makeProvider({
      grant: 'client_credentials',
      authorizationUrl: undefined,
      scopes: ['api:read'],
    });
    const c = await makeConnection(session, provider.connectorKey);
    assert.equal(c.credentialsBound, true, 'the client-credentials connection is not bound');
    assert.equal(c.authorization.status, 'authorized', `the authorization is ${c.authorization.status}`);
    const held = await storedTokens(c.id);
    assert.ok(await idp.accepts(held.accessToken), 'the provider does not take the token');
    const refused = await h.request('POST', `${CONNECTIONS}/${c.id}/authorize`, { session });
    assert.equal(refused.status, 409, `authorize on client credentials answered ${refused.status}`);
    // Near expiry, a new token by client credentials again.
    const scope = systemScopeOf(tenant.id);
    clock = new Date(Date.parse(c.authorization.expiresAt as string) - 1000);
    try {
      const renewed = await accessTokenFor(tokens, scope, c.id);
      assert.notEqual(renewed.accessToken, held.accessToken, 'the token was not renewed');
    } finally {
      clock = null;
    }
    await storedTokens(c.id);
  });

  test('a provider that refuses the client: 409 saying why, no connection stored', async () => {
    const { session, tenant } = await makeSignedInTenant(h);
    const provider = await makeProvider({
      grant: 'client_credentials',
      authorizationUrl: undefined,
      clientSecret: 'wr0ng-secret',
    });
    const r = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: provider.connectorKey, displayName: 'x' },
    });
    assert.equal(r.status, 409, `a refused client answered ${r.status}: ${r.text}`);
    assert.match(r.body.detail, /invalid_client/, 'the refusal does not say why');
    const rows = await h.database.kysely
      .selectFrom('connections')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .execute();
    assert.equal(rows.length, 0, 'a connection was stored');
    assertNoLeak(h, ['wr0ng-secret']);
  });

  test('a token endpoint answering HTML, 10 MiB or a redirect: 409 in words, nothing bound', async (t) => {
    const { session, tenant } = await makeSignedInTenant(h);
    const answers: Record<string, (res: ServerResponse) => void> = {
      '/html': (res) => {
        res.setHeader('content-type', 'text/html');
        res.end('<html><body>Sign in</body></html>');
      },
      '/huge': (res) => {
        res.setHeader('content-type', 'application/json');
        res.end(`{"access_token":"${'x'.repeat(10 * 1024 * 1024)}"}`);
      },
      '/redirect': (res) => {
        res.statusCode = 302;
        res.setHeader('location', idp.tokenUrl);
        res.end();
      },
    };
    const fake = await startReceiver(t, (request, _i, res) => answers[request.url]?.(res));
    const expected: Record<string, RegExp> = {
      '/html': /something other than a JSON object/,
      '/huge': /larger than 64 KiB/,
      '/redirect': /redirect \(HTTP 302\), which is not followed/,
    };
    for (const [path, words] of Object.entries(expected)) {
      const provider = await makeProvider({
        grant: 'client_credentials',
        authorizationUrl: undefined,
        tokenUrl: fake.url(path),
      });
      const r = await h.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: provider.connectorKey, displayName: 'x' },
      });
      assert.equal(r.status, 409, `${path}: answered ${r.status}: ${r.text}`);
      assert.match(r.body.detail, words, `${path}: the refusal does not say what went wrong`);
    }
    const rows = await h.database.kysely
      .selectFrom('connections')
      .select('id')
      .where('tenant_id', '=', tenant.id)
      .execute();
    assert.equal(rows.length, 0, 'a connection was stored');
    assertNoLeak(h, [idp.clientSecret]);
  });
});
