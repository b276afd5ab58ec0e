import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { connect, createServer as createNetServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Received, type Receiver } from '../helpers/receiver.js';

// The red team's second look at the credential proxy (issue 37, items 8 and 11; docs/api/oauth.md,
// docs/decisions/0065-proxy-pool-and-provider-words.md): paths that climb under some server's reading
// of them, a provider that answers 101 or compresses unasked, a provider whose error words repeat
// the operator's client secret. Each test failed before its fix (`// FOUND:` says what was wrong).
let h: Harness;
let api: Receiver;
let tokens: Receiver;
let close: () => Promise<unknown>;
type Handler = (request: Received, response: ServerResponse) => void | Promise<void>;
let apiHandler: Handler = (_r, res) => {
  res.end('ok');
};
/** The token endpoint's answer; by default a fresh token for an hour. */
let tokenHandler: Handler = (_r, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ access_token: `tok-${++n}`, token_type: 'Bearer', expires_in: 3600 }));
};
/** Bodies of answers hubgate itself wrote (problem details), from the raw client. */
const ownAnswers: string[] = [];

const CLIENT_ID = 'hubgate-client';
const CLIENT_SECRET = 'cs-Operator-Secret-9f8e7d6c5b4a';
const PROVIDERS = '/api/v1/platform/oauth-providers';
const CONNECTIONS = '/api/v1/integrations/connections';
const CALLBACK = '/api/v1/oauth/callback';
let n = 0;

before(async () => {
  h = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_TIMEOUT_MS: '3000',
    },
  });
  const closing: Array<() => unknown> = [];
  api = await startReceiver({ after: (fn) => closing.push(fn) }, (request, _i, response) =>
    apiHandler(request, response),
  );
  tokens = await startReceiver({ after: (fn) => closing.push(fn) }, (request, _i, response) =>
    tokenHandler(request, response),
  );
  close = () => Promise.all(closing.map((fn) => fn()));
});
after(async () => {
  // The operator's client secret is never in hubgate's own words, its logs or the audit log.
  assert.ok(!h.logs().includes(CLIENT_SECRET), 'the client secret appeared in the logs');
  const problems = [
    ...h.responses().filter((r) => /content-type: application\/problem\+json/i.test(r)),
    ...ownAnswers,
  ];
  assert.ok(!problems.some((p) => p.includes(CLIENT_SECRET)), 'the client secret appeared in an error');
  const audit = await h.database.kysely.selectFrom('audit_log').selectAll().execute();
  assert.ok(!JSON.stringify(audit).includes(CLIENT_SECRET), 'the client secret appeared in the audit log');
  await close();
  await h.close();
});

async function makeProvider(overrides: Record<string, unknown> = {}) {
  const r = await h.request('POST', PROVIDERS, {
    token: h.platformToken,
    body: {
      key: `redx${++n}-${Date.now().toString(36)}`,
      name: 'Hostile API',
      authorizationUrl: 'https://idp.example/authorize',
      tokenUrl: tokens.url('/token'),
      apiBaseUrl: api.url('/v1'),
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      scopes: ['read'],
      grant: 'client_credentials',
      ...overrides,
    },
  });
  assert.equal(r.status, 201, `creating the provider answered ${r.status}: ${r.text}`);
  return r.body as { key: string; connectorKey: string };
}

/** A tenant with an OPERATOR key and a client-credentials connection to the hostile API under /v1. */
async function setUp() {
  const { tenant, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
  const provider = await makeProvider();
  const created = await h.request('POST', CONNECTIONS, {
    session,
    body: { connectorKey: provider.connectorKey, displayName: 'API' },
  });
  assert.equal(created.status, 201, `creating the connection answered ${created.status}: ${created.text}`);
  const connection = created.body as { id: string };
  const proxy = (path: string) => `${CONNECTIONS}/${connection.id}/proxy/${path}`;
  return { tenant, session, key, provider, connection, proxy };
}

interface RawAnswer {
  status: number;
  head: string;
  body: Buffer;
}

/** A request written byte for byte to hubgate's socket (fetch would normalize `..` and decode gzip). */
function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const { port } = new URL(h.baseUrl);
  const lines = [
    `${method} ${path} HTTP/1.1`,
    `host: 127.0.0.1:${port}`,
    'connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const at = all.indexOf('\r\n\r\n');
      const head = (at === -1 ? all : all.subarray(0, at)).toString('latin1');
      let body: Buffer = at === -1 ? Buffer.alloc(0) : all.subarray(at + 4);
      if (/transfer-encoding: chunked/i.test(head)) body = unchunked(body);
      if (/content-type: application\/problem\+json/i.test(head)) ownAnswers.push(body.toString('utf8'));
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), head, body });
    });
  });
}

