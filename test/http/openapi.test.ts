import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import addFormatsModule from 'ajv-formats';
import { Ajv2020 } from 'ajv/dist/2020.js';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { LEVELS, MODULE_KEYS } from '../../src/access/catalog.js';
import { registerOpenApi } from '../../src/access/openapi.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
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
      // A route whose success is a redirect (the OAuth callback's 303) documents that; the MCP
      // endpoint's GET answers 405 only, as MCP's Streamable HTTP transport lets it (docs/api/mcp.md).
      statuses.some((s) => s.startsWith('2') || s === '303' || (path === '/api/v1/mcp' && s === '405')),
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
  // The connectors of files, chosen by key; a family's (oauth2:*) body beside them (anyOf).
  assertDiscriminated(bodyOf('/api/v1/integrations/connections', 'post').anyOf[0], 'connectorKey', [
    'amqp',
    'http',
    'mqtt',
    'nats',
    'redis',
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
  // anyOf: a body may fit several connectors (webhook and http share oauth2ClientCredentials).
  assert.equal(
    credentials.anyOf.length,
    7,
    'the credentials body does not document one branch per connector',
  );
  for (const branch of credentials.anyOf) {
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

/**
 * A schema of the document as a predicate, its `$ref`s resolved against the document's components
 * (as test/helpers/openapi-check.ts checks answers).
 */
function documentedCheck(schema: unknown): (value: unknown) => boolean {
  const ajv = (addFormatsModule as unknown as (a: Ajv2020) => Ajv2020)(
    new Ajv2020({ strict: false, validateSchema: false }),
  );
  ajv.addSchema({ components: doc.components }, 'components.json');
  const validate = ajv.compile(
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"components.json#/components/')),
  );
  return (value) => validate(value);
}

/**
 * For each value: the document allows it exactly when validation does. `refused` asks the running
 * service whether it refused the value as invalid.
 */
async function assertSameVerdicts(
  what: string,
  schema: unknown,
  values: readonly unknown[],
  refused: (values: readonly unknown[]) => Promise<boolean[]>,
): Promise<void> {
  const allows = documentedCheck(schema);
  const byService = await refused(values);
  const disagreements = values.flatMap((value, i) => {
    const documented = allows(value) ? 'allows' : 'forbids';
    const service = byService[i] ? 'refuses' : 'takes';
    return (documented === 'allows') === (service === 'takes')
      ? []
      : [`${JSON.stringify(value)}: the document ${documented} it, the service ${service} it`];
  });
  assert.deepEqual(disagreements, [], `${what}: the document and validation disagree`);
}

const RULES = '/api/v1/platform/alerting/rules';

test('If-Match is documented exactly as validation takes it: revisions, bare or quoted, or *', async () => {
  const parameter = (doc.paths[RULES].put.parameters as any[]).find(
    (p) => p.in === 'header' && p.name === 'if-match',
  );
  assert.ok(parameter, 'the rules PUT does not document its If-Match header');
  assert.equal(typeof parameter.schema.pattern, 'string', 'If-Match is documented as any string');
  const values = [
    '3',
    '"3"',
    '"7777", 3',
    '1,"2",3',
    '*',
    '1234567890',
    '12345678901',
    'abc',
    '"1',
    'W/"1"',
    '-1',
    ',',
    '',
    '1,,2',
    '"1",',
    '*, 1',
    '1 2',
    '1.5',
    '**',
  ];
  await assertSameVerdicts('If-Match', parameter.schema, values, async (all) => {
    const body = { defaults: { channelIds: [], repeatIntervalSeconds: 3600 }, rules: [] };
    const verdicts: boolean[] = [];
    for (const value of all) {
      const response = await h.request('PUT', RULES, {
        token: h.platformToken,
        body,
        headers: { 'if-match': String(value) },
      });
      assert.ok([200, 400, 409].includes(response.status), `If-Match ${value}: ${response.text}`);
      verdicts.push(response.status === 400 && response.body.errors?.[0]?.path === 'headers.if-match');
    }
    return verdicts;
  });
});

test('the batch publish body documents each event: type, data, idempotencyKey, orderingKey and nothing else', async () => {
  const body = bodyOf('/api/v1/integrations/events/batch', 'post');
  const item = resolve(body.properties.events.items);
  assert.deepEqual(
    Object.keys(item.properties ?? {}).sort(),
    ['data', 'idempotencyKey', 'orderingKey', 'type'],
    'a batch event is not documented with its fields',
  );
  assert.deepEqual([...(item.required ?? [])].sort(), ['data', 'type'], 'the required event fields differ');
  assert.equal(item.additionalProperties, false, 'a batch event is documented as taking unknown fields');
  assert.equal(typeof item.properties.type.pattern, 'string', "a batch event's type has no pattern");
  const { session } = await makeSignedInTenant(h);
  const values = [
    { type: 'order.created', data: {} },
    { type: 'order.created', data: { nested: [1, { a: null }] }, idempotencyKey: 'key-1' },
    { type: 'Order', data: {} },
    { type: 'x'.repeat(101), data: {} },
    { type: '', data: {} },
    { type: 'order.created', data: [] },
    { type: 'order.created', data: 'text' },
    { type: 'order.created' },
    { data: {} },
    { type: 'order.created', data: {}, extra: 1 },
    { type: 'order.created', data: {}, idempotencyKey: '' },
    { type: 'order.created', data: {}, idempotencyKey: 'k'.repeat(256) },
    { type: 'order.created', data: {}, idempotencyKey: 5 },
    { type: 'order.created', data: {}, orderingKey: 'k'.repeat(200) },
    { type: 'order.created', data: {}, orderingKey: 'k'.repeat(201) },
    { type: 'order.created', data: {}, orderingKey: '' },
    'order.created',
    null,
    [],
  ];
  await assertSameVerdicts('batch events', item, values, async (all) => {
    const response = await h.request('POST', '/api/v1/integrations/events/batch', {
      session,
      body: { events: all },
    });
    assert.equal(response.status, 202, `the batch of sample events is refused whole: ${response.text}`);
    return (response.body.data as any[]).map((answer) => answer.error?.code === 'validation_failed');
  });
});

test("the webhook signing secret's 24–64 bytes are in its documented pattern, not only in words", async () => {
  const credentials = bodyOf('/api/v1/integrations/connections/{id}/credentials', 'put');
  const branch = (credentials.anyOf as any[]).map(resolve).find((b) => b.properties?.signingSecret);
  assert.ok(branch, 'no credentials schema documents the signing secret');
  const schema = branch.properties.signingSecret;
  assert.equal(typeof schema.pattern, 'string', 'the signing secret is documented without a pattern');
  const secret = (bytes: number) => `whsec_${Buffer.alloc(bytes, 0xa5).toString('base64')}`;
  const values = [
    ...[0, 1, 16, 23, 24, 25, 26, 27, 32, 48, 62, 63, 64, 65, 66, 100].map(secret),
    secret(25).replace(/=+$/, ''),
    secret(32).replace(/=+$/, ''),
    `${secret(24)}=`,
    `${secret(24)}A`,
    `sk_${Buffer.alloc(32).toString('base64')}`,
    `whsec_${'!'.repeat(44)}`,
    `whsec_${Buffer.alloc(32).toString('base64url')}`,
    ` ${secret(32)}`,
  ];
  const { session } = await makeSignedInTenant(h);
  const connection = await makeWebhookConnection(h, session, 'https://receiver.example.com/hook');
  await assertSameVerdicts('signingSecret', schema, values, async (all) => {
    const verdicts: boolean[] = [];
    for (const value of all) {
      const response = await h.request(
        'PUT',
        `/api/v1/integrations/connections/${connection.id}/credentials`,
        { session, body: { signingSecret: value } },
      );
      assert.ok([200, 400].includes(response.status), `signingSecret ${value}: ${response.text}`);
      verdicts.push(response.status === 400 && response.body.errors?.[0]?.path === 'signingSecret');
    }
    return verdicts;
  });
});
