import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNoLeak, makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const CONNECTIONS = '/api/v1/integrations/connections';
const HOOK_URL = 'https://hooks.example.com/hubgate';

async function connect(session: TestSession, body: Record<string, unknown>) {
  const r = await h.request('POST', CONNECTIONS, { session, body });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

async function connectionRows(tenantId: string) {
  return h.database.kysely.selectFrom('connections').selectAll().where('tenant_id', '=', tenantId).execute();
}

describe('create', () => {
  test('a webhook connection: 201 with safe metadata only, and an audit entry', async () => {
    const { tenant, session, user } = await makeSignedInTenant(h);
    const r = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: 'webhook', displayName: 'HR events', url: HOOK_URL, eventTypes: ['employee.*'] },
    });
    assert.equal(r.status, 201, r.text);
    assert.match(
      r.body.id,
      /^con_[0-9A-Za-z]{22}$/,
      'the connection ID is not in the con_ + 22 base62 format',
    );
    assert.deepEqual(
      r.body,
      {
        id: r.body.id,
        connectorKey: 'webhook',
        displayName: 'HR events',
        status: 'active',
        config: { url: HOOK_URL, eventTypes: ['employee.*'] },
        credentialsBound: false,
        deliveryEnabled: false,
        createdAt: r.body.createdAt,
        revokedAt: null,
        pausedAt: null,
        pausedReason: null,
        authorization: null,
      },
      'the created connection shows other fields than safe metadata',
    );
    const audit = await h.request('GET', '/api/v1/company/audit-log', { session });
    const entry = audit.body.data.find((e: { action: string }) => e.action === 'connection.create');
    assert.ok(entry, 'connection.create is audited');
    assert.equal(entry.targetId, r.body.id, 'the audit entry names another connection');
    assert.equal(entry.actorId, user.id, 'the audit entry names another actor');
    assert.equal(
      (await connectionRows(tenant.id)).length,
      1,
      'the tenant has other than one stored connection',
    );
  });

  test('http takes its method (default POST) and slack needs no config at all', async () => {
    const { session } = await makeSignedInTenant(h);
    const http = await connect(session, { connectorKey: 'http', displayName: 'ERP', url: HOOK_URL });
    assert.deepEqual(
      http.config,
      { url: HOOK_URL, method: 'POST' },
      'an http connection does not default to POST',
    );
    const put = await connect(session, {
      connectorKey: 'http',
      displayName: 'ERP',
      url: HOOK_URL,
      method: 'PUT',
    });
    assert.equal(put.config.method, 'PUT', 'an http connection ignores the chosen method');
    const slack = await connect(session, { connectorKey: 'slack', displayName: '#hr' });
    assert.deepEqual(slack.config, {}, 'a slack connection shows config it was never given');
  });

  test('bad input: 400 naming the field, with the documented code, and nothing stored', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const webhook = (extra: Record<string, unknown>) => ({
      connectorKey: 'webhook',
      displayName: 'x',
      ...extra,
    });
    const cases: Array<[string, unknown, string, string]> = [
      ['unknown connector', { connectorKey: 'ftp', displayName: 'x' }, 'validation_failed', 'connectorKey'],
      ['no connector', { displayName: 'x', url: HOOK_URL }, 'validation_failed', 'connectorKey'],
      ['connector not a string', { connectorKey: 7, displayName: 'x' }, 'validation_failed', 'connectorKey'],
      ['no url', webhook({}), 'validation_failed', 'url'],
      ['url not a string', webhook({ url: 5 }), 'validation_failed', 'url'],
      ['unknown field', webhook({ url: HOOK_URL, secret: 'x' }), 'validation_failed', 'secret'],
      [
        'slack with a url',
        { connectorKey: 'slack', displayName: 'x', url: HOOK_URL },
        'validation_failed',
        'url',
      ],
      ['empty name', webhook({ url: HOOK_URL, displayName: '' }), 'validation_failed', 'displayName'],
      ['blank name', webhook({ url: HOOK_URL, displayName: '   ' }), 'validation_failed', 'displayName'],
      [
        'long name',
        webhook({ url: HOOK_URL, displayName: 'n'.repeat(201) }),
        'validation_failed',
        'displayName',
      ],
      ['no name', { connectorKey: 'webhook', url: HOOK_URL }, 'validation_failed', 'displayName'],
      [
        'bad method',
        { connectorKey: 'http', displayName: 'x', url: HOOK_URL, method: 'GET' },
        'validation_failed',
        'method',
      ],
      [
        'bad event type',
        webhook({ url: HOOK_URL, eventTypes: ['Employee Created'] }),
        'validation_failed',
        'eventTypes.0',
      ],
      ['relative url', webhook({ url: '/hooks' }), 'validation_failed', 'url'],
      ['not a url', webhook({ url: 'hooks example com' }), 'validation_failed', 'url'],
      ['http url', webhook({ url: 'http://hooks.example.com/' }), 'destination_forbidden', 'url'],
      ['ftp url', webhook({ url: 'ftp://hooks.example.com/' }), 'destination_forbidden', 'url'],
      ['user info', webhook({ url: 'https://user:pw@hooks.example.com/' }), 'destination_forbidden', 'url'],
      ['localhost', webhook({ url: 'https://localhost/' }), 'destination_forbidden', 'url'],
      ['sub.localhost', webhook({ url: 'https://api.localhost:8443/' }), 'destination_forbidden', 'url'],
      [
        'metadata name',
        webhook({ url: 'https://metadata.google.internal/' }),
        'destination_forbidden',
        'url',
      ],
      ['*.internal', webhook({ url: 'https://db.corp.internal/' }), 'destination_forbidden', 'url'],
      ['loopback', webhook({ url: 'https://127.0.0.1/' }), 'destination_forbidden', 'url'],
      ['decimal', webhook({ url: 'https://2130706433/' }), 'destination_forbidden', 'url'],
      ['octal', webhook({ url: 'https://0177.0.0.1/' }), 'destination_forbidden', 'url'],
      ['hex', webhook({ url: 'https://0x7f.0.0.1/' }), 'destination_forbidden', 'url'],
      ['mapped v6', webhook({ url: 'https://[::ffff:127.0.0.1]/' }), 'destination_forbidden', 'url'],
      ['v6 loopback', webhook({ url: 'https://[::1]:8443/' }), 'destination_forbidden', 'url'],
      ['metadata ip', webhook({ url: 'https://169.254.169.254/latest/' }), 'destination_forbidden', 'url'],
      ['private', webhook({ url: 'https://10.1.2.3/' }), 'destination_forbidden', 'url'],
      [
        'http connector',
        { connectorKey: 'http', displayName: 'x', url: 'https://192.168.1.1/' },
        'destination_forbidden',
        'url',
      ],
    ];
    for (const [name, body, code, path] of cases) {
      const r = await h.request('POST', CONNECTIONS, { session, body });
      assert.equal(r.status, 400, `${name}: ${r.text}`);
      assert.equal(r.body.code, code, name);
      assert.ok(
        r.body.errors.some((e: { path: string }) => e.path === path),
        `${name}: expected an error at ${path}, got ${JSON.stringify(r.body.errors)}`,
      );
    }
    const userInfo = await h.request('POST', CONNECTIONS, {
      session,
      body: webhook({ url: 'https://user:hunter2secret@hooks.example.com/' }),
    });
    assert.ok(!userInfo.text.includes('hunter2secret'), 'a password in a URL is not echoed');
    assert.equal(
      (await connectionRows(tenant.id)).length,
      0,
      'refused connection requests stored a connection',
    );
  });
});

