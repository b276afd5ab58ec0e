import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertNoLeak, makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

// OAuth2 providers (docs/api/oauth.md): operator routes, the client secret write-only, URLs under
// the SSRF policy, each provider a connector `oauth2:<key>` of the catalog.
let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const PROVIDERS = '/api/v1/platform/oauth-providers';
const SECRET = 'client-5ecret-never-shown';
let n = 0;
const newKey = () => `prov${++n}-${Date.now().toString(36)}`;

const body = (overrides: Record<string, unknown> = {}) => ({
  key: newKey(),
  name: 'Example API',
  authorizationUrl: 'https://auth.example.com/authorize',
  tokenUrl: 'https://auth.example.com/token',
  apiBaseUrl: 'https://api.example.com/v1',
  clientId: 'hubgate-client',
  clientSecret: SECRET,
  scopes: ['read', 'write'],
  ...overrides,
});

const create = async (overrides: Record<string, unknown> = {}) => {
  const r = await h.request('POST', PROVIDERS, { token: h.platformToken, body: body(overrides) });
  assert.equal(r.status, 201, `creating a provider answered ${r.status}: ${r.text}`);
  return r.body;
};

const providerRows = () => h.database.kysely.selectFrom('oauth_providers').selectAll().execute();
const auditRows = (key: string) =>
  h.database.kysely
    .selectFrom('audit_log')
    .selectAll()
    .where('target_id', '=', key)
    .orderBy('created_at')
    .execute();

