import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RFC3339_PATTERN } from '../../src/http/time.js';
import { inDays, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type RequestOptions, type TestSession } from '../helpers/harness.js';
import { requestCheck, type RequestCheck } from '../helpers/openapi-check.js';

// docs/api/conventions.md: the OpenAPI document is exact. Every request the service takes must be
// valid by the document, and what the document says is invalid the service refuses. Each request
// here is sent for real and checked against the document served by the same app (the answers are
// checked against it by the harness, as every answer in the tests is).

let h: Harness;
let check: RequestCheck;
let document: unknown;
let session: TestSession;
before(async () => {
  h = await startHarness();
  document = (await h.request('GET', '/api/v1/openapi.json')).body;
  check = requestCheck(document);
  ({ session } = await makeSignedInTenant(h, { entitlements: ['integrations', 'integration_hub'] }));
});
after(() => h.close());

const CONNECTIONS = '/api/v1/integrations/connections';
const PROVIDERS = '/api/v1/platform/oauth-providers';
let providers = 0;

/** Sends the request; fails unless the service and the document agree that it is valid. */
async function accepted(method: string, path: string, body: unknown, auth: RequestOptions, status: number) {
  const r = await h.request(method, path, { ...auth, body });
  const what = `${method} ${path} ${JSON.stringify(body)}`;
  assert.equal(r.status, status, `${what}: the service answered ${r.status}: ${r.text}`);
  assert.equal(check(method, path, body), undefined, `${what}: the service takes it, the document does not`);
  return r.body;
}

/** Sends the request; fails unless both the service (400) and the document refuse it. */
async function refused(method: string, path: string, body: unknown, auth: RequestOptions) {
  const r = await h.request(method, path, { ...auth, body });
  const what = `${method} ${path} ${JSON.stringify(body)}`;
  assert.equal(r.status, 400, `${what}: the service answered ${r.status}: ${r.text}`);
  assert.equal(r.body.code, 'validation_failed', `${what}: ${r.text}`);
  assert.notEqual(
    check(method, path, body),
    undefined,
    `${what}: the service refuses it, the document takes it`,
  );
}

const provider = (overrides: Record<string, unknown> = {}) => ({
  key: `doc${++providers}-${Date.now().toString(36)}`,
  name: 'Example API',
  tokenUrl: 'https://auth.example.com/token',
  apiBaseUrl: 'https://api.example.com/v1',
  clientId: 'hubgate-client',
  clientSecret: 'a client secret',
  ...overrides,
});

test('editing a connection: a body of displayName alone, or of one connector field, is valid by the document', async () => {
  const platform = { token: h.platformToken };
  const hook = await makeWebhookConnection(h, session, 'https://receiver.example.com/hook');
  const path = `${CONNECTIONS}/${hook.id}`;
  await accepted('PATCH', path, { displayName: 'renamed' }, { session }, 200);
  await accepted('PATCH', path, { url: 'https://receiver.example.com/other' }, { session }, 200);
  await accepted('PATCH', path, { displayName: 'again', eventTypes: ['order.*'] }, { session }, 200);
  await accepted('PATCH', path, {}, { session }, 200);
  await refused('PATCH', path, { displayName: '' }, { session });

  // An OAuth2 connection (a connector made at run time) is edited by the document too.
  const made = await accepted(
    'POST',
    PROVIDERS,
    provider({ authorizationUrl: 'https://auth.example.com/a' }),
    platform,
    201,
  );
  const connection = await accepted(
    'POST',
    CONNECTIONS,
    { connectorKey: made.connectorKey, displayName: 'Uses the API' },
    { session },
    201,
  );
  await accepted(
    'PATCH',
    `${CONNECTIONS}/${connection.id}`,
    { displayName: 'Still uses it' },
    { session },
    200,
  );
});

test('creating a connection: an oauth2:* connector has a branch of its own; other keys have none', async () => {
  const made = await accepted(
    'POST',
    PROVIDERS,
    provider({ authorizationUrl: 'https://auth.example.com/a' }),
    { token: h.platformToken },
    201,
  );
  await accepted(
    'POST',
    CONNECTIONS,
    { connectorKey: made.connectorKey, displayName: 'API' },
    { session },
    201,
  );
  await accepted(
    'POST',
    CONNECTIONS,
    { connectorKey: 'webhook', displayName: 'hook', url: 'https://receiver.example.com/hook' },
    { session },
    201,
  );
  await refused('POST', CONNECTIONS, { connectorKey: made.connectorKey }, { session });
  await refused(
    'POST',
    CONNECTIONS,
    { connectorKey: made.connectorKey, displayName: 'API', url: 'https://receiver.example.com/hook' },
    { session },
  );
  await refused('POST', CONNECTIONS, { connectorKey: 'oauth3:nothing', displayName: 'x' }, { session });
});

test("an OAuth2 provider's authorizationUrl is required by the document exactly when the grant needs it", async () => {
  const platform = { token: h.platformToken };
  await refused('POST', PROVIDERS, provider(), platform);
  await refused('POST', PROVIDERS, provider({ grant: 'authorization_code' }), platform);
  await accepted('POST', PROVIDERS, provider({ grant: 'client_credentials' }), platform, 201);
  await accepted(
    'POST',
    PROVIDERS,
    provider({ grant: 'client_credentials', authorizationUrl: 'https://auth.example.com/a' }),
    platform,
    201,
  );
  await accepted(
    'POST',
    PROVIDERS,
    provider({ authorizationUrl: 'https://auth.example.com/a' }),
    platform,
    201,
  );
});

test('a date-time with a leap second or a space for the T is invalid by the document as by the service', async () => {
  const hook = await makeWebhookConnection(h, session, 'https://receiver.example.com/times');
  const recover = `${CONNECTIONS}/${hook.id}/recover`;
  const today = new Date(Date.now() - 3_600_000).toISOString();
  const day = today.slice(0, 10);
  for (const since of [`${day}T23:59:60Z`, `${day} 10:00:00Z`, `${day}T24:00:00Z`, `${day}T10:00:00`]) {
    await refused('POST', recover, { since }, { session });
  }
  await accepted('POST', recover, { since: today }, { session }, 202);
  await accepted('POST', recover, { since: today.replace('Z', '+00:00') }, { session }, 202);
  const keys = '/api/v1/company/api-keys';
  const ahead = inDays(1).slice(0, 10);
  for (const expiresAt of [`${ahead}T23:59:60Z`, `${ahead} 10:00:00Z`]) {
    await refused('POST', keys, { name: 'k', scopes: ['integrations:READER'], expiresAt }, { session });
  }
  await accepted(
    'POST',
    keys,
    { name: 'k', scopes: ['integrations:READER'], expiresAt: inDays(1) },
    { session },
    201,
  );
});

test('every date-time of the document carries the pattern of the times the service reads', () => {
  const found: string[] = [];
  const walk = (node: unknown, where: string): void => {
    if (node === null || typeof node !== 'object') return;
    const object = node as Record<string, unknown>;
    if (object.format === 'date-time') {
      found.push(where);
      assert.equal(object.pattern, RFC3339_PATTERN, `${where}: a date-time without the pattern`);
    }
    for (const [key, value] of Object.entries(object)) walk(value, `${where}/${key}`);
  };
  walk(document, '#');
  assert.ok(found.length > 50, `only ${found.length} date-times found: the walk missed the document`);
});