describe('list and get', () => {
  test('newest first, paginated, only the caller tenant, never a secret', async () => {
    const { session } = await makeSignedInTenant(h);
    const other = await makeSignedInTenant(h);
    await connect(other.session, { connectorKey: 'slack', displayName: 'theirs' });
    const made = [];
    for (const name of ['a', 'b', 'c']) {
      made.push(await connect(session, { connectorKey: 'webhook', displayName: name, url: HOOK_URL }));
    }
    const page1 = await h.request('GET', `${CONNECTIONS}?limit=2`, { session });
    assert.equal(page1.status, 200, 'listing connections fails');
    assert.deepEqual(
      page1.body.data.map((c: { displayName: string }) => c.displayName),
      ['c', 'b'],
      "the first page is not the two newest of the caller's connections",
    );
    assert.ok(page1.body.nextCursor, 'a partial page offers no next page');
    const page2 = await h.request('GET', `${CONNECTIONS}?limit=2&cursor=${page1.body.nextCursor}`, {
      session,
    });
    assert.deepEqual(
      page2.body.data.map((c: { displayName: string }) => c.displayName),
      ['a'],
      'the second page is not the remaining connection',
    );
    assert.equal(page2.body.nextCursor, null, 'the last page offers a next page');
    const one = await h.request('GET', `${CONNECTIONS}/${made[0].id}`, { session });
    assert.deepEqual(one.body, made[0], 'a connection read alone differs from the one created');
    const bad = await h.request('GET', `${CONNECTIONS}?limit=0`, { session });
    assert.equal(
      bad.body.code,
      'validation_failed',
      'limit=0 is refused with another code than validation_failed',
    );
  });

  test('unknown, malformed and other tenants’ IDs are 404 on every connection route', async () => {
    const { session } = await makeSignedInTenant(h);
    const other = await makeSignedInTenant(h);
    const theirs = await connect(other.session, { connectorKey: 'webhook', displayName: 't', url: HOOK_URL });
    const ids = [theirs.id, 'con_0000000000000000000000', 'not-an-id', 'key_0000000000000000000000'];
    for (const id of ids) {
      const calls = [
        h.request('GET', `${CONNECTIONS}/${id}`, { session }),
        h.request('POST', `${CONNECTIONS}/${id}/revoke`, { session }),
        h.request('PUT', `${CONNECTIONS}/${id}/credentials`, { session, body: {} }),
      ];
      for (const r of await Promise.all(calls)) {
        assert.equal(r.status, 404, `${id}: ${r.text}`);
        assert.equal(
          r.body.code,
          'not_found',
          `${id}: an unknown or foreign connection is refused with another code than not_found`,
        );
      }
    }
    const still = await h.request('GET', `${CONNECTIONS}/${theirs.id}`, { session: other.session });
    assert.equal(still.body.status, 'active', "another tenant's calls revoked the connection");
    assert.equal(
      still.body.credentialsBound,
      false,
      "another tenant's calls bound credentials to the connection",
    );
  });
});

