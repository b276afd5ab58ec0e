import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { COMPRESS_MIN_BYTES } from '../../src/http/compression.js';
import { UI_ROOT } from '../../src/web/routes.js';
import { inDays, makeSignedInTenant, makeTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';

// Compression as a client sees it on the wire (docs/decisions/0053-compression-never-on-secrets.md).
// fetch decompresses on its own and hides Content-Encoding's effect on the bytes, so these requests
// go through node:http and read the raw body.

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  raw: Buffer;
}

let h: Harness;

function raw(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${h.baseUrl}${path}`, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, raw: Buffer.concat(chunks) }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** The body as the client reads it once Content-Encoding is undone. */
function decoded(answer: RawAnswer): string {
  const encoding = answer.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(answer.raw).toString('utf8');
  if (encoding === 'gzip') return gunzipSync(answer.raw).toString('utf8');
  assert.equal(encoding, undefined, `an encoding the client did not ask for: ${String(encoding)}`);
  return answer.raw.toString('utf8');
}

const sessionHeaders = (session: TestSession, unsafe = false): Record<string, string> => ({
  cookie: session.cookie,
  ...(unsafe ? { 'x-csrf-token': session.csrfToken, 'content-type': 'application/json' } : {}),
});

before(async () => {
  h = await startHarness({ env: { DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' } });
});
after(async () => {
  await h.close();
});

describe('answers of 1 KiB or more', () => {
  const OPENAPI = '/api/v1/openapi.json';

  test('come back br when asked br, gzip when asked gzip, as they are when not asked, and decode to the same JSON', async () => {
    const plain = await raw('GET', OPENAPI);
    assert.equal(plain.status, 200, 'the API description is served');
    assert.equal(
      plain.headers['content-encoding'],
      undefined,
      'no Accept-Encoding: the answer is not encoded',
    );
    const document = JSON.parse(plain.raw.toString('utf8')) as unknown;
    assert.ok(plain.raw.length > COMPRESS_MIN_BYTES, 'the API description is big enough to be compressed');

    for (const encoding of ['br', 'gzip']) {
      const answer = await raw('GET', OPENAPI, { 'accept-encoding': encoding });
      assert.equal(
        answer.headers['content-encoding'],
        encoding,
        `Accept-Encoding ${encoding}: the answer is ${encoding}`,
      );
      assert.match(
        String(answer.headers.vary),
        /accept-encoding/i,
        'a cache is told the answer varies by encoding',
      );
      assert.ok(
        answer.raw.length < plain.raw.length / 4,
        `the ${encoding} answer is much smaller (${answer.raw.length} bytes)`,
      );
      assert.deepEqual(
        JSON.parse(decoded(answer)),
        document,
        `the ${encoding} answer decodes to the same document`,
      );
    }
  });

  test("follow the client's preferences (q-values) and never use an encoding it refused", async () => {
    const preferGzip = await raw('GET', '/api/v1/openapi.json', { 'accept-encoding': 'br;q=0.5, gzip;q=1' });
    assert.equal(preferGzip.headers['content-encoding'], 'gzip', 'gzip preferred by q-value wins');
    const refusesBr = await raw('GET', '/api/v1/openapi.json', { 'accept-encoding': 'br;q=0, gzip' });
    assert.equal(refusesBr.headers['content-encoding'], 'gzip', 'br;q=0 is never used');
    const identity = await raw('GET', '/api/v1/openapi.json', { 'accept-encoding': 'identity' });
    assert.equal(identity.headers['content-encoding'], undefined, 'identity only: the answer is not encoded');
    const unknown = await raw('GET', '/api/v1/openapi.json', { 'accept-encoding': 'compress' });
    assert.equal(unknown.status, 200, 'an encoding the server lacks still gets the answer');
    assert.equal(unknown.headers['content-encoding'], undefined, 'an encoding the server lacks: not encoded');
  });

  test('a large list of a tenant comes back compressed and decodes to the same page', async () => {
    const platform = { authorization: `Bearer ${h.platformToken}` };
    for (let i = 0; i < 12; i++) await makeTenant(h, { name: `Compressed tenant ${i} ${'x'.repeat(60)}` });
    const plain = await raw('GET', '/api/v1/platform/tenants?limit=100', platform);
    assert.equal(plain.status, 200, plain.raw.toString('utf8'));
    assert.ok(plain.raw.length >= COMPRESS_MIN_BYTES, 'the list is 1 KiB or more');
    const br = await raw('GET', '/api/v1/platform/tenants?limit=100', {
      ...platform,
      'accept-encoding': 'br',
    });
    assert.equal(br.headers['content-encoding'], 'br', 'a read of 1 KiB or more is compressed');
    const page = JSON.parse(decoded(br)) as { data: Array<{ id: string }> };
    const expected = JSON.parse(plain.raw.toString('utf8')) as { data: Array<{ id: string }> };
    assert.deepEqual(
      page.data.map((t) => t.id),
      expected.data.map((t) => t.id),
      'the compressed page lists the same tenants',
    );
  });

  test('HEAD answers with the headers of GET and no body', async () => {
    const head = await raw('HEAD', '/api/v1/openapi.json', { 'accept-encoding': 'br' });
    assert.equal(head.status, 200, 'HEAD of the API description works');
    assert.equal(head.raw.length, 0, 'HEAD has no body');
  });
});

describe('answers that are not compressed', () => {
  test('under 1 KiB', async () => {
    const answer = await raw('GET', '/healthz', { 'accept-encoding': 'br, gzip' });
    assert.equal(answer.status, 200, 'healthz answers');
    assert.equal(answer.headers['content-encoding'], undefined, 'a small answer is sent as it is');
    assert.deepEqual(
      JSON.parse(answer.raw.toString('utf8')),
      { status: 'ok' },
      'the small answer reads as JSON',
    );
  });

  test('a new key and its secret are never compressed, however large the answer', async () => {
    const { session } = await makeSignedInTenant(h);
    const body = JSON.stringify({
      name: `k ${'n'.repeat(96)}`,
      scopes: [
        'integrations:READER',
        'integrations:OPERATOR',
        'integrations:ADMIN',
        'integration_hub:READER',
      ],
      expiresAt: inDays(30),
    });
    const created = await raw(
      'POST',
      '/api/v1/company/api-keys',
      { ...sessionHeaders(session, true), 'accept-encoding': 'br, gzip' },
      body,
    );
    assert.equal(created.status, 201, created.raw.toString('utf8'));
    assert.equal(created.headers['cache-control'], 'no-store', 'the answer with a secret is no-store');
    assert.equal(
      created.headers['content-encoding'],
      undefined,
      'the answer carrying the secret is not compressed',
    );
    const key = JSON.parse(created.raw.toString('utf8')) as { id: string; secret: string };
    assert.match(key.secret, /^tnt_/, 'the answer carries the tnt_ secret in clear');

    const rotated = await raw(
      'POST',
      `/api/v1/company/api-keys/${key.id}/rotate`,
      { ...sessionHeaders(session, true), 'accept-encoding': 'br, gzip' },
      '{}',
    );
    assert.equal(rotated.status, 200, rotated.raw.toString('utf8'));
    assert.equal(rotated.headers['content-encoding'], undefined, 'the rotated secret is not compressed');
  });

  test('no answer to a write under no-store is compressed, even at 1 KiB or more', async () => {
    const { session } = await makeSignedInTenant(h);
    // The connection echoes its URL: a long one makes the answer to this write over 1 KiB.
    const url = `https://127.0.0.1/${'p'.repeat(1500)}`;
    const created = await raw(
      'POST',
      '/api/v1/integrations/connections',
      { ...sessionHeaders(session, true), 'accept-encoding': 'br, gzip' },
      JSON.stringify({ connectorKey: 'webhook', displayName: 'Long URL', url }),
    );
    assert.equal(created.status, 201, created.raw.toString('utf8'));
    assert.ok(
      created.raw.length >= COMPRESS_MIN_BYTES,
      `the answer is 1 KiB or more (${created.raw.length} bytes)`,
    );
    assert.equal(
      created.headers['content-encoding'],
      undefined,
      'a write answered under no-store is not compressed',
    );
    const read = await raw(
      'GET',
      `/api/v1/integrations/connections/${(JSON.parse(created.raw.toString('utf8')) as { id: string }).id}`,
      {
        ...sessionHeaders(session),
        'accept-encoding': 'br',
      },
    );
    assert.equal(read.status, 200, read.raw.toString('utf8'));
    assert.equal(read.headers['content-encoding'], 'br', 'the same connection read back is compressed');
  });

  test("the session's answer, which hands out the CSRF token with its cookie, is not compressed", async () => {
    const { session } = await makeSignedInTenant(h);
    const answer = await raw('GET', '/api/v1/auth/session', {
      ...sessionHeaders(session),
      'accept-encoding': 'br, gzip',
    });
    assert.equal(answer.status, 200, answer.raw.toString('utf8'));
    assert.ok(answer.headers['set-cookie'], 'the session answer sets the CSRF cookie');
    assert.equal(
      answer.headers['content-encoding'],
      undefined,
      'the answer with a CSRF token is not compressed',
    );
  });

  test('no read of the API returns a secret: reads may be compressed (the rule the exclusion relies on)', async () => {
    const document = JSON.parse((await raw('GET', '/api/v1/openapi.json')).raw.toString('utf8')) as OpenApi;
    const offending: string[] = [];
    for (const [path, operations] of Object.entries(document.paths)) {
      const read = operations.get;
      if (!read) continue;
      for (const [status, response] of Object.entries(read.responses)) {
        if (!status.startsWith('2')) continue;
        const schema = response.content?.['application/json']?.schema;
        for (const [name, type] of propertyNames(schema, document)) {
          // These answers sign in, or renew the CSRF token, with a cookie: excluded by that (test above).
          if (SETS_COOKIE.has(path) && name === 'csrfToken') continue;
          // A URL is where a secret is fetched (an OAuth2 provider's `tokenUrl`), never a secret itself.
          const isUrl = /Url$/.test(name);
          if (type === 'string' && /secret|token|password/i.test(name) && !isUrl) {
            offending.push(`GET ${path} ${status}: ${name}`);
          }
        }
      }
    }
    assert.deepEqual(offending, [], 'a read returns what looks like a secret: it would be compressed');
  });
});

