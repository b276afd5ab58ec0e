import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { makeTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';

// The portal and connect pages show the tenant's logo (docs/api/portal.md): an https logo's origin is
// admitted in their Content-Security-Policy's img-src, read at each load, and nowhere else; the
// connect page stays unframeable.

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const directive = (policy: string | null, name: string): string[] =>
  (policy ?? '')
    .split(';')
    .map((part) => part.trim().split(/\s+/))
    .find(([first]) => first === name)
    ?.slice(1) ?? [];

async function policies(tenantId: string) {
  const portal = await h.request('GET', `/portal/${tenantId}`);
  const connect = await h.request('GET', `/connect/${tenantId}`);
  const other = await h.request('GET', '/connections');
  for (const [r, what] of [
    [portal, 'portal'],
    [connect, 'connect'],
    [other, 'connections'],
  ] as const) {
    assert.equal(r.status, 200, `${what} page: ${r.status}`);
  }
  return {
    portal: portal.headers.get('content-security-policy'),
    connect: connect.headers.get('content-security-policy'),
    connectFraming: connect.headers.get('x-frame-options'),
    other: other.headers.get('content-security-policy'),
  };
}

test("an https logo's origin is admitted on the portal and connect pages, from the next load, and nowhere else", async () => {
  const tenant = await makeTenant(h);
  const before = await policies(tenant.id);
  assert.deepEqual(directive(before.portal, 'img-src'), ["'self'", 'data:'], 'portal img-src without a logo');
  assert.deepEqual(
    directive(before.connect, 'img-src'),
    ["'self'", 'data:'],
    'connect img-src without a logo',
  );

  const saved = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/portal-settings`, {
    token: h.platformToken,
    body: {
      frameAncestors: ['https://app.example.com'],
      branding: {
        name: 'Acme',
        logoUrl: 'https://cdn.example.com:8443/brand/logo.png?v=2',
        accentColor: null,
      },
    },
  });
  assert.equal(saved.status, 200, saved.text);
  const after = await policies(tenant.id);
  const logo = ["'self'", 'data:', 'https://cdn.example.com:8443'];
  assert.deepEqual(
    directive(after.portal, 'img-src'),
    logo,
    "the portal page does not admit the logo's origin",
  );
  assert.deepEqual(
    directive(after.connect, 'img-src'),
    logo,
    "the connect page does not admit the logo's origin",
  );
  assert.deepEqual(directive(after.portal, 'frame-ancestors'), ['https://app.example.com'], 'portal framing');
  // The connect page is framed by nobody, whatever the portal allows.
  assert.deepEqual(directive(after.connect, 'frame-ancestors'), ["'none'"], 'the connect page may be framed');
  assert.equal(after.connectFraming, 'DENY', 'the connect page lost X-Frame-Options');
  assert.deepEqual(directive(after.other, 'img-src'), ["'self'", 'data:'], 'another page admits the logo');

  // A data: logo needs nothing more.
  const data = await h.request('PUT', `/api/v1/platform/tenants/${tenant.id}/portal-settings`, {
    token: h.platformToken,
    body: {
      frameAncestors: [],
      branding: { name: null, logoUrl: 'data:image/png;base64,iVBORw0KGgo=', accentColor: null },
    },
  });
  assert.equal(data.status, 200, data.text);
  const last = await policies(tenant.id);
  assert.deepEqual(directive(last.portal, 'img-src'), ["'self'", 'data:'], 'a data: logo added an origin');
  assert.deepEqual(directive(last.portal, 'frame-ancestors'), ["'none'"], 'no site may frame it now');
});

test('a malformed or unknown tenant ID gets the plain policy on both pages', async () => {
  for (const id of ['not-a-tenant', 'ten_0000000000000000000000']) {
    const r = await policies(id);
    assert.deepEqual(directive(r.portal, 'img-src'), ["'self'", 'data:'], `portal ${id}`);
    assert.deepEqual(directive(r.connect, 'frame-ancestors'), ["'none'"], `connect ${id}`);
  }
});