describe('revoke', () => {
  test('active → disabled once and for good; again is the same answer; binding afterwards is 409', async () => {
    const { session } = await makeSignedInTenant(h);
    const c = await connect(session, { connectorKey: 'webhook', displayName: 'x', url: HOOK_URL });
    const first = await h.request('POST', `${CONNECTIONS}/${c.id}/revoke`, { session });
    assert.equal(first.status, 200, 'revoking a connection fails');
    assert.equal(first.body.status, 'disabled', 'a revoked connection is not disabled');
    assert.ok(first.body.revokedAt, 'a revoked connection does not say when it was revoked');
    assert.equal(first.body.deliveryEnabled, false, 'a revoked connection still delivers');
    const again = await h.request('POST', `${CONNECTIONS}/${c.id}/revoke`, { session });
    assert.equal(again.status, 200, 'revoking again is refused');
    assert.deepEqual(again.body, first.body, 'revoking again answers differently from the first time');
    const bind = await h.request('PUT', `${CONNECTIONS}/${c.id}/credentials`, { session, body: {} });
    assert.equal(bind.status, 409, 'credentials can be bound to a revoked connection');
    assert.equal(
      bind.body.code,
      'conflict',
      'binding to a revoked connection is refused with another code than conflict',
    );
    const audit = await h.request('GET', '/api/v1/company/audit-log', { session });
    const revokes = audit.body.data.filter((e: { action: string }) => e.action === 'connection.revoke');
    assert.equal(revokes.length, 1, 'a repeated revoke changes nothing and is not audited again');
  });
});

