import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { LEVELS, MODULE_KEYS } from '../../src/access/catalog.js';
import { registerOpenApi } from '../../src/access/openapi.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { responseCheck } from '../helpers/openapi-check.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is read as plain JSON */

let h: Harness;
let doc: any;
before(async () => {
  h = await startHarness({ env: { PUBLIC_URL: 'https://hub.example.com' } });
  doc = (await h.request('GET', '/api/v1/openapi.json')).body;
});
after(() => h.close());

const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const PROBLEM_REF = '#/components/schemas/Problem';

function operations(): Array<{ method: string; path: string; op: any }> {
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops as Record<string, any>).map(([method, op]) => ({ method, path, op })),
  );
}

const resolve = (schema: any): any =>
  typeof schema?.$ref === 'string'
    ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
    : schema;

test('the document names its server and every way in: keys, the session cookie and its CSRF header', () => {
  assert.deepEqual(
    doc.servers,
    [{ url: 'https://hub.example.com' }],
    'the document names another server than PUBLIC_URL',
  );
  const schemes = doc.components.securitySchemes;
  assert.deepEqual(
    { type: schemes.session.type, in: schemes.session.in, name: schemes.session.name },
    { type: 'apiKey', in: 'cookie', name: 'svc_access' },
    'the document does not describe the session as the svc_access cookie',
  );
  assert.deepEqual(
    { type: schemes.csrf.type, in: schemes.csrf.in, name: schemes.csrf.name },
    { type: 'apiKey', in: 'header', name: 'X-CSRF-Token' },
    'the document does not describe the CSRF token as the X-CSRF-Token header',
  );
  assert.equal(schemes.tenantKey.scheme, 'bearer', 'tenant keys are not documented as bearer tokens');
  assert.equal(schemes.platformKey.scheme, 'bearer', 'platform keys are not documented as bearer tokens');
});

test('public routes say security: [], and a session on an unsafe method needs the CSRF header too', () => {
  assert.deepEqual(doc.paths['/healthz'].get.security, [], '/healthz is documented as needing a credential');
  assert.deepEqual(
    doc.paths['/api/v1/auth/login'].post.security,
    [],
    'sign-in is documented as needing a credential',
  );
  for (const { method, path, op } of operations()) {
    assert.ok(Array.isArray(op.security), `${method} ${path} declares its security`);
    for (const requirement of op.security as Array<Record<string, string[]>>) {
      if (!('session' in requirement)) continue;
      assert.equal('csrf' in requirement, BODY_METHODS.has(method), `${method} ${path}: csrf with session`);
    }
  }
});

test('every operation documents every error it can answer, as problem details', () => {
  for (const { method, path, op } of operations()) {
    const where = `${method.toUpperCase()} ${path}`;
    const statuses = Object.keys(op.responses);
    // Any request can have a malformed URL or head (400), or not arrive in time (408).
    const expected = ['400', '408', '500', '503'];
    if (op.security.length > 0) expected.push('401', '403', '429');
    if (BODY_METHODS.has(method)) expected.push('400', '413', '415');
    if (path.includes('{')) expected.push('400', '404');
    if ((op.parameters ?? []).some((p: any) => p.in === 'query')) expected.push('400');
    for (const status of expected) assert.ok(statuses.includes(status), `${where} documents ${status}`);
    for (const status of statuses.filter((s) => Number(s) >= 400)) {
      const content = op.responses[status].content;
      assert.deepEqual(Object.keys(content), ['application/problem+json'], `${where} ${status} content`);
      assert.equal(content['application/problem+json'].schema.$ref, PROBLEM_REF, `${where} ${status}`);
    }
    assert.ok(
      statuses.some((s) => s.startsWith('2')),
      `${where} documents its success`,
    );
    for (const status of statuses) {
      assert.notEqual(op.responses[status].description, 'Default Response', `${where} ${status}`);
    }
  }
  assert.ok(doc.components.schemas.Problem.properties.code, 'the Problem schema does not document its code');
});