function unchunked(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd === -1) break;
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

const headerOf = (head: string, name: string): string | undefined =>
  new RegExp(`^${name}: (.*)$`, 'im').exec(head)?.[1]?.trim();

describe('paths that climb under some reading of them: 400 validation_failed, nothing sent', () => {
  // FOUND: dot segments after /proxy/ were 404 (the router's rewrite of every dotted path), not the
  // 400 the docs promise; `%5c` (a backslash) and `..;` (which Tomcat-style servers read as `..`)
  // reached the provider.
  const climbing = [
    '../secret',
    'a/../../secret',
    '..',
    'a/.',
    'a/./b',
    '%2e%2e/secret',
    '%2E%2e/%2e./secret',
    '.%2e/secret',
    '..;/secret',
    'a/..;/..;/admin',
    '..;jsessionid=x/secret',
    '.;/secret',
    '%2e%2e;/secret',
    '%2e%2e%3b/secret',
    '..%3bx/secret',
    'a%5csecret',
    'a%5C..%5Cadmin',
    '%5c%5cevil.example/x',
    'a\\b',
    'a%2fb',
    '%252e%252e/secret',
    '%252e%252e%253b/secret',
    'a%255cb',
    'a%252fb',
    '%2e%2e%20/secret',
  ];
  for (const path of climbing) {
    test(`/proxy/${path}`, async () => {
      const { key, connection } = await setUp();
      apiHandler = (_r, res) => {
        res.end('ok');
      };
      const from = api.received.length;
      const r = await raw('GET', `${CONNECTIONS}/${connection.id}/proxy/${path}?q=1`, {
        authorization: `Bearer ${key.secret}`,
      });
      assert.equal(r.status, 400, `/proxy/${path} answered ${r.status}: ${r.body.toString()}`);
      assert.equal(JSON.parse(r.body.toString()).code, 'validation_failed', 'not validation_failed');
      assert.equal(
        api.received.length,
        from,
        `/proxy/${path} reached the API as ${api.received.slice(from).map((x) => x.url)}`,
      );
    });
  }

  test('the access gate still answers first: no credential is 401, another tenant’s connection is 404 after 400', async () => {
    const { connection } = await setUp();
    const other = await setUp();
    const anonymous = await raw('GET', `${CONNECTIONS}/${connection.id}/proxy/../secret`);
    assert.equal(anonymous.status, 401, `a dotted path without a credential answered ${anonymous.status}`);
    // Validation comes before the lookup (contract §3): a climbing path says so whoever's ID it names.
    const elsewhere = await raw('GET', `${CONNECTIONS}/${connection.id}/proxy/..;/secret`, {
      authorization: `Bearer ${other.key.secret}`,
    });
    assert.equal(elsewhere.status, 400, `another tenant's climbing path answered ${elsewhere.status}`);
  });

  test('dots and semicolons that climb nowhere pass on as sent', async () => {
    const { key, connection } = await setUp();
    apiHandler = (_r, res) => {
      res.end('ok');
    };
    for (const path of [
      'report.v1.json',
      'a/...',
      'v1.2/items',
      'a/..b',
      'b../c',
      'a;v=1/b',
      'x/%2e%2e%2e',
    ]) {
      const from = api.received.length;
      const r = await raw('GET', `${CONNECTIONS}/${connection.id}/proxy/${path}`, {
        authorization: `Bearer ${key.secret}`,
      });
      assert.equal(r.status, 200, `/proxy/${path} answered ${r.status}: ${r.body.toString()}`);
      assert.equal(api.received[from]?.url, `/v1/${path}`, `/proxy/${path} was not passed on as sent`);
    }
  });
});