describe('credentials', () => {
  test('webhook: {} generates a signing secret shown once; it is stored encrypted and never shown again', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const c = await connect(session, { connectorKey: 'webhook', displayName: 'x', url: HOOK_URL });
    const r = await h.request('PUT', `${CONNECTIONS}/${c.id}/credentials`, { session, body: {} });
    assert.equal(r.status, 200, r.text);
    assert.equal(
      r.headers.get('cache-control'),
      'no-store',
      'the response showing the signing secret may be cached',
    );
    const secret: string = r.body.credentials.signingSecret;
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+={0,2}$/, 'the signing secret is not whsec_ + base64');
    assert.equal(
      Buffer.from(secret.slice(6), 'base64').length,
      32,
      'the signing secret is not 32 random bytes',
    );
    assert.deepEqual(
      Object.keys(r.body.credentials),
      ['signingSecret'],
      'the bind answer shows other credentials than the signing secret',
    );
    assert.equal(
      r.body.connection.credentialsBound,
      true,
      'the connection does not show credentials as bound',
    );
    assert.equal(r.body.connection.deliveryEnabled, true, 'a connection with credentials does not deliver');

    const [row] = await connectionRows(tenant.id);
    assert.ok(
      row?.credentials_sealed && !row.credentials_sealed.includes(secret.slice(6)),
      'the signing secret is stored in the clear',
    );
    assert.deepEqual(
      JSON.parse(h.keyring.open('connection-credentials', row.credentials_sealed, c.id)),
      {
        signingSecret: secret,
      },
      'the stored credentials do not open to the signing secret shown',
    );

    await h.request('GET', `${CONNECTIONS}/${c.id}`, { session });
    await h.request('GET', CONNECTIONS, { session });
    await h.request('GET', '/api/v1/integration-hub/overview', { session });
    await h.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
    await h.request('GET', '/api/v1/company/audit-log', { session });
    assertNoLeak(h, [], [secret]);
  });

  test('webhook: re-binding keeps the previous secret valid for 24 h; a given secret is not echoed', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const c = await connect(session, { connectorKey: 'webhook', displayName: 'x', url: HOOK_URL });
    const first = await h.request('PUT', `${CONNECTIONS}/${c.id}/credentials`, { session, body: {} });
    const chosen = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
    const r = await h.request('PUT', `${CONNECTIONS}/${c.id}/credentials`, {
      session,
      body: { signingSecret: chosen },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.credentials, {}, 'a chosen signing secret is echoed back');
    const [row] = await connectionRows(tenant.id);
    assert.ok(
      row?.previous_credentials_sealed && row.previous_valid_until,
      're-binding keeps no previous secret, or no end to its validity',
    );
    assert.deepEqual(
      JSON.parse(h.keyring.open('connection-credentials', row.previous_credentials_sealed, c.id)),
      {
        signingSecret: first.body.credentials.signingSecret,
      },
      'the previous secret kept is not the one bound before',
    );
    const overlap = new Date(row.previous_valid_until).getTime() - Date.now();
    assert.ok(overlap > 23.9 * 3600_000 && overlap <= 24 * 3600_000, `overlap ${overlap} ms`);
    assertNoLeak(h, [chosen], [first.body.credentials.signingSecret]);
  });

  test('bad credentials: 400 naming the field, nothing bound', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const hook = await connect(session, { connectorKey: 'webhook', displayName: 'w', url: HOOK_URL });
    const slack = await connect(session, { connectorKey: 'slack', displayName: 's' });
    const http = await connect(session, { connectorKey: 'http', displayName: 'h', url: HOOK_URL });
    const cases: Array<[string, string, unknown, string, string]> = [
      [
        'wrong prefix',
        hook.id,
        { signingSecret: `sk_${'a'.repeat(40)}` },
        'validation_failed',
        'signingSecret',
      ],
      [
        'too short',
        hook.id,
        { signingSecret: `whsec_${Buffer.alloc(16).toString('base64')}` },
        'validation_failed',
        'signingSecret',
      ],
      ['unknown field', hook.id, { signingSecret: undefined, token: 'x' }, 'validation_failed', 'token'],
      ['not a string', hook.id, { signingSecret: 5 }, 'validation_failed', 'signingSecret'],
      ['slack missing url', slack.id, {}, 'validation_failed', 'webhookUrl'],
      [
        'slack localhost',
        slack.id,
        { webhookUrl: 'https://localhost/x' },
        'destination_forbidden',
        'webhookUrl',
      ],
      [
        'slack private',
        slack.id,
        { webhookUrl: 'https://[fd00::1]/x' },
        'destination_forbidden',
        'webhookUrl',
      ],
      ['http missing value', http.id, { headerName: 'X-Api-Key' }, 'validation_failed', 'headerValue'],
      [
        'http reserved header',
        http.id,
        { headerName: 'Host', headerValue: 'x' },
        'validation_failed',
        'headerName',
      ],
      [
        'http bad header name',
        http.id,
        { headerName: 'X Api', headerValue: 'x' },
        'validation_failed',
        'headerName',
      ],
      [
        'http CRLF',
        http.id,
        { headerName: 'X-Api-Key', headerValue: 'a\r\nHost: evil' },
        'validation_failed',
        'headerValue',
      ],
      ...[
        'a\rb',
        'a\nb',
        'a\u0001b',
        'a\u001fb',
        'a\u007fb',
        'Bearer \u20ac',
        'a\u2028b',
        'key \u{1f511}',
      ].map((headerValue): [string, string, unknown, string, string] => [
        `http value ${JSON.stringify(headerValue)}`,
        http.id,
        { headerName: 'X-Api-Key', headerValue },
        'validation_failed',
        'headerValue',
      ]),
      ...['X-Äpi', 'X:Api', 'X-Api\u0000', '(X)', ''].map(
        (headerName): [string, string, unknown, string, string] => [
          `http name ${JSON.stringify(headerName)}`,
          http.id,
          { headerName, headerValue: 'x' },
          'validation_failed',
          'headerName',
        ],
      ),
    ];
    for (const [name, id, body, code, path] of cases) {
      const r = await h.request('PUT', `${CONNECTIONS}/${id}/credentials`, { session, body });
      assert.equal(r.status, 400, `${name}: ${r.text}`);
      assert.equal(r.body.code, code, `${name}: ${r.text}`);
      assert.ok(
        r.body.errors.some((e: { path: string }) => e.path === path),
        `${name}: expected an error at ${path}, got ${JSON.stringify(r.body.errors)}`,
      );
    }
    for (const row of await connectionRows(tenant.id))
      assert.equal(row.credentials_sealed, null, 'a refused credentials request bound credentials anyway');
  });

  test('http: any header value the HTTP client sends is bound (tabs, Latin-1), and the error never echoes a value', async () => {
    const { session } = await makeSignedInTenant(h);
    const http = await connect(session, { connectorKey: 'http', displayName: 'h', url: HOOK_URL });
    for (const headerValue of [
      'Bearer\tx',
      'Schl\u00fcssel \u00e9t\u00e9',
      ' spaced ',
      "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    ]) {
      const r = await h.request('PUT', `${CONNECTIONS}/${http.id}/credentials`, {
        session,
        body: { headerName: 'X-Api-Key', headerValue },
      });
      assert.equal(r.status, 200, `${JSON.stringify(headerValue)}: ${r.text}`);
    }
    const secret = 'topsecret\u20ac42';
    const refused = await h.request('PUT', `${CONNECTIONS}/${http.id}/credentials`, {
      session,
      body: { headerName: 'X-Api-Key', headerValue: secret },
    });
    assert.equal(refused.status, 400, refused.text);
    assertNoLeak(h, [secret, 'topsecret']);
  });

  test('slack and http: secrets bound, nothing echoed, never in any answer or log', async () => {
    const { session } = await makeSignedInTenant(h);
    const slack = await connect(session, { connectorKey: 'slack', displayName: 's' });
    const http = await connect(session, { connectorKey: 'http', displayName: 'h', url: HOOK_URL });
    const slackUrl = 'https://hooks.slack.com/services/T000/B000/slacksecretvalue42';
    const headerValue = 'Bearer httpsecretvalue42';
    const a = await h.request('PUT', `${CONNECTIONS}/${slack.id}/credentials`, {
      session,
      body: { webhookUrl: slackUrl },
    });
    assert.equal(a.status, 200, a.text);
    assert.deepEqual(a.body.credentials, {}, 'the Slack webhook URL is echoed back');
    const b = await h.request('PUT', `${CONNECTIONS}/${http.id}/credentials`, {
      session,
      body: { headerName: 'Authorization', headerValue },
    });
    assert.equal(b.status, 200, b.text);
    assert.deepEqual(b.body.credentials, {}, 'the http header value is echoed back');
    assert.equal(
      b.body.connection.deliveryEnabled,
      true,
      'an http connection with credentials does not deliver',
    );
    await h.request('GET', CONNECTIONS, { session });
    await h.request('GET', '/api/v1/company/audit-log', { session });
    await h.request('GET', '/api/v1/integration-hub/overview', { session });
    await h.request('GET', '/api/v1/integration-hub/credential-readiness', { session });
    assertNoLeak(h, [slackUrl, headerValue, 'slacksecretvalue42', 'httpsecretvalue42']);
  });
});

