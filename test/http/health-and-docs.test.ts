import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

test('/healthz answers without a credential', async () => {
  const response = await h.request('GET', '/healthz');
  assert.equal(response.status, 200, '/healthz refuses a request without a credential');
  assert.deepEqual(response.body, { status: 'ok' }, '/healthz does not answer ok');
});

test('/readyz checks the database', async () => {
  const response = await h.request('GET', '/readyz');
  assert.equal(response.status, 200, '/readyz is not ready with the database up');
  assert.deepEqual(
    response.body,
    { status: 'ok', database: 'ok' },
    '/readyz does not say the database is ok',
  );
});

test('/api/v1/openapi.json is OpenAPI 3.1 and describes every API route with its schemas', async () => {
  const response = await h.request('GET', '/api/v1/openapi.json');
  assert.equal(response.status, 200, 'the OpenAPI document cannot be fetched');
  const doc = response.body;
  assert.equal(doc.openapi, '3.1.0', 'the document is not OpenAPI 3.1');
  assert.equal(doc.info.title, 'hubgate', 'the document is not titled hubgate');
  const expected: Array<[string, string]> = [
    ['post', '/api/v1/platform/tenants'],
    ['get', '/api/v1/platform/tenants'],
    ['get', '/api/v1/platform/tenants/{id}'],
    ['put', '/api/v1/platform/tenants/{id}/entitlements'],
    ['post', '/api/v1/platform/tenants/{id}/users'],
    ['get', '/healthz'],
    ['get', '/readyz'],
  ];
  for (const [method, path] of expected) {
    assert.ok(doc.paths[path]?.[method], `${method} ${path} documented`);
  }
  const create = doc.paths['/api/v1/platform/tenants'].post;
  assert.deepEqual(
    create.security,
    [{ platformKey: [] }],
    'creating a tenant is not documented as needing a platform key',
  );
  const bodySchema = create.requestBody.content['application/json'].schema;
  assert.equal(
    bodySchema.additionalProperties,
    false,
    'the tenant creation body is documented as taking unknown fields',
  );
  assert.equal(
    bodySchema.properties.name.maxLength,
    200,
    'the tenant name is not documented as at most 200 characters',
  );
  assert.ok(create.responses['201'], 'the 201 answer of tenant creation is not documented');
  assert.deepEqual(doc.paths['/healthz'].get.security, [], '/healthz is documented as needing a credential');
  // Every route the app declares is in the document, but the docs' own pages and the web UI's.
  const documented = new Set(
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`),
    ),
  );
  const declared = h.app.declaredRoutes
    .filter(
      (r) =>
        r.method !== 'HEAD' &&
        !r.url.startsWith('/docs') &&
        r.url !== '/api/v1/openapi.json' &&
        r.url !== '/*' &&
        r.url !== '/assets/*' &&
        // The UI's pages with headers of their own (web/routes.ts), not API routes.
        !r.url.startsWith('/portal/') &&
        !r.url.startsWith('/connect/') &&
        // OAuth's own endpoints for MCP clients (docs/api/mcp.md): RFC 6749 error bodies, found by
        // clients through the RFC 8414 and RFC 9728 metadata documents, not through this one.
        !r.url.startsWith('/oauth/') &&
        !r.url.startsWith('/.well-known/'),
    )
    // A trailing wildcard is documented as a {path} parameter (the credential proxy, src/access/openapi.ts).
    .map((r) => `${r.method} ${r.url.replace(/:(\w+)/g, '{$1}').replace(/\/\*$/, '/{path}')}`);
  assert.ok(
    declared.length >= expected.length,
    'fewer routes are declared than the ones this test expects to see documented',
  );
  for (const route of declared) assert.ok(documented.has(route), `${route} is documented`);
});

test('/docs serves a human-readable page', async () => {
  const response = await h.request('GET', '/docs/');
  assert.equal(response.status, 200, '/docs cannot be fetched');
  assert.match(response.headers.get('content-type') ?? '', /text\/html/, '/docs is not an HTML page');
  assert.match(response.text, /swagger/i, '/docs is not the Swagger UI');
});