describe('a provider that answers 101 Switching Protocols', () => {
  // FOUND: a 101 without an Upgrade header made undici assert, and the 502 said
  // "could not be reached (ERR_ASSERTION)"; with one, "UND_ERR_SOCKET".
  test('is a 502 that says so in words, with no internals of the HTTP client', async (t) => {
    const noUpgrade = 'HTTP/1.1 101 Switching Protocols\r\n\r\n';
    const calls: Array<[string, string]> = [
      ['GET', noUpgrade],
      ['POST', noUpgrade],
      ['GET', 'HTTP/1.1 101 Switching Protocols\r\ncontent-length: 2\r\n\r\nok'],
      ['GET', 'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n'],
    ];
    let next = 0;
    const server = createNetServer((socket) => {
      const text = calls[next++]?.[1] ?? '';
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end(text));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => server.close(resolve)));
    const { port } = server.address() as { port: number };
    const { key, proxy, provider } = await setUp();
    const moved = await h.request('PATCH', `${PROVIDERS}/${provider.key}`, {
      token: h.platformToken,
      body: { apiBaseUrl: `http://127.0.0.1:${port}/v1` },
    });
    assert.equal(moved.status, 200, moved.text);
    for (const [method, sent] of calls) {
      const r = await h.request(method, proxy('socket'), {
        token: key.secret,
        ...(method === 'POST' ? { body: { a: 1 } } : {}),
      });
      const what = `${method} answered ${JSON.stringify(sent.slice(0, 60))}`;
      assert.equal(r.status, 502, `${what}: ${r.status} ${r.text}`);
      assert.equal(r.body.code, 'bad_gateway', `${what}: not bad_gateway`);
      assert.match(r.body.detail, /101 Switching Protocols/, `${what}: ${r.body.detail}`);
      assert.doesNotMatch(r.body.detail, /ERR_|UND_|assert/i, `${what}: ${r.body.detail}`);
    }
    assert.equal(next, calls.length, 'a call was sent more than once');
  });
});

describe('a token endpoint that answers 101 Switching Protocols', () => {
  // FOUND: the token call's words were the HTTP client's codes: "could not be reached (ERR_ASSERTION)".
  test('the 409 of creating a connection says so in words, with no internals of the HTTP client', async (t) => {
    const server = createNetServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end('HTTP/1.1 101 Switching Protocols\r\n\r\n'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => server.close(resolve)));
    const { port } = server.address() as { port: number };
    const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const provider = await makeProvider({ tokenUrl: `http://127.0.0.1:${port}/token` });
    const r = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: provider.connectorKey, displayName: 'upgrade' },
    });
    assert.equal(r.status, 409, r.text);
    assert.match(r.body.detail, /101 Switching Protocols/, `the 409 says: ${r.body.detail}`);
    assert.doesNotMatch(r.body.detail, /ERR_|UND_|assert/i, `the 409 says: ${r.body.detail}`);
  });
});