describe("the web UI's assets", () => {
  const index = readFileSync(join(UI_ROOT, 'index.html'), 'utf8');
  const script = /src="\/assets\/([^"]+\.js)"/.exec(index)?.[1] ?? '';
  const style = /href="\/assets\/([^"]+\.css)"/.exec(index)?.[1] ?? '';
  const onDisk = (name: string) => readFileSync(join(UI_ROOT, 'assets', name));

  test('are served from the files compressed at build time, byte for byte, with their own type', async () => {
    assert.ok(script && style, `index.html names a script and a stylesheet: ${index}`);
    for (const [name, type] of [
      [script, /^(application|text)\/javascript/],
      [style, /^text\/css/],
    ] as const) {
      const br = await raw('GET', `/assets/${name}`, { 'accept-encoding': 'gzip, br' });
      assert.equal(br.status, 200, `${name} is served`);
      assert.equal(br.headers['content-encoding'], 'br', `${name}: br when the client takes it`);
      assert.match(String(br.headers['content-type']), type, `${name} keeps its own content type`);
      assert.match(String(br.headers.vary), /accept-encoding/i, `${name} varies by encoding`);
      assert.ok(
        br.raw.equals(onDisk(`${name}.br`)),
        `${name}: the bytes of ${name}.br, not compressed again`,
      );

      const gzip = await raw('GET', `/assets/${name}`, { 'accept-encoding': 'gzip' });
      assert.equal(gzip.headers['content-encoding'], 'gzip', `${name}: gzip when the client takes only gzip`);
      assert.ok(gzip.raw.equals(onDisk(`${name}.gz`)), `${name}: the bytes of ${name}.gz`);

      const plain = await raw('GET', `/assets/${name}`);
      assert.equal(
        plain.headers['content-encoding'],
        undefined,
        `${name}: as it is when no encoding is asked`,
      );
      assert.ok(plain.raw.equals(onDisk(name)), `${name}: the file itself`);
      assert.ok(
        brotliDecompressSync(br.raw).equals(plain.raw),
        `${name}: the br file decodes to the file itself`,
      );
    }
  });

  test('answer HEAD and a conditional GET (304) as before', async () => {
    const first = await raw('GET', `/assets/${script}`, { 'accept-encoding': 'br' });
    const etag = String(first.headers.etag);
    assert.ok(first.headers.etag, 'an asset has an ETag');
    const again = await raw('GET', `/assets/${script}`, { 'accept-encoding': 'br', 'if-none-match': etag });
    assert.equal(again.status, 304, 'a client holding the asset gets 304');
    assert.equal(again.raw.length, 0, '304 has no body');
    const head = await raw('HEAD', `/assets/${script}`, { 'accept-encoding': 'br' });
    assert.equal(head.status, 200, 'HEAD of an asset works');
    assert.equal(head.headers['content-encoding'], 'br', 'HEAD says what GET would send');
    assert.equal(head.raw.length, 0, 'HEAD has no body');
  });
});

