import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../ui/common/api.js';
import { accentProperties, contrast, rgbOf, shownLogo } from '../../ui/common/branding.js';
import type { ConnectField } from '../../ui/common/routes.js';
import {
  callbackReturnOf,
  codeOf,
  completionOf,
  isConnectPath,
  offeredFields,
  onFormFields,
  parseStored,
  tenantIdOf,
} from '../../ui/connect/link.js';

// The connect page's pure parts (ui/connect/link.ts, branding.ts): what it reads from its address,
// what it keeps in the tab, the body it sends, and the tenant's accent made readable.

const field = (name: string, kind: 'config' | 'credentials', more: Partial<ConnectField> = {}) => ({
  name,
  kind,
  type: 'string',
  required: false,
  description: null,
  format: null,
  options: null,
  default: null,
  generated: false,
  ...more,
});

test('the page reads its tenant from the path, the code from the fragment, the return from the query', () => {
  assert.equal(isConnectPath('/connect/ten_1'), true, '/connect/ten_1 is the connect page');
  assert.equal(isConnectPath('/connections'), false, '/connections is the tenant UI');
  assert.equal(tenantIdOf('/connect/ten_1'), 'ten_1', 'tenantIdOf("/connect/ten_1")');
  assert.equal(tenantIdOf('/connect/'), null, 'a path without a tenant');
  assert.equal(tenantIdOf('/connect/%E0%A4%A'), null, 'a malformed escape is no tenant');
  assert.equal(codeOf('#code=Ab12'), 'Ab12', 'codeOf("#code=Ab12")');
  assert.equal(codeOf('#x=1&code=Ab12'), 'Ab12', 'the code after another fragment value');
  assert.equal(codeOf('#code='), null, 'an empty code');
  assert.equal(codeOf('#mycode=Ab12'), null, 'another name ending in code');
  assert.deepEqual(callbackReturnOf('?status=completed'), { kind: 'completed' }, '?status=completed');
  assert.deepEqual(
    callbackReturnOf('?authorizationError=access%20denied'),
    { kind: 'failed', words: 'access denied' },
    'the words of a failure',
  );
  assert.deepEqual(
    callbackReturnOf('?status=completed&authorizationError=no'),
    { kind: 'failed', words: 'no' },
    'a failure is never shown as Connected',
  );
  assert.equal(callbackReturnOf('?authorizationError=')?.kind, 'failed', 'an empty failure is a failure');
  assert.equal(callbackReturnOf('?status=pending'), null, 'no return from the provider');
});

test('what the tab kept is read back only when it has the shape the page keeps', () => {
  const kept = {
    code: 'Ab12',
    tenantName: 'Acme',
    connectorName: 'Webhook',
    branding: { name: null, logoUrl: null, accentColor: '#112233' },
    config: { url: 'https://example.com' },
  };
  assert.deepEqual(parseStored(JSON.stringify(kept)), kept, 'what the page keeps is read back');
  assert.equal(parseStored(null), null, 'nothing kept');
  assert.equal(parseStored('{not json'), null, 'not JSON');
  assert.equal(parseStored(JSON.stringify({ ...kept, code: 5 })), null, 'a code that is no text');
  assert.equal(parseStored(JSON.stringify({ ...kept, branding: null })), null, 'no branding');
  assert.equal(parseStored(JSON.stringify({ ...kept, config: [] })), null, 'a config that is a list');
  assert.equal(parseStored(JSON.stringify({ ...kept, displayName: 1 })), null, 'a name that is no text');
});