describe('a provider that compresses its answer', () => {
  // FOUND: an answer with Content-Encoding: gzip was counted compressed against the 10 MiB cap
  // (11 KiB of gzip holding 11 MiB passed), and passed back compressed without its
  // Content-Encoding: a client got gzip bytes labelled application/json.
  const bomb = Buffer.alloc(11 * 1024 * 1024, 0x7b);
  const cases: Array<[string, (b: Buffer) => Buffer]> = [
    ['gzip', (b) => gzipSync(b)],
    ['x-gzip', (b) => gzipSync(b)],
    ['deflate', (b) => deflateSync(b)],
    ['br', (b) => brotliCompressSync(b)],
    ['gzip, br', (b) => brotliCompressSync(gzipSync(b))],
  ];
  for (const [coding, encode] of cases) {
    test(`${coding}: the decoded bytes count against 10 MiB, and the answer goes back decoded, labelled honestly`, async () => {
      const { key, connection } = await setUp();
      const path = `${CONNECTIONS}/${connection.id}/proxy/`;
      const json = Buffer.from(JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => i) }));
      apiHandler = (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
        res.end(encode(json));
      };
      const small = await raw('GET', `${path}small`, { authorization: `Bearer ${key.secret}` });
      assert.equal(small.status, 200, small.body.toString());
      assert.equal(headerOf(small.head, 'content-encoding'), undefined, 'a Content-Encoding came back');
      assert.deepEqual(small.body.toString(), json.toString(), 'the answer did not come back decoded');

      const packed = encode(bomb);
      assert.ok(packed.length < 1024 * 1024, 'the bomb is small on the wire');
      apiHandler = (_r, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
        res.end(packed);
      };
      const big = await raw('GET', `${path}bomb`, { authorization: `Bearer ${key.secret}` });
      assert.equal(
        big.status,
        502,
        `${packed.length} bytes of ${coding} holding 11 MiB answered ${big.status}`,
      );
      assert.match(JSON.parse(big.body.toString()).detail, /larger than 10 MiB/, 'the 502 does not say why');
    });
  }

  test('a compressed answer that drips past DELIVERY_TIMEOUT_MS is a timeout, not a body that does not decode', async () => {
    const { key, proxy } = await setUp();
    const packed = gzipSync(Buffer.alloc(100_000, 0x61));
    const timers: NodeJS.Timeout[] = [];
    apiHandler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      let at = 20;
      res.write(packed.subarray(0, at));
      const drip = setInterval(() => res.write(packed.subarray(at, ++at)), 300);
      timers.push(drip);
      res.on('close', () => clearInterval(drip));
    };
    const r = await h.request('GET', proxy('drip'), { token: key.secret });
    timers.forEach(clearInterval);
    assert.equal(r.status, 502, r.text);
    assert.match(r.body.detail, /DELIVERY_TIMEOUT_MS/, `a dripping gzip answer: ${r.body.detail}`);
  });

  test('a coding hubgate does not read, a body that is not what its coding says: 502 in words; an empty one is empty', async () => {
    const { key, proxy } = await setUp();
    apiHandler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'compress' });
      res.end('whatever');
    };
    const unknown = await h.request('GET', proxy('lzw'), { token: key.secret });
    assert.equal(unknown.status, 502, unknown.text);
    assert.match(
      unknown.body.detail,
      /could not be decoded \(the content coding "compress"\)/,
      'the 502 does not name the coding',
    );

    apiHandler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end('{"not":"gzip"}');
    };
    const corrupt = await h.request('GET', proxy('corrupt'), { token: key.secret });
    assert.equal(corrupt.status, 502, corrupt.text);
    assert.match(corrupt.body.detail, /could not be decoded/, 'the 502 does not say why');

    apiHandler = (_r, res) => {
      res.writeHead(204, { 'content-encoding': 'gzip' });
      res.end();
    };
    const empty = await h.request('DELETE', proxy('gone'), { token: key.secret });
    assert.equal(empty.status, 204, empty.text);
  });
});