interface OpenApi {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: unknown }> }> }>
  >;
  components?: { schemas?: Record<string, unknown> };
}

/** The reads that set a cookie with their answer: the session's and single sign-on's. */
const SETS_COOKIE = new Set(['/api/v1/auth/session', '/api/v1/auth/sso/negotiate']);

/** Every property in a JSON schema with its type, through $refs, unions and arrays. */
function propertyNames(
  schema: unknown,
  document: OpenApi,
  seen = new Set<unknown>(),
): Array<[string, unknown]> {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return [];
  seen.add(schema);
  const node = schema as Record<string, unknown>;
  const names: Array<[string, unknown]> = [];
  if (typeof node.$ref === 'string') {
    const target = document.components?.schemas?.[node.$ref.replace('#/components/schemas/', '')];
    names.push(...propertyNames(target, document, seen));
  }
  if (node.properties && typeof node.properties === 'object') {
    for (const [name, value] of Object.entries(node.properties)) {
      names.push([name, (value as { type?: unknown }).type], ...propertyNames(value, document, seen));
    }
  }
  for (const key of ['items', 'additionalProperties'])
    names.push(...propertyNames(node[key], document, seen));
  for (const key of ['allOf', 'anyOf', 'oneOf']) {
    const parts = node[key];
    if (Array.isArray(parts)) for (const part of parts) names.push(...propertyNames(part, document, seen));
  }
  return names;
}