describe('access', () => {
  test('keys: READER reads, OPERATOR creates and revokes, ADMIN binds; the module must be entitled', async () => {
    const { session } = await makeSignedInTenant(h);
    const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const operator = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const admin = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    const body = { connectorKey: 'webhook', displayName: 'k', url: HOOK_URL };

    const denied = await h.request('POST', CONNECTIONS, { token: reader.secret, body });
    assert.equal(denied.status, 403, 'a READER key can create a connection');
    assert.equal(
      denied.body.code,
      'insufficient_scope',
      'a READER key is refused with another code than insufficient_scope',
    );
    const created = await h.request('POST', CONNECTIONS, { token: operator.secret, body });
    assert.equal(created.status, 201, 'an OPERATOR key cannot create a connection');
    const listed = await h.request('GET', CONNECTIONS, { token: reader.secret });
    assert.equal(listed.status, 200, 'a READER key cannot list connections');
    const noBind = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
      token: operator.secret,
      body: {},
    });
    assert.equal(
      noBind.body.code,
      'insufficient_scope',
      'an OPERATOR key is refused with another code than insufficient_scope when binding credentials',
    );
    const bound = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
      token: admin.secret,
      body: {},
    });
    assert.equal(bound.status, 200, 'an ADMIN key cannot bind credentials');
    const revoked = await h.request('POST', `${CONNECTIONS}/${created.body.id}/revoke`, {
      token: operator.secret,
    });
    assert.equal(revoked.body.status, 'disabled', 'an OPERATOR key cannot revoke a connection');

    const hubOnly = await makeSignedInTenant(h, { entitlements: ['integration_hub'] });
    const r = await h.request('GET', CONNECTIONS, { session: hubOnly.session });
    assert.equal(r.status, 403, 'a tenant without the integrations module can list connections');
    assert.equal(
      r.body.code,
      'entitlement_missing',
      'a tenant without the integrations module is refused with another code than entitlement_missing',
    );
  });

  test('session roles: MEMBER reads only; an unsafe call without the CSRF token is refused', async () => {
    const admin = await makeSignedInTenant(h);
    const member = await makeSignedInTenant(h, { role: 'MEMBER' });
    const body = { connectorKey: 'slack', displayName: 'm' };
    const r = await h.request('POST', CONNECTIONS, { session: member.session, body });
    assert.equal(r.status, 403, 'a MEMBER can create a connection');
    assert.equal(r.body.code, 'role_forbidden', 'a MEMBER is refused with another code than role_forbidden');
    assert.equal(
      (await h.request('GET', CONNECTIONS, { session: member.session })).status,
      200,
      'a MEMBER cannot list connections',
    );
    const noCsrf = await h.request('POST', CONNECTIONS, {
      headers: { cookie: admin.session.cookie },
      body,
    });
    assert.equal(noCsrf.status, 403, 'a session POST without the CSRF token creates a connection');
    assert.equal(
      noCsrf.body.code,
      'csrf_failed',
      'a session POST without the CSRF token is refused with another code than csrf_failed',
    );
  });
});
