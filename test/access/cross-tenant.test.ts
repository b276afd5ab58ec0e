import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { MODULE_KEYS, SCOPES } from '../../src/access/catalog.js';
import { decide } from '../../src/access/decide.js';
import type { DeclaredRoute } from '../../src/access/gate.js';
import type { Principal } from '../../src/access/principal.js';
import { randomBase62 } from '../../src/crypto/base62.js';
import { authenticatorsFor, PASSKEYS, registerPasskey } from '../helpers/authenticator.js';
import { inDays, makeKey, makeSignedInTenant, makeWebhookConnection, signIn } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { grantAccess } from '../mcp-oauth/flow.js';

/**
 * One table, generated from the routes the real app declares (the list the gate and the OpenAPI
 * document are built from): every route a tenant credential may call is called by a second tenant,
 * with a session, with a `tnt_` key holding every scope and with a portal session's `ptl_` token of
 * `manage` access, naming the first tenant's resources.
 * Each answer must be 404 (or the gate's 403), nothing of the first tenant may change, and no answer
 * may show any of its IDs. A new route is covered without anyone remembering it; a new path
 * parameter fails until this file says which of the first tenant's resources it names.
 */

const PUBLIC_URL = 'https://hub.example.com';
const HOOK_URL = 'https://hooks.example.com/cross-tenant';
const EVENT = { type: 'employee.created', data: { n: 1 } };

interface TenantA {
  tenantId: string;
  tenantName: string;
  userId: string;
  email: string;
  session: TestSession;
  connectionId: string;
  connectLinkId: string;
  keyId: string;
  keyPrefix: string;
  eventId: string;
  deliveryId: string;
  passkeyId: string;
  credentialId: string;
  eventTypeName: string;
  portalSessionId: string;
  /** An MCP client's grant, and the authorization request its consent answered. */
  grantId: string;
  consentRequest: string;
  sourceId: string;
}

interface TenantB {
  user: { email: string; password: string };
  session: TestSession;
  key: string;
  portalToken: string;
}

type Kind = 'session' | 'key' | 'portal';

/**
 * Which of the first tenant's resources a path parameter names, keyed by the path up to and
 * including the parameter. A route whose parameter is missing here fails, naming the route.
 */
const PARAMS: Record<string, (a: TenantA) => string> = {
  '/api/v1/integrations/connections/:id': (a) => a.connectionId,
  '/api/v1/integrations/connections/:id/events/:deliveryId': (a) => a.deliveryId,
  '/api/v1/integrations/connect-sessions/:id': (a) => a.connectLinkId,
  '/api/v1/company/api-keys/:id': (a) => a.keyId,
  '/api/v1/auth/passkeys/:id': (a) => a.passkeyId,
  '/api/v1/company/users/:id': (a) => a.userId,
  '/api/v1/integrations/event-types/:name': (a) => a.eventTypeName,
  '/api/v1/integrations/portal-sessions/:id': (a) => a.portalSessionId,
  '/api/v1/company/oauth-grants/:id': (a) => a.grantId,
  // A request is no tenant's until a person answers it; once A answered it, no one can open it again.
  '/api/v1/oauth/consent/:request': (a) => a.consentRequest,
  '/api/v1/integrations/sources/:id': (a) => a.sourceId,
};

/**
 * A body that passes each route's validation, so that only the tenant scope decides the answer. A
 * route that takes a body and is missing here fails, naming the route.
 */
