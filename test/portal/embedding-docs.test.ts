import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { makeTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

// The embedding example that /docs shows above the portal routes (the OpenAPI document's portal tag)
// and docs/api/portal.md prints: its requests, sent as printed with a platform key, do what the
// example says, and the two places print the same requests.

const PUBLIC_URL = 'https://hub.example.com';
let h: Harness;
before(async () => {
  h = await startHarness({ env: { PUBLIC_URL } });
});
after(() => h.close());

interface Example {
  method: string;
  path: string;
  body: unknown;
}

/** The curl commands of an example: method, path (after `$HUB`) and JSON body, in order. */
function requestsOf(text: string): Example[] {
  const curl = /curl -X (PUT|POST) "\$HUB([^"]+)" \\\n[^\n]*\\\n\s*-d '([^']+)'/g;
  return [...text.matchAll(curl)].map(([, method, path, body]) => ({
    method: method ?? '',
    path: path ?? '',
    body: JSON.parse(body ?? 'null'),
  }));
}

async function portalTagDescription(): Promise<string> {
  const r = await h.request('GET', '/api/v1/openapi.json');
  assert.equal(r.status, 200, r.text);
  const tags = r.body.tags as Array<{ name: string; description?: string }>;
  const portal = tags.find((t) => t.name === 'portal');
  assert.ok(portal?.description, 'the portal tag has no description in the OpenAPI document');
  return portal.description;
}

test('/docs shows the embedding example, and the tags keep the order of their routes', async () => {
  const description = await portalTagDescription();
  assert.match(description, /<iframe src="https:\/\/hub\.example\.com\/portal\/ten_…#code=…"/, description);
  assert.match(description, /frame-ancestors/, 'the example does not say what frameAncestors are for');
  const r = await h.request('GET', '/api/v1/openapi.json');
  const tagOrder = (r.body.tags as Array<{ name: string }>).map((t) => t.name);
  const firstSeen: string[] = [];
  for (const operations of Object.values(r.body.paths as Record<string, Record<string, { tags?: string[] }>>))
    for (const operation of Object.values(operations))
      for (const tag of operation.tags ?? []) if (!firstSeen.includes(tag)) firstSeen.push(tag);
  assert.deepEqual(
    tagOrder,
    firstSeen,
    'the tags are not listed once each, in the order of their first route',
  );
  const docs = await h.request('GET', '/docs/json');
  assert.equal(docs.status, 200, 'the document /docs reads is not served');
});

test('the example run as printed: the settings are saved, a session minted, its page framed by the origin', async () => {
  const printed = requestsOf(await portalTagDescription());
  assert.deepEqual(
    printed.map((e) => `${e.method} ${e.path}`),
    [
      'PUT /api/v1/platform/tenants/$TENANT_ID/portal-settings',
      'POST /api/v1/platform/tenants/$TENANT_ID/portal-sessions',
    ],
    'the example does not set the framing, then mint a session',
  );
  const page = readFileSync(new URL('../../docs/api/portal.md', import.meta.url), 'utf8');
  const embedding = page.slice(page.indexOf('## Embedding the portal'));
  assert.deepEqual(requestsOf(embedding), printed, 'docs/api/portal.md prints other requests than /docs');

  const tenant = await makeTenant(h, { entitlements: ['integrations'] });
  const answers = [];
  for (const { method, path, body } of printed) {
    const r = await h.request(method, path.replace('$TENANT_ID', tenant.id), {
      token: h.platformToken,
      body,
    });
    assert.ok(r.status === 200 || r.status === 201, `${method} ${path} answered ${r.status}: ${r.text}`);
    answers.push(r);
  }
  const url = new URL(answers[1]?.body.url);
  assert.equal(url.origin, PUBLIC_URL, 'the url is not on the hub');
  assert.equal(url.pathname, `/portal/${tenant.id}`, 'the url is not the tenant’s portal page');
  assert.match(url.hash, /^#code=[0-9A-Za-z]{32}$/, 'the url carries no code');
  const framed = await h.request('GET', url.pathname);
  assert.match(
    framed.headers.get('content-security-policy') ?? '',
    /frame-ancestors https:\/\/app\.example\.com(;|$)/,
    'the portal page does not admit the origin the example frames it from',
  );
  assert.equal(framed.headers.get('x-frame-options'), null, 'the portal page still refuses every frame');
});