describe('a provider whose error words repeat the client secret or a token', () => {
  /** Every form of what hubgate sent the token endpoint, as a hostile provider would echo it. */
  const echoOf = (request: Received): string => {
    const form = new URLSearchParams(request.body);
    return [
      `client_secret=${CLIENT_SECRET}`,
      `auth=${String(request.headers.authorization)}`,
      `raw=${request.body}`,
      ...[...form.entries()].map(([k, v]) => `${k}:${v}`),
    ].join(' ');
  };
  const refusing =
    (status: number, error: string): Handler =>
    (request, res) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error, error_description: echoOf(request) }));
    };
  const secretsIn = (text: string, request: Received | undefined): string[] => {
    const sent = [CLIENT_SECRET, String(request?.headers.authorization ?? '').slice(6)];
    for (const [name, value] of new URLSearchParams(request?.body ?? '')) {
      if (['code', 'code_verifier', 'refresh_token'].includes(name)) sent.push(value);
    }
    return sent.filter((secret) => secret.length > 0 && text.includes(secret));
  };

  // FOUND: the provider's error_description came back in words as it was: the 409 of a create,
  // the 502 of a refresh and the callback's authorizationError carried the operator's client secret.
  test('creating a client-credentials connection: the 409 says why without the secret', async () => {
    const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const provider = await makeProvider();
    for (const [status, error] of [
      [401, 'invalid_client'],
      [400, CLIENT_SECRET],
    ] as const) {
      tokenHandler = refusing(status, error);
      const from = tokens.received.length;
      const r = await h.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: provider.connectorKey, displayName: 'refused' },
      });
      assert.equal(r.status, 409, r.text);
      assert.match(r.body.detail, /\[redacted\]/, 'the provider’s words are not there at all');
      assert.deepEqual(secretsIn(r.text, tokens.received[from]), [], `the 409 repeats a secret: ${r.text}`);
    }
  });

  test('a refresh the provider refuses in words: the proxy’s 502 says why without the secret', async () => {
    tokenHandler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Within a minute of its expiry: every call refreshes it first.
      res.end(JSON.stringify({ access_token: `tok-${++n}`, token_type: 'Bearer', expires_in: 30 }));
    };
    const { key, proxy } = await setUp();
    tokenHandler = refusing(503, 'temporarily_unavailable');
    const from = tokens.received.length;
    const r = await h.request('GET', proxy('items'), { token: key.secret });
    assert.equal(r.status, 502, r.text);
    assert.match(
      r.body.detail,
      /temporarily_unavailable.*\[redacted\]/,
      'the provider’s words are not there',
    );
    assert.deepEqual(secretsIn(r.text, tokens.received[from]), [], `the 502 repeats a secret: ${r.text}`);
  });

  test('the callback’s words on a provider’s refusal (error_description on the redirect) do not hold the secret', async () => {
    const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const provider = await makeProvider({ grant: 'authorization_code' });
    const created = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: provider.connectorKey, displayName: 'code' },
    });
    assert.equal(created.status, 201, created.text);
    const started = await h.request('POST', `${CONNECTIONS}/${created.body.id}/authorize`, { session });
    assert.equal(started.status, 200, started.text);
    const state = new URL(started.body.authorizationUrl).searchParams.get('state') ?? '';
    const description = encodeURIComponent(`client ${CLIENT_ID} with secret ${CLIENT_SECRET} may not`);
    const r = await h.request(
      'GET',
      `${CALLBACK}?error=unauthorized_client&error_description=${description}&state=${encodeURIComponent(state)}`,
      { session },
    );
    assert.equal(r.status, 303, r.text);
    const words = new URL(r.headers.get('location') ?? '', h.baseUrl).searchParams.get('authorizationError');
    assert.match(words ?? '', /unauthorized_client.*\[redacted\]/, `the page is told: ${words}`);
    assert.ok(
      !(r.headers.get('location') ?? '').includes(CLIENT_SECRET),
      `the page is told the secret: ${words}`,
    );
  });

  test('the callback’s words on a refused code exchange hold neither the secret, the code nor the verifier', async () => {
    tokenHandler = refusing(400, 'invalid_grant');
    const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
    const provider = await makeProvider({ grant: 'authorization_code' });
    const created = await h.request('POST', CONNECTIONS, {
      session,
      body: { connectorKey: provider.connectorKey, displayName: 'code' },
    });
    assert.equal(created.status, 201, created.text);
    const started = await h.request('POST', `${CONNECTIONS}/${created.body.id}/authorize`, { session });
    assert.equal(started.status, 200, started.text);
    const state = new URL(started.body.authorizationUrl).searchParams.get('state') ?? '';
    const from = tokens.received.length;
    const code = 'code-Of-The-Provider-1234567890';
    const r = await h.request('GET', `${CALLBACK}?code=${code}&state=${encodeURIComponent(state)}`, {
      session,
    });
    assert.equal(r.status, 303, r.text);
    const words = new URL(r.headers.get('location') ?? '', h.baseUrl).searchParams.get('authorizationError');
    assert.match(words ?? '', /invalid_grant.*\[redacted\]/, `the page is told: ${words}`);
    const sent = tokens.received[from];
    assert.ok(sent, 'the code was not exchanged');
    assert.deepEqual(secretsIn(r.headers.get('location') ?? '', sent), [], 'the page is told a secret');
    assert.deepEqual(secretsIn(words ?? '', sent), [], `the page is told a secret: ${words}`);
  });
});