test('deletes and sign-out answer 204 without a body, and the document says so', () => {
  for (const [method, path] of [
    ['delete', '/api/v1/company/api-keys/{id}'],
    ['delete', '/api/v1/platform/alerting/channels/{id}'],
    ['post', '/api/v1/auth/logout'],
  ] as const) {
    const responses = doc.paths[path][method].responses;
    assert.ok(responses['204'], `${method} ${path} documents 204`);
    assert.equal(
      responses['204'].content,
      undefined,
      `${method} ${path}: the 204 answer is documented with a body`,
    );
    assert.equal(responses['200'], undefined, `${method} ${path} documents no 200`);
  }
});

test('route-specific errors are documented where the domain throws them', () => {
  assert.ok(
    doc.paths['/api/v1/company/api-keys/{id}/rotate'].post.responses['409'],
    'rotating a key does not document its 409',
  );
  assert.ok(
    doc.paths['/api/v1/integrations/connections/{id}/credentials'].put.responses['409'],
    'binding credentials does not document its 409',
  );
  assert.ok(
    doc.paths['/api/v1/platform/alerting/channels/{id}'].delete.responses['409'],
    'deleting an alerting channel does not document its 409',
  );
  assert.ok(doc.paths['/api/v1/auth/login'].post.responses['401'], 'sign-in does not document its 401');
});

/** A `oneOf` of named component schemas, each one chosen by `propertyName`. */
function assertDiscriminated(schema: any, propertyName: string, values: string[]): void {
  assert.equal(
    schema.discriminator?.propertyName,
    propertyName,
    `the body is not documented as chosen by ${propertyName}`,
  );
  const mapping = schema.discriminator.mapping as Record<string, string>;
  assert.deepEqual(
    Object.keys(mapping).sort(),
    [...values].sort(),
    `the ${propertyName} mapping documents other values than the route accepts`,
  );
  assert.deepEqual(
    (schema.oneOf as any[]).map((b) => b.$ref).sort(),
    Object.values(mapping).sort(),
    'every branch is a named schema in the mapping',
  );
  for (const [value, ref] of Object.entries(mapping)) {
    const branch = resolve({ $ref: ref });
    assert.ok(branch, `${ref} exists`);
    assert.deepEqual(
      branch.properties[propertyName].enum ?? [branch.properties[propertyName].const],
      [value],
      `${ref}: the branch does not fix ${propertyName} to ${value}`,
    );
  }
}

const bodyOf = (path: string, method: string) =>
  resolve(doc.paths[path][method].requestBody.content['application/json'].schema);

test('request bodies are as strict as validation: per-kind and per-connector named schemas', () => {
  assertDiscriminated(bodyOf('/api/v1/integrations/connections', 'post'), 'connectorKey', [
    'http',
    'slack',
    'webhook',
  ]);
  assertDiscriminated(bodyOf('/api/v1/platform/alerting/channels', 'post'), 'kind', [
    'EMAIL',
    'WEBHOOK',
    'SLACK',
    'GRAFANA',
    'HTTP',
  ]);
  const credentials = bodyOf('/api/v1/integrations/connections/{id}/credentials', 'put');
  assert.equal(
    credentials.oneOf.length,
    3,
    'the credentials body does not document one branch per connector',
  );
  for (const branch of credentials.oneOf) {
    assert.match(
      branch.$ref,
      /^#\/components\/schemas\/\w+$/,
      `a credentials branch is not a named schema: ${branch.$ref}`,
    );
    assert.equal(
      resolve(branch).additionalProperties,
      false,
      `${branch.$ref} is documented as taking unknown fields`,
    );
  }
  const patchConfig = bodyOf('/api/v1/platform/alerting/channels/{id}', 'patch').properties.config;
  assert.deepEqual(
    (patchConfig.anyOf as any[]).map((b) => b.$ref),
    ['Email', 'Webhook', 'Slack', 'Grafana', 'Http'].map(
      (k) => `#/components/schemas/${k}ChannelConfigPatch`,
    ),
    'the channel config patch does not document one named schema per kind',
  );
  const webhook = resolve({ $ref: '#/components/schemas/WebhookConnectionCreate' });
  assert.equal(webhook.properties.url.format, 'uri', 'the webhook URL is not documented as a URI');
  const slackChannel = resolve({ $ref: '#/components/schemas/SlackChannelCreate' });
  assert.equal(
    slackChannel.properties.config.properties.webhookUrl.format,
    'uri',
    "the Slack channel's webhook URL is not documented as a URI",
  );
  const scopes = bodyOf('/api/v1/company/api-keys', 'post').properties.scopes.items;
  assert.deepEqual(
    [...scopes.enum].sort(),
    MODULE_KEYS.flatMap((m) => LEVELS.map((l) => `${m}:${l}`)).sort(),
    'the key scopes documented are not every module and level',
  );
});