const BODIES: Record<string, (b: TenantB) => unknown> = {
  'POST /api/v1/integrations/connections': () => ({
    connectorKey: 'webhook',
    displayName: 'B hook',
    url: HOOK_URL,
  }),
  'PUT /api/v1/integrations/connections/:id/credentials': () => ({}),
  'POST /api/v1/integrations/connect-sessions': () => ({ connectorKey: 'webhook', subject: 'b' }),
  'PATCH /api/v1/integrations/connections/:id': () => ({ displayName: 'B renamed' }),
  'POST /api/v1/integrations/connections/:id/resume': () => ({ replaySkipped: true }),
  'POST /api/v1/integrations/connections/:id/recover': () => ({
    since: new Date(Date.now() - 3_600_000).toISOString(),
    statuses: ['failed', 'skipped'],
  }),
  'POST /api/v1/integrations/connections/:id/test': () => ({ type: 'b.test', data: {} }),
  'POST /api/v1/integrations/events': () => EVENT,
  'POST /api/v1/integrations/events/batch': () => ({ events: [EVENT] }),
  'POST /api/v1/company/api-keys': () => ({
    name: 'b',
    scopes: ['integrations:READER'],
    expiresAt: inDays(30),
  }),
  'POST /api/v1/company/api-keys/:id/rotate': () => ({}),
  'POST /api/v1/auth/passkeys/registration/verify': (b) => registrationBody(b),
  'PUT /api/v1/auth/password-sign-in': () => ({ enabled: true }),
  'POST /api/v1/company/users': () => ({
    email: `b-invited-${randomBase62(8).toLowerCase()}@example.com`,
    role: 'MEMBER',
  }),
  'PATCH /api/v1/company/users/:id': () => ({ role: 'MEMBER' }),
  'POST /api/v1/integrations/event-types': () => ({ name: 'b.own.type' }),
  'PATCH /api/v1/integrations/event-types/:name': () => ({ deprecated: true }),
  'POST /api/v1/integrations/filter-test': () => ({ filter: null, event: { type: 'a', data: {} } }),
  'PUT /api/v1/company/portal-settings': () => ({
    frameAncestors: ['https://b.example.com'],
    branding: { name: 'B', logoUrl: null, accentColor: '#000000' },
  }),
  'POST /api/v1/integrations/portal-sessions': () => ({ subject: 'b', expiresInSeconds: 300 }),
  // The request tenant A answered: B cannot answer it again (its ID is in seedTenantA's consentRequest).
  'POST /api/v1/oauth/consent': () => ({ request: a.consentRequest, approve: true }),
  'POST /api/v1/integrations/sources': () => ({ name: 'B source', scheme: 'standard-webhooks' }),
  'PATCH /api/v1/integrations/sources/:id': () => ({ status: 'paused' }),
  'POST /api/v1/integrations/sources/:id/rotate-secret': () => ({}),
};

/** Why a route is not in the table. Anything a tenant credential may call is. */
function skipReason(route: DeclaredRoute): string | null {
  if (route.method === 'HEAD') return 'HEAD runs the GET handler of the same route, which is in the table';
  if (route.access.class === 'platform')
    return 'platform: platform keys act on every tenant by design (test/access/platform-gate.test.ts, test/platform/tenants.test.ts)';
  if (route.access.class === 'public')
    return 'public: no credential is looked at, so there is no tenant to cross';
  return null;
}

let h: Harness;
let a: TenantA;
let b: TenantB;
const { newAuthenticator } = authenticatorsFor(PUBLIC_URL);

before(async () => {
  h = await startHarness({ env: { PUBLIC_URL } });
  a = await seedTenantA();
  b = await seedTenantB();
});
after(() => h.close());

/** The first tenant with one of each resource a route can name. */
async function seedTenantA(): Promise<TenantA> {
  const { tenant, user, session } = await makeSignedInTenant(h, { entitlements: [...MODULE_KEYS] });
  const { name: tenantName } = (await h.request('GET', '/api/v1/auth/session', { session })).body.tenant;
  const connection = await makeWebhookConnection(h, session, HOOK_URL);
  const connectLink = await h.request('POST', '/api/v1/integrations/connect-sessions', {
    session,
    body: { connectorKey: 'webhook', subject: 'a' },
  });
  assert.equal(connectLink.status, 201, `tenant A could not make a connect link: ${connectLink.text}`);
  const key = await makeKey(h, session, { scopes: [...SCOPES] });
  const published = await h.request('POST', '/api/v1/integrations/events', { session, body: EVENT });
  assert.equal(published.status, 202, `tenant A could not publish its event: ${published.text}`);
  assert.equal(published.body.deliveries, 1, 'tenant A’s event was not delivered to its connection');
  const log = await h.request('GET', `/api/v1/integrations/connections/${connection.id}/events`, { session });
  const deliveryId = log.body.data?.[0]?.id;
  assert.ok(deliveryId, `tenant A’s delivery is missing from its own log: ${log.text}`);
  const passkey = await registerPasskey(h, session, newAuthenticator());
  const eventTypeName = `a.only.${randomBase62(8).toLowerCase()}`;
  const eventType = await h.request('POST', '/api/v1/integrations/event-types', {
    session,
    body: { name: eventTypeName, schema: { type: 'object' } },
  });
  assert.equal(eventType.status, 201, `tenant A could not register its event type: ${eventType.text}`);
  const portalSettings = await h.request('PUT', '/api/v1/company/portal-settings', {
    session,
    body: {
      frameAncestors: ['https://a.example.com'],
      branding: { name: 'A', logoUrl: null, accentColor: null },
    },
  });
  assert.equal(
    portalSettings.status,
    200,
    `tenant A could not save its portal settings: ${portalSettings.text}`,
  );
  const portal = await h.request('POST', '/api/v1/integrations/portal-sessions', {
    session,
    body: { subject: 'a', connectionIds: [connection.id] },
  });
  assert.equal(portal.status, 201, `tenant A could not start a portal session: ${portal.text}`);
  const granted = await grantAccess(h.baseUrl, undefined, session, ['integrations:READER']);
  const grants = await h.request('GET', '/api/v1/company/oauth-grants', { session });
  const grantId = grants.body.data?.[0]?.id;
  const source = await h.request('POST', '/api/v1/integrations/sources', {
    session,
    body: { name: 'A source', scheme: 'github', secret: 'a github webhook secret' },
  });
  assert.equal(source.status, 201, `tenant A could not create a source: ${source.text}`);
  assert.ok(grantId, `tenant A’s MCP client grant is missing from its list: ${grants.text}`);
  return {
    tenantId: tenant.id,
    tenantName,
    userId: user.id,
    email: user.email,
    session,
    connectionId: connection.id,
    connectLinkId: connectLink.body.id,
    keyId: key.id,
    keyPrefix: key.prefix,
    eventId: published.body.id,
    deliveryId,
    passkeyId: passkey.record.id,
    credentialId: passkey.credentialId,
    eventTypeName,
    portalSessionId: portal.body.id,
    grantId,
    consentRequest: granted.request,
    sourceId: source.body.id,
  };
}

