import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { registerGate } from '../../src/access/gate.js';
import { generateToken } from '../../src/crypto/api-tokens.js';
import { createKeyring } from '../../src/crypto/keyring.js';
import { inDays, makeKey, makeSignedInTenant, makeUser, signIn } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

/** One route of each class, with a body that would pass validation, so only access decides. */
const ROUTES = {
  platform: ['GET', '/api/v1/platform/tenants'],
  platformWrite: ['POST', '/api/v1/platform/tenants', { name: 'x' }],
  keyManagement: ['GET', '/api/v1/company/api-keys'],
  keyManagementWrite: [
    'POST',
    '/api/v1/company/api-keys',
    { name: 'k', scopes: ['integrations:READER'], expiresAt: inDays(1) },
  ],
  sessionOnly: ['GET', '/api/v1/auth/session'],
  auditLog: ['GET', '/api/v1/company/audit-log'],
  automation: ['GET', '/api/v1/automation/health'],
  capabilities: ['GET', '/api/v1/automation/capabilities'],
} as const satisfies Record<string, readonly [string, string, unknown?]>;

type Route = (typeof ROUTES)[keyof typeof ROUTES];
const call = (route: Route, options: { token?: string; session?: TestSession }) =>
  h.request(route[0], route[1], { ...options, body: route[2] });

async function expectCode(
  route: Route,
  options: { token?: string; session?: TestSession },
  status: number,
  code?: string,
) {
  const r = await call(route, options);
  assert.equal(r.status, status, `${route[0]} ${route[1]}: ${r.text}`);
  if (code) assert.equal(r.body.code, code, `${route[0]} ${route[1]}`);
}

describe('credential kind vs route class (docs/api/errors.md)', () => {
  test('a tenant key on a platform route is 403 platform_key_required', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN', 'integration_hub:ADMIN'] });
    await expectCode(ROUTES.platform, { token: key.secret }, 403, 'platform_key_required');
    await expectCode(ROUTES.platformWrite, { token: key.secret }, 403, 'platform_key_required');
  });

  test('a session, even PLATFORM_ADMIN’s, on a platform route is 403 platform_key_required', async () => {
    const { tenant } = await makeSignedInTenant(h);
    const session = await signIn(h, await makeUser(h, tenant.id, { role: 'PLATFORM_ADMIN' }));
    await expectCode(ROUTES.platform, { session }, 403, 'platform_key_required');
    await expectCode(ROUTES.platformWrite, { session }, 403, 'platform_key_required');
  });

  test('a platform key on a tenant, key-management or session route is 403 route_not_allowed', async () => {
    for (const route of [
      ROUTES.automation,
      ROUTES.capabilities,
      ROUTES.keyManagement,
      ROUTES.sessionOnly,
      ROUTES.auditLog,
    ]) {
      await expectCode(route, { token: h.platformToken }, 403, 'route_not_allowed');
    }
  });

  test('a tenant key on a route outside the allowlist is 403 route_not_allowed', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session, { scopes: ['integrations:ADMIN', 'integration_hub:ADMIN'] });
    await expectCode(ROUTES.sessionOnly, { token: key.secret }, 403, 'route_not_allowed');
    await expectCode(ROUTES.auditLog, { token: key.secret }, 403, 'route_not_allowed');
  });

  test('no credential, or a bad one, is 401 on every non-public route', async () => {
    for (const route of Object.values(ROUTES)) {
      await expectCode(route, {}, 401, 'unauthenticated');
      await expectCode(route, { token: generateToken('tnt_') }, 401, 'unauthenticated');
      await expectCode(route, { token: `${generateToken('tnt_').slice(0, -1)}!` }, 401, 'unauthenticated');
    }
  });

  test('an unknown route is 404 whatever the credential', async () => {
    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    for (const options of [{}, { token: key.secret }, { session }, { token: h.platformToken }]) {
      const r = await h.request('GET', '/api/v1/integrations/nothing-here', options);
      assert.equal(r.status, 404, 'an unknown route answers other than 404 for some credential');
    }
  });
});

