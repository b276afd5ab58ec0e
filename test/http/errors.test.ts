import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, test } from 'node:test';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const countTenants = async () =>
  (await h.database.kysely.selectFrom('tenants').select('id').execute()).length;

function assertProblem(
  response: { status: number; headers: Headers; body: Record<string, unknown> },
  status: number,
  code: string,
) {
  assert.equal(response.status, status, `the request is not answered ${status} ${code}`);
  assert.equal(response.body.code, code, `the ${status} answer carries another code than ${code}`);
  assert.match(
    response.headers.get('content-type') ?? '',
    /^application\/problem\+json/,
    `the ${code} answer is not application/problem+json`,
  );
  assert.equal(response.body.type, 'about:blank', `the ${code} problem's type is not about:blank`);
  assert.equal(response.body.status, status, `the ${code} problem's status differs from the HTTP status`);
  assert.equal(typeof response.body.title, 'string', `the ${code} problem has no title`);
  assert.ok('detail' in response.body, `the ${code} problem has no detail`);
  assert.equal(
    response.body.requestId,
    response.headers.get('x-request-id'),
    `the ${code} problem names another request ID than its X-Request-Id header`,
  );
}

test('malformed JSON is 400 invalid_json, nothing written', async () => {
  const before = await countTenants();
  for (const raw of ['{"name": "x"', '{name: "x"}', 'nul', '{"name":"x"}}']) {
    const response = await h.request('POST', '/api/v1/platform/tenants', {
      token: h.platformToken,
      rawBody: raw,
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(response, 400, 'invalid_json');
  }
  assert.equal(await countTenants(), before, 'a request with malformed JSON created a tenant');
});

test('a body that is not JSON is 415 unsupported_media_type', async () => {
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'multipart/form-data; boundary=x',
  ]) {
    const response = await h.request('POST', '/api/v1/platform/tenants', {
      token: h.platformToken,
      rawBody: 'name=x',
      headers: { 'content-type': type },
    });
    assertProblem(response, 415, 'unsupported_media_type');
  }
});

test('a body without a content type is 415', async () => {
  const response = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(
      `${h.baseUrl}/api/v1/platform/tenants`,
      { method: 'POST', headers: { authorization: `Bearer ${h.platformToken}`, 'content-length': '12' } },
      (res) => {
        let body = '';
        res.on('data', (c) => {
          body += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end('{"name":"x"}');
  });
  assert.equal(response.status, 415, 'a body without a content type is not refused with 415');
  assert.equal(
    JSON.parse(response.body).code,
    'unsupported_media_type',
    'a body without a content type is refused with another code than unsupported_media_type',
  );
});

test('JSON with a charset parameter is accepted', async () => {
  const response = await h.request('POST', '/api/v1/platform/tenants', {
    token: h.platformToken,
    rawBody: JSON.stringify({ name: 'charset' }),
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  assert.equal(response.status, 201, 'JSON with a charset parameter is refused');
});

test('a body over 1 MiB is 413 payload_too_large, nothing written', async () => {
  const before = await countTenants();
  const response = await h.request('POST', '/api/v1/platform/tenants', {
    token: h.platformToken,
    body: { name: 'x', padding: 'y'.repeat(1024 * 1024) },
  });
  assertProblem(response, 413, 'payload_too_large');
  assert.equal(await countTenants(), before, 'a body over 1 MiB created a tenant');
});

test('a body just under 1 MiB reaches validation (400, not 413)', async () => {
  const response = await h.request('POST', '/api/v1/platform/tenants', {
    token: h.platformToken,
    body: { name: 'x', padding: 'y'.repeat(1000 * 1000) },
  });
  assertProblem(response, 400, 'validation_failed');
});

test('an unknown route is 404 not_found in problem format', async () => {
  for (const [method, path] of [
    ['GET', '/api/v1/nope'],
    ['POST', '/api/v1/platform/nothing'],
    ['DELETE', '/api/v1/platform/tenants'],
    ['GET', '/api'],
    // Every GET outside the API is the web UI's (test/web/serving.test.ts); other methods are not.
    ['POST', '/'],
    ['PUT', '/connections'],
  ] as const) {
    const response = await h.request(method, path, { token: h.platformToken });
    assertProblem(response, 404, 'not_found');
  }
});

test('validation errors list every problem with a path and message', async () => {
  const response = await h.request('POST', '/api/v1/platform/tenants', {
    token: h.platformToken,
    body: { name: 'x', extra: true },
  });
  assertProblem(response, 400, 'validation_failed');
  assert.deepEqual(
    response.body.errors,
    [{ path: 'extra', message: 'is not a known field' }],
    'the validation errors do not list the unknown field with its message',
  );
  assert.match(String(response.body.detail), /extra/, "the problem's detail does not name the unknown field");
});

test('authentication is checked before the body: a bad body without a credential is 401', async () => {
  const response = await h.request('POST', '/api/v1/platform/tenants', {
    rawBody: '{not json',
    headers: { 'content-type': 'application/json' },
  });
  assertProblem(response, 401, 'unauthenticated');
  const oversize = await h.request('POST', '/api/v1/platform/tenants', {
    body: { padding: 'y'.repeat(2 * 1024 * 1024) },
  });
  assert.equal(oversize.status, 401, 'an oversized body without a credential is not refused with 401');
});

test('every response carries X-Request-Id; a safe incoming one is kept, an unsafe one replaced', async () => {
  const kept = await h.request('GET', '/healthz', { headers: { 'x-request-id': 'trace-abc.123' } });
  assert.equal(kept.headers.get('x-request-id'), 'trace-abc.123', 'a safe incoming X-Request-Id is not kept');
  const replaced = await h.request('GET', '/healthz', { headers: { 'x-request-id': 'bad id\twith spaces' } });
  assert.match(
    replaced.headers.get('x-request-id') ?? '',
    /^req_[0-9A-Za-z]{22}$/,
    'an unsafe incoming X-Request-Id is not replaced by a req_ ID',
  );
  const missing = await h.request('GET', '/api/v1/nope');
  assert.match(missing.headers.get('x-request-id') ?? '', /^req_/, 'an error answer carries no X-Request-Id');
});

test('errors never carry a stack trace or SQL', async () => {
  const text = h.responses().join('\n');
  assert.ok(!/at .*\.(ts|js):\d+/.test(text), 'an answer carries a stack trace');
  assert.ok(!/select |insert into /i.test(text), 'an answer carries SQL');
});
