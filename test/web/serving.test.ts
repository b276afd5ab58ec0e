import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { UI_ROOT } from '../../src/web/routes.js';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

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

test('every UI path answers the page, never cached, under a CSP of this origin only', async () => {
  for (const path of [
    '/',
    '/sign-in',
    '/connections/con_x/events?status=failed',
    // The page reads its query, not the server: a bad one is for the page to explain.
    '/connections/con_x/events?cursor=%00',
    '/no/such/page',
    '/platform',
  ]) {
    const response = await h.request('GET', path);
    assert.equal(response.status, 200, path);
    assert.match(
      response.headers.get('content-type') ?? '',
      /^text\/html/,
      `${path}: the UI page is not served as HTML`,
    );
    assert.equal(
      response.headers.get('cache-control'),
      'no-cache',
      `${path}: the UI page may be cached without revalidation`,
    );
    assert.match(response.text, /<div id="app"><\/div>/, `${path}: the page has no app root`);
    assert.equal(
      response.headers.get('x-frame-options'),
      'DENY',
      `${path}: the UI page may be framed by another site`,
    );
    assert.ok(response.headers.get('x-request-id'), `${path}: the UI page has no request ID`);

    const csp = directives(response.headers.get('content-security-policy'));
    assert.deepEqual(
      csp.get('script-src'),
      ["'self'"],
      `${path}: scripts are allowed from elsewhere than this origin`,
    );
    assert.deepEqual(
      csp.get('style-src'),
      ["'self'"],
      `${path}: styles are allowed from elsewhere than this origin`,
    );
    assert.deepEqual(
      csp.get('frame-ancestors'),
      ["'none'"],
      `${path}: the UI page may be framed by another site`,
    );
    assert.deepEqual(csp.get('object-src'), ["'none'"], `${path}: plugins are allowed`);
    // docs/operators/web-ui.md: no source beyond 'self', 'none', nonces, hashes, and data: for images.
    for (const [name, sources] of csp) {
      for (const source of sources) {
        const allowed =
          source === "'self'" || source === "'none'" || (name === 'img-src' && source === 'data:');
        assert.ok(allowed, `${name} allows ${source}`);
      }
    }
  }
});

test('the page has no inline script or style, and names only hashed assets of its own', async () => {
  const { text } = await h.request('GET', '/');
  assert.doesNotMatch(text, /<script(?![^>]*\bsrc=)[^>]*>/, 'an inline script');
  assert.doesNotMatch(text, /<style|style=/, 'an inline style');
  const assets = [...text.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
  assert.equal(assets.length, 2, 'the page does not name exactly one script and one stylesheet');
  for (const asset of assets) {
    assert.match(asset, /^\/assets\/main-[A-Z0-9]{8}\.(js|css)$/, `${asset} is not a hashed main asset`);
    const response = await h.request('GET', asset);
    assert.equal(response.status, 200, asset);
    assert.equal(
      response.headers.get('cache-control'),
      'public, max-age=31536000, immutable',
      `${asset} is not cached as immutable`,
    );
    assert.equal(
      response.text,
      readFileSync(join(UI_ROOT, asset.slice(1).replace(/^assets\//, 'assets/')), 'utf8'),
      `${asset} is not the built file`,
    );
  }
  // Nothing outside this origin is named anywhere in the page (the icon's SVG namespace is a name).
  assert.doesNotMatch(
    text.replaceAll("xmlns='http://www.w3.org/2000/svg'", ''),
    /https?:\/\//,
    'the page names something outside this origin',
  );
});

test('what is not the UI stays a problem: API paths, other methods, missing assets, dot segments', async () => {
  for (const [method, path, status] of [
    ['GET', '/api/v1/no-such-route', 404],
    ['GET', '/api', 404],
    ['POST', '/connections', 404],
    ['DELETE', '/', 404],
    ['GET', '/assets/main-00000000.js', 404],
    ['GET', '/assets/..%2findex.html', 404],
    ['GET', '/assets/.hidden', 404],
    // Contract §12: the ingest URLs and OAuth's paths are never the UI's.
    ['GET', '/ingest/src_unknown', 404],
    ['GET', '/oauth/no-such-endpoint', 404],
    ['GET', '/.well-known/no-such-document', 404],
    ['GET', '/metrics/more', 404],
  ] as const) {
    const response = await h.request(method, path);
    assert.equal(response.status, status, `${method} ${path}`);
    assert.match(
      response.headers.get('content-type') ?? '',
      /^application\/problem\+json/,
      `${method} ${path}`,
    );
    assert.equal(
      response.body.code,
      'not_found',
      `${method} ${path}: answers something other than not_found`,
    );
  }
});

test('API answers carry the same security headers, and the docs page still loads', async () => {
  const health = await h.request('GET', '/healthz');
  assert.ok(health.headers.get('content-security-policy'), 'API answers have no Content-Security-Policy');
  assert.equal(health.headers.get('x-frame-options'), 'DENY', 'API answers may be framed by another site');
  const docs = await h.request('GET', '/docs/');
  assert.equal(docs.status, 200, 'the API docs page does not load');
});