describe('entitlement, then scope or role', () => {
  test('a key whose tenant lost every module of the route is 403 entitlement_missing', async () => {
    const { tenant, session } = await makeSignedInTenant(h, {
      entitlements: ['integrations', 'integration_hub'],
    });
    const key = await makeKey(h, session, { scopes: ['integrations:READER'] });
    await expectCode(ROUTES.automation, { token: key.secret }, 200);
    await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
      token: h.platformToken,
      body: { entitlements: [] },
    });
    // Past the key cache: within the 1 s of docs/api/authentication.md, half a second more for a loaded machine.
    await waitUntil(async () => (await call(ROUTES.automation, { token: key.secret })).status === 403, {
      message: 'the key refused once its tenant lost the module',
      timeoutMs: 1_500,
    });
    await expectCode(ROUTES.automation, { token: key.secret }, 403, 'entitlement_missing');
    // A session of the same tenant is refused the same way.
    await expectCode(ROUTES.automation, { session }, 403, 'entitlement_missing');
  });

  test('a key without a scope for the entitled module is 403 insufficient_scope naming the scope', async () => {
    const { tenant, session } = await makeSignedInTenant(h, {
      entitlements: ['integrations', 'integration_hub'],
    });
    const key = await makeKey(h, session, { scopes: ['integration_hub:READER'] });
    await expectCode(ROUTES.automation, { token: key.secret }, 200);
    await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/entitlements`, {
      token: h.platformToken,
      body: { entitlements: ['integrations'] },
    });
    const r = await waitUntil(
      async () => {
        const answer = await call(ROUTES.automation, { token: key.secret });
        return answer.status === 200 ? undefined : answer;
      },
      { message: 'the key refused once its tenant lost the module of its scope', timeoutMs: 1_500 },
    );
    assert.equal(r.status, 403, "a key without the route's scope is not refused with 403");
    assert.equal(
      r.body.code,
      'insufficient_scope',
      "a key without the route's scope is refused with another code than insufficient_scope",
    );
    assert.match(r.body.detail, /integrations:READER/, 'the refusal does not name the scope the route needs');
  });

  test('a MEMBER session may read tenant routes but not manage keys or read the audit log', async () => {
    const { tenant } = await makeSignedInTenant(h);
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    await expectCode(ROUTES.automation, { session: member }, 200);
    await expectCode(ROUTES.keyManagement, { session: member }, 403, 'role_forbidden');
    await expectCode(ROUTES.auditLog, { session: member }, 403, 'role_forbidden');
  });

  test('CSRF is checked before the route class: a session POST without the token is csrf_failed even on a platform route', async () => {
    const { session } = await makeSignedInTenant(h);
    const r = await h.request('POST', '/api/v1/platform/tenants', {
      headers: { cookie: session.cookie },
      body: { name: 'x' },
    });
    assert.equal(r.status, 403, 'a session POST without the CSRF token is not refused with 403');
    assert.equal(
      r.body.code,
      'csrf_failed',
      'a session POST without the CSRF token is refused with another code than csrf_failed',
    );
    await expectCode(ROUTES.platformWrite, { session }, 403, 'platform_key_required');
  });

  test('access is decided before validation: a member’s invalid key request is 403, not 400', async () => {
    const { tenant } = await makeSignedInTenant(h);
    const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
    const r = await h.request('POST', '/api/v1/company/api-keys', {
      session: member,
      body: { nonsense: true },
    });
    assert.equal(r.status, 403, "a member's invalid key request is not refused with 403");
    assert.equal(
      r.body.code,
      'role_forbidden',
      "a member's invalid key request is refused with another code than role_forbidden",
    );
  });
});

describe('audit log', () => {
  test('lists the tenant’s own entries only, newest first, with actor, IP and request ID', async () => {
    const a = await makeSignedInTenant(h);
    const b = await makeSignedInTenant(h);
    const key = await makeKey(h, a.session);
    const r = await h.request('GET', '/api/v1/company/audit-log', { session: a.session });
    assert.equal(r.status, 200, 'reading the audit log fails');
    const [latest] = r.body.data;
    assert.equal(latest.action, 'api_key.create', 'the newest audit entry is not the key creation');
    assert.equal(latest.targetId, key.id, 'the audit entry names another key');
    assert.equal(latest.actorType, 'user', 'the audit entry does not say a user acted');
    assert.equal(latest.actorId, a.user.id, 'the audit entry names another actor');
    assert.ok(latest.ip, 'the audit entry has no IP');
    assert.match(latest.requestId, /^req_/, 'the audit entry has no request ID');
    assert.ok(!JSON.stringify(r.body).includes(key.secret), "the audit log shows a key's secret");
    const other = await h.request('GET', '/api/v1/company/audit-log', { session: b.session });
    assert.ok(
      !JSON.stringify(other.body).includes(key.id),
      "one tenant's audit log shows another tenant's key",
    );
  });
});

test('a route that declares no access rule cannot be registered (default deny)', async () => {
  const app = Fastify();
  registerGate(app, {
    verifiers: {
      platformKey: async () => null,
      tenantKey: async () => null,
      session: async () => null,
      portal: async () => null,
      mcpAccess: async () => null,
    },
    limiter: {
      hit: async () => ({ allowed: true, limit: 1, remaining: 1, resetSeconds: 1 }),
      peek: () => ({ allowed: true, limit: 1, remaining: 1, resetSeconds: 1 }),
      close: async () => {},
    },
    requestsPerMinute: 1,
    tenantRequestLimit: () => null,
    keyring: createKeyring(Buffer.alloc(32)),
    publicOrigin: 'http://localhost',
    now: () => new Date(),
  });
  assert.throws(
    () => app.get('/open', async () => 'oops'),
    /declares no access rule/,
    'a route without an access rule can be registered (open to all)',
  );
  await app.close();
});
