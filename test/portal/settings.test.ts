import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeKey, makeSignedInTenant, makeTenant, makeUser, signIn } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { ENGINE } from '../helpers/test-database.js';

// The tenant's portal settings (docs/api/portal.md): framing and branding, set by the tenant's
// key-managing people and by the platform operator, and the framing of the portal page they decide.
// Two apps share one database, as two processes of one deployment do.

const COMPANY = '/api/v1/company/portal-settings';
const platformPath = (tenantId: string) => `/api/v1/platform/tenants/${tenantId}/portal-settings`;
const DEFAULTS = { frameAncestors: [], branding: { name: null, logoUrl: null, accentColor: null } };
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const VALID = {
  frameAncestors: ['https://app.example.com', 'https://admin.example.com:8443'],
  branding: { name: 'Acme Payroll', logoUrl: PNG, accentColor: '#0a7cff' },
};

let h: Harness;
/** A second process on the same database. */
let h2: Harness;

before(async () => {
  h = await startHarness();
  const database = ENGINE === 'postgres' ? await h.testDatabase.openAnother() : h.testDatabase.database;
  h2 = await startHarness({
    testDatabase: { ...h.testDatabase, database, drop: async () => {} },
    keyring: h.keyring,
  });
});
after(async () => {
  await h2?.close();
  await h?.close();
});

function assertProblem(r: TestResponse, status: number, code: string, what: string): void {
  assert.equal(r.status, status, `${what}: expected ${status} ${code}, got ${r.status}: ${r.text}`);
  assert.equal(r.body?.code, code, `${what}: expected the code ${code}: ${r.text}`);
}

/** Every directive of a CSP header, by name. */
function directives(header: string | null): Map<string, string[]> {
  return new Map(
    (header ?? '')
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...sources]) => [name!, sources]),
  );
}

const auditOf = async (session: TestSession) =>
  (await h.request('GET', '/api/v1/company/audit-log', { session })).body.data as Array<{
    action: string;
    actorType: string;
    targetId: string | null;
    metadata: Record<string, unknown>;
  }>;