/**
 * The second tenant, entitled to every module, with an admin's session, a key of every scope, and
 * the token of a portal session of `manage` access to every connection of the tenant.
 */
async function seedTenantB(): Promise<TenantB> {
  const { user, session } = await makeSignedInTenant(h, { entitlements: [...MODULE_KEYS] });
  const key = await makeKey(h, session, { scopes: [...SCOPES] });
  const portal = await h.request('POST', '/api/v1/integrations/portal-sessions', {
    session,
    body: { subject: 'b', access: 'manage', expiresInSeconds: 86_400 },
  });
  assert.equal(portal.status, 201, `tenant B could not start a portal session: ${portal.text}`);
  const code = new URL(portal.body.url).hash.replace(/^#code=/, '');
  const exchanged = await h.request('POST', '/api/v1/portal/exchange', { body: { code } });
  assert.equal(exchanged.status, 200, `tenant B could not exchange its portal code: ${exchanged.text}`);
  return { user, session, key: key.secret, portalToken: exchanged.body.token };
}

/** A registration the second tenant's authenticator made for options its own session asked for. */
async function registrationBody(tenant: TenantB): Promise<unknown> {
  const offered = await h.request('POST', `${PASSKEYS}/registration/options`, { session: tenant.session });
  assert.equal(offered.status, 200, `tenant B could not ask for registration options: ${offered.text}`);
  return { response: newAuthenticator().register(offered.body) };
}

/** The route's URL with each parameter replaced by the first tenant's resource it names. */
function pathFor(route: DeclaredRoute): string {
  return route.url.replace(/:(\w+)/g, (param: string, name: string, offset: number) => {
    const key = route.url.slice(0, offset + param.length);
    const fixture = PARAMS[key];
    if (!fixture)
      assert.fail(
        `${route.method} ${route.url}: add a fixture for :${name} (PARAMS in cross-tenant.test.ts)`,
      );
    return encodeURIComponent(fixture(a));
  });
}

/** Every table with a tenant_id column (partitions through their parent), and the tenants table. */
async function tenantTables(): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_attribute t
    join pg_class c on c.oid = t.attrelid
    join pg_namespace n on n.oid = c.relnamespace
    where t.attname = 'tenant_id' and not t.attisdropped and c.relkind in ('r', 'p')
      and not c.relispartition and n.nspname = current_schema()
    order by c.relname`.execute(h.database.kysely);
  return rows.map((r) => r.name);
}

const json = (row: unknown) =>
  JSON.stringify(row, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));

/** Everything of the first tenant in the database, one sorted list of rows per table. */
async function snapshotOfA(tables: string[]): Promise<Record<string, string[]>> {
  // Usage counted by earlier requests lands with the meter's next flush: written now, it cannot pass
  // for a change made by tenant B's request.
  await h.flushUsage();
  const db = h.database.kysely;
  const snapshot: Record<string, string[]> = {};
  const tenant = await sql`select * from tenants where id = ${a.tenantId}`.execute(db);
  snapshot.tenants = tenant.rows.map(json);
  for (const table of tables) {
    const { rows } = await sql`select * from ${sql.table(table)} where tenant_id = ${a.tenantId}`.execute(db);
    snapshot[table] = rows.map(json).sort();
  }
  return snapshot;
}

const idsOfA = () =>
  Object.entries({
    'tenant ID': a.tenantId,
    'tenant name': a.tenantName,
    'user ID': a.userId,
    'e-mail address': a.email,
    'connection ID': a.connectionId,
    'connect link ID': a.connectLinkId,
    'key ID': a.keyId,
    'key prefix': a.keyPrefix,
    'event ID': a.eventId,
    'delivery ID': a.deliveryId,
    'passkey ID': a.passkeyId,
    'passkey credential ID': a.credentialId,
    'event type name': a.eventTypeName,
    'portal session ID': a.portalSessionId,
  });

/** What the gate decides for the second tenant's credential, from the route's own declaration. */
function gateAllows(route: DeclaredRoute, kind: Kind): boolean {
  const entitlements = [...MODULE_KEYS];
  const expiresAt = new Date(Date.now() + 86_400_000);
  const portal: Principal = {
    kind: 'portal',
    sessionId: 'pts_b',
    tenantId: 'ten_b',
    subject: 'b',
    access: 'manage',
    connectionIds: null,
    entitlements,
    expiresAt,
  };
  if (kind === 'portal') return decide(route.access, portal).allowed;
  const principal: Principal =
    kind === 'session'
      ? {
          kind: 'session',
          sessionId: 'ses_b',
          userId: 'usr_b',
          email: b.user.email,
          role: 'COMPANY_IT_ADMIN',
          tenantId: 'ten_b',
          entitlements,
          authMethod: 'password',
        }
      : {
          kind: 'tenant_key',
          keyId: 'key_b',
          prefix: 'tnt_b',
          tenantId: 'ten_b',
          scopes: [...SCOPES],
          entitlements,
          expiresAt,
          rateLimitPerMinute: null,
        };
  return decide(route.access, principal).allowed;
}

/** The second tenant's session, signed in again when a route (sign-out) has ended it. */
async function liveSessionOfB(): Promise<TestSession> {
  const check = await h.request('GET', '/api/v1/auth/session', { session: b.session });
  if (check.status === 401) b.session = await signIn(h, b.user);
  else assert.equal(check.status, 200, `tenant B’s session check answered ${check.status}: ${check.text}`);
  return b.session;
}

const bodyRoutes = (): Set<string> => {
  const doc = h.app.swagger() as { paths?: Record<string, Record<string, { requestBody?: unknown }>> };
  const withBody = new Set<string>();
  for (const [path, operations] of Object.entries(doc.paths ?? {}))
    for (const [method, operation] of Object.entries(operations))
      if (operation.requestBody) withBody.add(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
  return withBody;
};

function checkAnswer(route: DeclaredRoute, kind: Kind, r: TestResponse): void {
  const name = `${route.method} ${route.url} with tenant B’s ${kind}`;
  const namesA = route.url.includes(':');
  if (!gateAllows(route, kind)) {
    assert.equal(
      r.status,
      403,
      `${name}: the gate should refuse this credential, got ${r.status}: ${r.text}`,
    );
  } else if (namesA) {
    assert.equal(
      r.status,
      404,
      `${name}: tenant A’s resource must be 404 to tenant B, got ${r.status}: ${r.text}`,
    );
    assert.equal(r.body?.code, 'not_found', `${name}: the answer must be not_found: ${r.text}`);
  } else if (route.method === 'GET') {
    // The OAuth callback sends every browser on to a page with a 303 (docs/api/oauth.md).
    // The MCP endpoint's GET answers 405 to whoever it lets in: no event stream (docs/api/mcp.md).
    const expected = route.url === '/api/v1/oauth/callback' ? 303 : route.url === '/api/v1/mcp' ? 405 : 200;
    assert.equal(r.status, expected, `${name}: tenant B reads its own data here, got ${r.status}: ${r.text}`);
  } else {
    assert.ok(r.status < 500, `${name}: tenant B acting on its own data failed with ${r.status}: ${r.text}`);
  }
  for (const [what, id] of idsOfA())
    assert.ok(!r.text.includes(id), `${name}: the answer shows tenant A’s ${what}: ${r.text}`);
}

test('every tenant, session and key-management route keeps one tenant out of another’s data', async (t) => {
  const routes = h.app.declaredRoutes;
  assert.ok(
    routes.length > 30,
    `the app declared only ${routes.length} routes: the table would prove little`,
  );
  const withBody = bodyRoutes();
  const tables = await tenantTables();
  for (const table of ['api_keys', 'connections', 'deliveries', 'events', 'passkeys', 'users', 'audit_log'])
    assert.ok(tables.includes(table), `${table} is not among the tenant tables found: ${tables.join(', ')}`);
  const before = await snapshotOfA(tables);
  const hits = { session: 0, key: 0, portal: 0 };
  const outOfScope: string[] = [];

  for (const route of routes) {
    const name = `${route.method} ${route.url}`;
    const skip = skipReason(route);
    if (skip) {
      // Listed once below rather than as skipped tests: these are out of scope, not unfinished.
      outOfScope.push(`${name} (${skip.split(':')[0]})`);
      continue;
    }
    await t.test(name, async () => {
      const path = pathFor(route);
      const bodyFixture = BODIES[name];
      if (withBody.has(name) && !bodyFixture)
        assert.fail(
          `${name}: add a body fixture (BODIES in cross-tenant.test.ts) that passes its validation`,
        );
      for (const kind of ['session', 'key', 'portal'] as const) {
        const session = await liveSessionOfB();
        const credential =
          kind === 'session' ? { session } : { token: kind === 'key' ? b.key : b.portalToken };
        const body = bodyFixture ? await bodyFixture(b) : undefined;
        const r = await h.request(route.method, path, { ...credential, body });
        checkAnswer(route, kind, r);
        if (r.status !== 403) hits[kind]++;
        assert.deepEqual(
          await snapshotOfA(tables),
          before,
          `${name} with tenant B’s ${kind} changed tenant A’s rows`,
        );
      }
    });
  }
  assert.ok(hits.session > 15, `only ${hits.session} routes let tenant B’s session past the gate`);
  assert.ok(hits.key > 5, `only ${hits.key} routes let tenant B’s key past the gate`);
  assert.ok(hits.portal > 5, `only ${hits.portal} routes let tenant B’s portal token past the gate`);
  t.diagnostic(`not in the table, by access class: ${outOfScope.join(', ')}`);
});

test('tenant A’s own credential reaches every resource the table names (the 404s above mean something)', async () => {
  const session = a.session;
  const connection = await h.request('GET', `/api/v1/integrations/connections/${a.connectionId}`, {
    session,
  });
  assert.equal(connection.status, 200, `tenant A cannot read its own connection: ${connection.text}`);
  const log = await h.request('GET', `/api/v1/integrations/connections/${a.connectionId}/events`, {
    session,
  });
  assert.ok(log.text.includes(a.deliveryId), `tenant A’s log does not show its delivery: ${log.text}`);
  const keys = await h.request('GET', '/api/v1/company/api-keys', { session });
  assert.ok(keys.text.includes(a.keyId), `tenant A’s key list does not show its key: ${keys.text}`);
  const passkeys = await h.request('GET', PASSKEYS, { session });
  assert.ok(
    passkeys.text.includes(a.passkeyId),
    `tenant A’s passkey list does not show its passkey: ${passkeys.text}`,
  );
});

/** Where each way of making a TenantScope may be called, and why (src/access/scope.ts). */
const MINTERS: Record<string, string[]> = {
  tenantScopeOf: ['src/access/gate.ts'],
  platformScopeOf: ['src/tenants/tenants.ts'],
  connectLinkScopeOf: ['src/portal/connect-links.ts'],
  authorizationReturnScopeOf: ['src/oauth/authorize.ts'],
  signInScopeOf: ['src/sign-in/sign-in.ts', 'src/passkeys/sign-in.ts', 'src/sso/sign-in.ts'],
  setupScopeOf: ['src/setup/setup.ts'],
  systemScopeOf: ['src/delivery/auto-pause.ts'],
  withCreatedConnection: ['src/connections/connections.ts'],
};

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : [join(dir, e.name)])),
  );
  return nested.flat().filter((f) => f.endsWith('.ts'));
}

test('only the gate, platform tenant routes, sign-in and setup make a TenantScope', async () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  for (const file of await sourceFiles(join(root, 'src'))) {
    const path = relative(root, file);
    const text = await readFile(file, 'utf8');
    if (path !== 'src/access/scope.ts')
      assert.ok(!/as\s+(unknown\s+as\s+)?TenantScope\b/.test(text), `${path} casts to TenantScope`);
    for (const [minter, allowed] of Object.entries(MINTERS)) {
      const called = new RegExp(`(?<!function )\\b${minter}\\(`).test(text);
      if (called && path !== 'src/access/scope.ts')
        assert.ok(allowed.includes(path), `${path} calls ${minter}, which only ${allowed.join(', ')} may`);
    }
  }
});