describe('providers', () => {
  test('create answers the provider without its secret, stores the secret sealed, audits it', async () => {
    const given = body();
    const r = await h.request('POST', PROVIDERS, { token: h.platformToken, body: given });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(
      r.body,
      {
        key: given.key,
        connectorKey: `oauth2:${given.key}`,
        name: 'Example API',
        authorizationUrl: given.authorizationUrl,
        tokenUrl: given.tokenUrl,
        apiBaseUrl: given.apiBaseUrl,
        clientId: 'hubgate-client',
        scopes: ['read', 'write'],
        grant: 'authorization_code',
        createdAt: r.body.createdAt,
        updatedAt: r.body.createdAt,
      },
      'the created provider shows other fields than expected',
    );
    const row = (await providerRows()).find((p) => p.key === given.key);
    assert.ok(row, 'the provider was not stored');
    assert.ok(!row.client_secret_sealed.includes(SECRET), 'the client secret is stored in clear');
    const audit = await auditRows(given.key);
    assert.deepEqual(
      audit.map((a) => a.action),
      ['oauth_provider.create'],
      'the create is not audited once',
    );
    assert.ok(!JSON.stringify(audit).includes(SECRET), 'the audit row holds the client secret');
  });

  test('read, list, patch and delete; the secret is never in any answer', async () => {
    const p = await create();
    const one = await h.request('GET', `${PROVIDERS}/${p.key}`, { token: h.platformToken });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body, p, 'the read differs from the create answer');
    const list = await h.request('GET', `${PROVIDERS}?limit=1`, { token: h.platformToken });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.data.length, 1, 'limit=1 answered another number of providers');
    assert.equal(list.body.data[0].key, p.key, 'the newest provider is not first');
    assert.equal(typeof list.body.nextCursor, 'string', 'a further page is not announced');
    const next = await h.request('GET', `${PROVIDERS}?limit=100&cursor=${list.body.nextCursor}`, {
      token: h.platformToken,
    });
    assert.equal(next.status, 200, next.text);
    assert.ok(
      !next.body.data.some((x: { key: string }) => x.key === p.key),
      'the next page repeats the first',
    );
    const bad = await h.request('GET', `${PROVIDERS}?cursor=nonsense`, { token: h.platformToken });
    assert.equal(bad.status, 400, `a bad cursor answered ${bad.status}`);

    const patched = await h.request('PATCH', `${PROVIDERS}/${p.key}`, {
      token: h.platformToken,
      body: { name: 'Renamed', scopes: ['read'], clientSecret: 'an0ther-5ecret' },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.name, 'Renamed', 'the name did not change');
    assert.deepEqual(patched.body.scopes, ['read'], 'the scopes did not change');
    assert.equal(patched.body.tokenUrl, p.tokenUrl, 'an omitted field changed');

    const moved = await h.request('PATCH', `${PROVIDERS}/${p.key}`, {
      token: h.platformToken,
      body: { tokenUrl: 'https://elsewhere.example.net/token' },
    });
    assert.equal(moved.status, 400, `moving the token URL without the secret answered ${moved.status}`);
    assert.equal(moved.body.errors[0].path, 'clientSecret', 'the refusal names another field');

    const gone = await h.request('DELETE', `${PROVIDERS}/${p.key}`, { token: h.platformToken });
    assert.equal(gone.status, 204, gone.text);
    const again = await h.request('GET', `${PROVIDERS}/${p.key}`, { token: h.platformToken });
    assert.equal(again.status, 404, `a deleted provider answered ${again.status}`);
    assert.deepEqual(
      (await auditRows(p.key)).map((a) => a.action),
      ['oauth_provider.create', 'oauth_provider.update', 'oauth_provider.delete'],
      'the changes are not audited one each',
    );
    assertNoLeak(h, [SECRET, 'an0ther-5ecret']);
  });

  test('bad input: 400 naming the field, nothing saved', async () => {
    const before = (await providerRows()).length;
    const cases: Array<[Record<string, unknown>, string, number]> = [
      [{ key: 'Upper' }, 'key', 400],
      [{ key: 'x' }, 'key', 400],
      [{ tokenUrl: 'not a url' }, 'tokenUrl', 400],
      [{ tokenUrl: 'https://127.0.0.1/token' }, 'tokenUrl', 400],
      [{ apiBaseUrl: 'https://169.254.169.254/latest' }, 'apiBaseUrl', 400],
      [{ authorizationUrl: 'https://user:pw@auth.example.com/a' }, 'authorizationUrl', 400],
      [{ authorizationUrl: undefined }, 'authorizationUrl', 400],
      [{ clientSecret: '' }, 'clientSecret', 400],
      [{ scopes: ['has space'] }, 'scopes.0', 400],
      [{ grant: 'password' }, 'grant', 400],
      [{ extra: true }, 'extra', 400],
    ];
    for (const [overrides, field] of cases) {
      const r = await h.request('POST', PROVIDERS, { token: h.platformToken, body: body(overrides) });
      assert.equal(r.status, 400, `${JSON.stringify(overrides)} answered ${r.status}: ${r.text}`);
      assert.ok(
        r.body.errors?.some((e: { path: string }) => e.path === field),
        `${JSON.stringify(overrides)} names ${JSON.stringify(r.body.errors)}, not ${field}`,
      );
    }
    const forbidden = await h.request('POST', PROVIDERS, {
      token: h.platformToken,
      body: body({ tokenUrl: 'https://10.0.0.1/token' }),
    });
    assert.equal(
      forbidden.body.code,
      'destination_forbidden',
      'a private token URL is not refused by the SSRF policy',
    );
    const p = await create();
    const twice = await h.request('POST', PROVIDERS, { token: h.platformToken, body: body({ key: p.key }) });
    assert.equal(twice.status, 409, `a second provider with the same key answered ${twice.status}`);
    assert.equal((await providerRows()).length, before + 1, 'a refused provider was saved');
    assertNoLeak(h, [SECRET]);
  });

  test('platform keys only: a session and a tenant key are refused', async () => {
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('GET', PROVIDERS, { session });
    assert.equal(r.status, 403, `a session listing providers answered ${r.status}`);
    assert.equal(r.body.code, 'platform_key_required', 'a session is refused with another code');
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN'] });
    const byKey = await h.request('GET', PROVIDERS, { token: key.secret });
    assert.equal(byKey.body.code, 'platform_key_required', `a tenant key is refused with ${byKey.body.code}`);
    const anonymous = await h.request('GET', PROVIDERS);
    assert.equal(anonymous.status, 401, `no credential answered ${anonymous.status}`);
  });

  test('a provider is a connector oauth2:<key> with the common config fields only; in use, it cannot be deleted', async () => {
    const p = await create({ key: newKey() });
    const { session } = await makeSignedInTenant(h);
    const catalog = await h.request('GET', '/api/v1/integration-hub/connectors', { session });
    assert.equal(catalog.status, 200, catalog.text);
    const connector = catalog.body.data.find(
      (c: { connectorKey: string }) => c.connectorKey === p.connectorKey,
    );
    assert.ok(connector, 'the provider is not in the connector catalog');
    assert.deepEqual(
      connector.configFields.map((f: { name: string }) => f.name).sort(),
      ['filter', 'maxPerSecond', 'ordering'],
      'the OAuth2 connector has other config fields than the common ones',
    );
    assert.deepEqual(connector.credentialFields, [], 'the OAuth2 connector takes pasted credentials');

    const refused = await h.request('POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: p.connectorKey, displayName: 'x', url: 'https://example.com' },
    });
    assert.equal(refused.status, 400, `an unknown field answered ${refused.status}: ${refused.text}`);
    const unnamed = await h.request('POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: p.connectorKey },
    });
    assert.equal(unnamed.status, 400, `a connection without a name answered ${unnamed.status}`);
    assert.ok(
      unnamed.body.errors.some((e: { path: string }) => e.path === 'displayName'),
      `the refusal names ${unnamed.text}, not displayName`,
    );
    const unknown = await h.request('POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: 'oauth2:nosuchprovider', displayName: 'x' },
    });
    assert.equal(unknown.status, 400, `an unknown provider answered ${unknown.status}: ${unknown.text}`);
    assert.equal(
      unknown.body.errors[0].path,
      'connectorKey',
      'an unknown provider is refused naming another field',
    );

    const c = await h.request('POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: p.connectorKey, displayName: 'Example', maxPerSecond: 5 },
    });
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.credentialsBound, false, 'a new authorization_code connection is bound');
    assert.deepEqual(
      c.body.authorization,
      { status: 'none', scopes: [], expiresAt: null },
      'a new connection shows another authorization',
    );
    const listed = await h.request('GET', '/api/v1/integrations/connections', { session });
    assert.deepEqual(
      listed.body.data[0].authorization,
      c.body.authorization,
      'the list shows another authorization',
    );
    const pasted = await h.request('PUT', `/api/v1/integrations/connections/${c.body.id}/credentials`, {
      session,
      body: {},
    });
    assert.equal(pasted.status, 409, `binding pasted credentials answered ${pasted.status}`);

    const inUse = await h.request('DELETE', `${PROVIDERS}/${p.key}`, { token: h.platformToken });
    assert.equal(inUse.status, 409, `deleting a provider in use answered ${inUse.status}`);
    const grant = await h.request('PATCH', `${PROVIDERS}/${p.key}`, {
      token: h.platformToken,
      body: { grant: 'client_credentials' },
    });
    assert.equal(grant.status, 409, `changing the grant of a provider in use answered ${grant.status}`);
    const revoked = await h.request('POST', `/api/v1/integrations/connections/${c.body.id}/revoke`, {
      session,
    });
    assert.equal(revoked.status, 200, revoked.text);
    const free = await h.request('DELETE', `${PROVIDERS}/${p.key}`, { token: h.platformToken });
    assert.equal(
      free.status,
      204,
      `deleting a provider no longer used answered ${free.status}: ${free.text}`,
    );
  });

  test('other connectors show authorization: null', async () => {
    const { session } = await makeSignedInTenant(h);
    const c = await h.request('POST', '/api/v1/integrations/connections', {
      session,
      body: { connectorKey: 'slack', displayName: 'chat' },
    });
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.authorization, null, 'a slack connection shows an authorization');
  });
});