describe('portal settings', () => {
  test('a tenant without settings has the defaults, by either prefix', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const own = await h.request('GET', COMPANY, { session });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.body, DEFAULTS, 'a tenant that saved nothing does not read the defaults');
    const operator = await h.request('GET', platformPath(tenant.id), { token: h.platformToken });
    assert.equal(operator.status, 200, operator.text);
    assert.deepEqual(operator.body, DEFAULTS, 'the operator does not read the defaults');
  });

  test('a PUT replaces the settings whole, is read back by both prefixes and on another process, and is audited', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    const saved = await h.request('PUT', COMPANY, { session, body: VALID });
    assert.equal(saved.status, 200, saved.text);
    assert.deepEqual(saved.body, VALID, 'the answer is not the settings saved');
    assert.deepEqual(
      (await h.request('GET', COMPANY, { session })).body,
      VALID,
      'the settings read back differ',
    );
    const elsewhere = await h2.request('GET', platformPath(tenant.id), { token: h.platformToken });
    assert.deepEqual(elsewhere.body, VALID, 'another process reads other settings');

    // A whole replace: what the next PUT says is all there is.
    const next = { frameAncestors: [], branding: { name: 'Acme', logoUrl: null, accentColor: null } };
    const replaced = await h.request('PUT', platformPath(tenant.id), { token: h.platformToken, body: next });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual((await h.request('GET', COMPANY, { session })).body, next, 'a PUT kept old fields');

    const entries = (await auditOf(session)).filter((e) => e.action === 'portal_settings.update');
    assert.equal(entries.length, 2, 'each PUT is not one audit row');
    const [byOperator, byPerson] = entries;
    assert.equal(byPerson?.actorType, 'user', 'the person is not the actor of their change');
    assert.equal(byPerson?.targetId, tenant.id, 'the audit row does not name the tenant');
    assert.deepEqual(
      byPerson?.metadata,
      {
        changedFields: ['frameAncestors', 'brandingName', 'logoUrl', 'accentColor'],
        frameAncestors: VALID.frameAncestors,
      },
      'the audit row does not say what changed',
    );
    assert.equal(byOperator?.actorType, 'platform_key', 'the platform key is not the actor of its change');
    assert.deepEqual(
      byOperator?.metadata.changedFields,
      ['frameAncestors', 'brandingName', 'logoUrl', 'accentColor'],
      'the audit row does not say what the operator changed',
    );
    // The logo (up to 64 KiB) is never copied into the log.
    assert.ok(!JSON.stringify(entries).includes(PNG.slice(30)), 'the logo is in the audit log');
  });

  const invalid: Array<[string, unknown, string]> = [
    ['an http origin', { frameAncestors: ['http://app.example.com'] }, 'frameAncestors.0'],
    ['an origin with a path', { frameAncestors: ['https://app.example.com/'] }, 'frameAncestors.0'],
    ['an origin in upper case', { frameAncestors: ['https://App.example.com'] }, 'frameAncestors.0'],
    [
      'an origin with the default port',
      { frameAncestors: ['https://a.example.com:443'] },
      'frameAncestors.0',
    ],
    ['a wildcard origin', { frameAncestors: ['https://*.example.com'] }, 'frameAncestors.0'],
    [
      'an origin that would add a CSP directive',
      { frameAncestors: ['https://a.example.com', "https://b.example.com;script-src 'unsafe-inline'"] },
      'frameAncestors.1',
    ],
    ['not a URL', { frameAncestors: ['app.example.com'] }, 'frameAncestors.0'],
    [
      'eleven origins',
      { frameAncestors: Array.from({ length: 11 }, (_, i) => `https://a${i}.example.com`) },
      'frameAncestors',
    ],
    [
      'the same origin twice',
      { frameAncestors: ['https://a.example.com', 'https://a.example.com'] },
      'frameAncestors',
    ],
    ['a name of 101 characters', { branding: { ...VALID.branding, name: 'n'.repeat(101) } }, 'branding.name'],
    ['an empty name', { branding: { ...VALID.branding, name: '' } }, 'branding.name'],
    [
      'an http logo',
      { branding: { ...VALID.branding, logoUrl: 'http://cdn.example.com/l.png' } },
      'branding.logoUrl',
    ],
    [
      'a script URL for the logo',
      { branding: { ...VALID.branding, logoUrl: 'javascript:alert(1)' } },
      'branding.logoUrl',
    ],
    [
      'a GIF data URL',
      { branding: { ...VALID.branding, logoUrl: 'data:image/gif;base64,R0lGODlhAQABAAAAACw=' } },
      'branding.logoUrl',
    ],
    [
      'a logo over 64 KiB',
      { branding: { ...VALID.branding, logoUrl: `data:image/png;base64,${'A'.repeat(64 * 1024)}` } },
      'branding.logoUrl',
    ],
    [
      'a three-digit colour',
      { branding: { ...VALID.branding, accentColor: '#fff' } },
      'branding.accentColor',
    ],
    ['a colour by name', { branding: { ...VALID.branding, accentColor: 'red' } }, 'branding.accentColor'],
    ['no branding (a PUT is whole)', { branding: undefined }, 'branding'],
    ['a branding field left out', { branding: { name: 'Acme', logoUrl: null } }, 'branding.accentColor'],
    ['an unknown field', { theme: 'dark' }, 'theme'],
  ];

  test('each invalid field is a 400 naming it, and nothing is written', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    assert.equal(
      (await h.request('PUT', COMPANY, { session, body: VALID })).status,
      200,
      'valid settings refused',
    );
    for (const [what, change, path] of invalid) {
      const body = { ...VALID, ...(change as object) };
      for (const [where, options] of [
        ['company', { session }],
        ['platform', { token: h.platformToken }],
      ] as const) {
        const url = where === 'company' ? COMPANY : platformPath(tenant.id);
        const r = await h.request('PUT', url, { ...options, body });
        assertProblem(r, 400, 'validation_failed', `${what} (${where})`);
        const paths = (r.body.errors as Array<{ path: string }>).map((e) => e.path);
        assert.ok(
          paths.includes(path),
          `${what} (${where}): the error names ${paths.join(', ')}, not ${path}`,
        );
      }
    }
    assert.deepEqual((await h.request('GET', COMPANY, { session })).body, VALID, 'a refused PUT wrote');
    const entries = (await auditOf(session)).filter((e) => e.action === 'portal_settings.update');
    assert.equal(entries.length, 1, 'a refused PUT was audited as a change');
  });

  test('validation comes before the lookup of the tenant; an unknown tenant is 404', async () => {
    const bad = { ...VALID, frameAncestors: ['http://x.example.com'] };
    const missing = 'ten_0000000000000000000000';
    assertProblem(
      await h.request('PUT', platformPath(missing), { token: h.platformToken, body: bad }),
      400,
      'validation_failed',
      'a bad body for an unknown tenant',
    );
    for (const method of ['GET', 'PUT'] as const)
      assertProblem(
        await h.request(method, platformPath(missing), {
          token: h.platformToken,
          ...(method === 'PUT' && { body: VALID }),
        }),
        404,
        'not_found',
        `${method} of an unknown tenant`,
      );
  });

  test('only key-managing people and the platform key may read or change them', async () => {
    const { tenant, session } = await makeSignedInTenant(h);
    for (const role of ['EXECUTIVE', 'PLATFORM_ADMIN']) {
      const manager = await signIn(h, await makeUser(h, tenant.id, { role }));
      const r = await h.request('PUT', COMPANY, { session: manager, body: VALID });
      assert.equal(r.status, 200, `${role}: ${r.text}`);
    }
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    for (const method of ['GET', 'PUT'] as const)
      assertProblem(
        await h.request(method, COMPANY, { session: member, ...(method === 'PUT' && { body: DEFAULTS }) }),
        403,
        'role_forbidden',
        `a MEMBER's ${method}`,
      );
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN', 'integration_hub:ADMIN'] });
    for (const method of ['GET', 'PUT'] as const)
      assertProblem(
        await h.request(method, COMPANY, { token: key.secret, ...(method === 'PUT' && { body: DEFAULTS }) }),
        403,
        'interactive_session_required',
        `a tnt_ key's ${method}`,
      );
    for (const method of ['GET', 'PUT'] as const) {
      const options = { ...(method === 'PUT' && { body: DEFAULTS }) };
      assertProblem(
        await h.request(method, platformPath(tenant.id), { session, ...options }),
        403,
        'platform_key_required',
        `a session's ${method} of a platform route`,
      );
      assertProblem(
        await h.request(method, platformPath(tenant.id), { token: key.secret, ...options }),
        403,
        'platform_key_required',
        `a tnt_ key's ${method} of a platform route`,
      );
      assertProblem(
        await h.request(method, COMPANY, { token: h.platformToken, ...options }),
        403,
        'route_not_allowed',
        `a plt_ key's ${method} of a company route`,
      );
    }
    assert.deepEqual((await h.request('GET', COMPANY, { session })).body, VALID, 'a refused PUT wrote');
  });
});