test('the body sends what was typed: config as the API takes it, credentials as typed, empties left out', () => {
  const fields = [
    field('url', 'config', { required: true, format: 'uri' }),
    field('maxPerSecond', 'config'),
    field('filter', 'config', { type: 'object' }),
    field('signingSecret', 'credentials', { generated: true }),
    field('headerName', 'credentials', { required: true }),
    field('headerValue', 'credentials', { required: true }),
  ];
  const offered = offeredFields('http', fields);
  assert.deepEqual(
    offered.map((f) => f.name),
    ['url', 'maxPerSecond', 'signingSecret', 'headerName', 'headerValue'],
    'an object field has no form on the page',
  );
  const oauth = [field('maxPerSecond', 'config'), field('ordering', 'config'), field('filter', 'config')];
  assert.deepEqual(
    offeredFields('oauth2:acme', oauth).map((f) => f.name),
    ['maxPerSecond'],
    'an OAuth2 connector offers its throttle only',
  );
  const valueOf = (_: ConnectField, text: string) => (text.trim() === '' ? undefined : text.trim());
  const values = { url: ' https://example.com/hook ', headerName: ' X-Key ', headerValue: ' s3cret ' };
  assert.deepEqual(
    completionOf('Ab12', offered, { displayName: '  ', values }, valueOf),
    {
      code: 'Ab12',
      config: { url: 'https://example.com/hook' },
      credentials: { headerName: 'X-Key', headerValue: ' s3cret ' },
    },
    'a secret is sent as typed, a blank name left out',
  );
  const webhook = [field('url', 'config'), field('signingSecret', 'credentials', { generated: true })];
  assert.deepEqual(
    completionOf('Ab12', webhook, { displayName: ' Orders ', values: {} }, valueOf),
    { code: 'Ab12', displayName: 'Orders', credentials: {} },
    'credentials are sent, empty, so that a generated one is made',
  );
  assert.deepEqual(
    completionOf('Ab12', [field('maxPerSecond', 'config')], { displayName: '', values: {} }, valueOf),
    { code: 'Ab12' },
    'a connector without credential fields gets none',
  );
});

test("a refusal's fields are named as the form names them", () => {
  const refusal = new ApiError(400, 'validation_failed', 'invalid', [
    { path: 'config.url', message: 'must match format "uri"' },
    { path: 'credentials.signingSecret', message: 'must match pattern' },
    { path: 'displayName', message: 'too long' },
    { path: 'url', message: 'private address' },
  ]);
  const named = onFormFields(refusal);
  assert.deepEqual(
    named.fieldErrors.map((e) => e.path),
    ['url', 'signingSecret', 'displayName', 'url'],
    'the paths of the refusal',
  );
  assert.equal(named.forField('signingSecret'), 'must match pattern', 'the secret field finds its error');
  assert.equal(named.status, 400, 'the status is kept');
  assert.equal(named.message, 'invalid', 'the message is kept');
});

test('an accent reads at 4.5:1 on the page in light and in dark, and is kept where it already does', () => {
  const surfaces = {
    light: ['#ffffff', '#f6f7f9'],
    dark: ['#171b21', '#0f1216'],
  };
  const ratio = (a: string, b: string) => contrast(rgbOf(a) ?? [0, 0, 0], rgbOf(b) ?? [0, 0, 0]);
  for (const accent of ['#ffd400', '#0a7cff', '#000000', '#ffffff', '#7f7f7f', '#2354d6']) {
    const props = accentProperties(accent);
    assert.ok(props, `${accent} gives no properties`);
    const light = props['--brand-accent'] ?? '';
    const dark = props['--brand-accent-dark'] ?? '';
    for (const bg of surfaces.light) assert.ok(ratio(light, bg) >= 4.5, `${accent} → ${light} on ${bg}`);
    for (const bg of surfaces.dark) assert.ok(ratio(dark, bg) >= 4.5, `${accent} → ${dark} on ${bg}`);
    // The button's text: white on the light accent, near black on the dark one (ui/styles.css).
    assert.ok(ratio(light, '#ffffff') >= 4.5, `white on ${light}`);
    assert.ok(ratio(dark, '#0b1020') >= 4.5, `#0b1020 on ${dark}`);
  }
  assert.equal(accentProperties('#2354d6')?.['--brand-accent'], '#2354d6', 'a readable accent is changed');
  assert.equal(
    accentProperties('#ffd400')?.['--brand-accent-dark'],
    '#ffd400',
    'a readable accent is changed',
  );
  assert.equal(accentProperties(null), null, 'no accent');
  assert.equal(accentProperties('red'), null, 'only #rrggbb is an accent');
  assert.equal(contrast([0, 0, 0], [255, 255, 255]), 21, 'black on white');
});

test('the page shows an https or a data: logo (decision 0079)', () => {
  const png = 'data:image/png;base64,iVBORw0KGgo=';
  const svg = 'data:image/svg+xml;base64,PHN2Zz4=';
  assert.equal(shownLogo(png), png, 'a PNG data: logo');
  assert.equal(shownLogo(svg), svg, 'an SVG data: logo');
  assert.equal(
    shownLogo('https://cdn.example.com/logo.svg'),
    'https://cdn.example.com/logo.svg',
    'an https logo, whose origin the page’s policy admits',
  );
  assert.equal(shownLogo('http://cdn.example.com/logo.svg'), null, 'an http logo');
  assert.equal(shownLogo('data:text/html;base64,PGI+'), null, 'a data: URL that is no image');
  assert.equal(shownLogo(null), null, 'no logo');
});