test('answers the router gives before a handler runs are in the document too', async () => {
  const { session } = await makeSignedInTenant(h);
  // Every response through h.request is checked against the document: these fail the test if not.
  const text = await h.request('POST', '/api/v1/auth/logout', {
    session,
    rawBody: 'bye',
    headers: { 'content-type': 'text/plain' },
  });
  assert.equal(text.status, 415, 'a sign-out with a text body is not refused with 415');
  const big = await h.request('POST', '/api/v1/company/api-keys', {
    session,
    rawBody: `{"name":"${'x'.repeat(1_100_000)}"}`,
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(big.status, 413, 'a key request over 1 MiB is not refused with 413');
  const loggedOut = await h.request('POST', '/api/v1/auth/logout', { session });
  assert.equal(loggedOut.status, 204, 'signing out fails');
});

test('the response check refuses what the document does not say', () => {
  const check = responseCheck(doc);
  const headers = (contentType: string) =>
    new Headers({ 'content-type': contentType, 'x-request-id': 'req_1' });
  const json = (status: number, body: unknown, path = '/healthz') => ({
    method: 'GET',
    path,
    status,
    headers: headers('application/json; charset=utf-8'),
    text: JSON.stringify(body),
    body,
  });
  check(json(200, { status: 'ok' }));
  assert.throws(
    () => check(json(200, { status: 'fine' })),
    /does not match the OpenAPI document/,
    'the response check accepts a body that does not match the document',
  );
  assert.throws(
    () => check(json(418, { status: 'ok' })),
    /status not documented/,
    'the response check accepts an undocumented status',
  );
  assert.throws(
    () => check(json(503, { status: 'down' })),
    /content type application\/json not in/,
    'the response check accepts an undocumented content type',
  );
  assert.throws(
    () =>
      check({ ...json(200, { status: 'ok' }), headers: new Headers({ 'content-type': 'application/json' }) }),
    /header X-Request-Id missing/,
    'the response check accepts an answer without X-Request-Id',
  );
  assert.throws(
    () =>
      check({
        ...json(404, {}, '/api/v1/platform/tenants/ten_x'),
        headers: headers('application/problem+json'),
      }),
    /must have required property/,
    'the response check accepts a problem missing required fields',
  );
  assert.throws(
    () => check({ ...json(204, {}, '/api/v1/company/api-keys/key_x'), method: 'DELETE' }),
    /a body where the document says none/,
    'the response check accepts a body on a 204',
  );
});

test('a body the document cannot name fails at start-up, not on the first GET of the document', async () => {
  const app = Fastify();
  await registerOpenApi(app, 'https://hub.example.com');
  const inline = { type: 'object', properties: { kind: { const: 'a' } }, required: ['kind'] };
  app.post(
    '/inline',
    {
      config: {
        openapi: { body: Type.Unsafe({ discriminator: { propertyName: 'kind' }, oneOf: [inline] }) },
      },
    },
    async () => ({}),
  );
  await assert.rejects(
    async () => app.ready(),
    /not a named schema/,
    'an unnamed oneOf branch passes start-up and would fail only on the first GET of the document',
  );
});