describe('the framing of the portal page', () => {
  test('/portal/<tenantId> may be framed by exactly the tenant’s origins, read at each load on every process', async () => {
    const tenant = await makeTenant(h);
    const page = async (app: Harness, path: string) => {
      const r = await app.request('GET', path);
      assert.equal(r.status, 200, `${path}: ${r.text}`);
      assert.match(r.text, /<div id="app"><\/div>/, `${path} is not the UI page`);
      assert.equal(r.headers.get('x-frame-options'), null, `${path} has X-Frame-Options`);
      return directives(r.headers.get('content-security-policy'));
    };
    const base = `/portal/${tenant.id}`;
    assert.deepEqual((await page(h, base)).get('frame-ancestors'), ["'none'"], 'framed with no settings');

    await h.request('PUT', platformPath(tenant.id), { token: h.platformToken, body: VALID });
    for (const [app, path] of [
      [h2, base],
      [h, `${base}/connections/con_x`],
      [h2, `${base}?x=1`],
    ] as const) {
      const csp = await page(app, path);
      assert.deepEqual(csp.get('frame-ancestors'), VALID.frameAncestors, `${path}: not the tenant's origins`);
      // The rest of the policy is the UI's own.
      assert.deepEqual(csp.get('script-src'), ["'self'"], `${path}: scripts from elsewhere`);
      assert.deepEqual(csp.get('default-src'), ["'self'"], `${path}: other sources`);
      assert.deepEqual(csp.get('img-src'), ["'self'", 'data:'], `${path}: images from elsewhere`);
    }
    const head = await fetch(`${h.baseUrl}${base}`, { method: 'HEAD' });
    assert.equal(head.status, 200, 'HEAD of the portal page failed');
    assert.equal(head.headers.get('x-frame-options'), null, 'HEAD has X-Frame-Options');

    await h2.request('PUT', platformPath(tenant.id), { token: h.platformToken, body: DEFAULTS });
    assert.deepEqual(
      (await page(h, base)).get('frame-ancestors'),
      ["'none'"],
      'an emptied list still frames',
    );
  });

  test('an unknown or malformed tenant ID gets frame-ancestors none, like a tenant that allows nothing', async () => {
    for (const id of ['ten_0000000000000000000000', 'nope', 'ten_%27self%27']) {
      const r = await h.request('GET', `/portal/${id}`);
      assert.equal(r.status, 200, `${id}: ${r.text}`);
      assert.equal(
        r.headers.get('x-frame-options'),
        null,
        `${id}: the page says more than the other portal pages`,
      );
      assert.deepEqual(
        directives(r.headers.get('content-security-policy')).get('frame-ancestors'),
        ["'none'"],
        id,
      );
    }
  });

  test('every other page keeps DENY, the connect page included', async () => {
    const tenant = await makeTenant(h);
    await h.request('PUT', platformPath(tenant.id), { token: h.platformToken, body: VALID });
    for (const path of [
      '/',
      '/sign-in',
      '/portal',
      `/connect/${tenant.id}`,
      `/people/portal/${tenant.id}`,
      '/api/v1/portal/x',
    ]) {
      const r = await h.request('GET', path);
      assert.equal(r.headers.get('x-frame-options'), 'DENY', `${path} may be framed`);
      assert.deepEqual(
        directives(r.headers.get('content-security-policy')).get('frame-ancestors'),
        ["'none'"],
        `${path} may be framed`,
      );
    }
  });
});
