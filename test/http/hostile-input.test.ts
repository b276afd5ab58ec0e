import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { encodeCursor, encodePosition } from '../../src/http/pagination.js';
import { makeSignedInTenant, makeUser, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestResponse, type TestSession } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';

let h: Harness;
let session: TestSession;
let tenantId: string;
let connectionId: string;
let channelId: string;
before(async () => {
  h = await startHarness();
  const signedIn = await makeSignedInTenant(h);
  session = signedIn.session;
  tenantId = signedIn.tenant.id;
  connectionId = (await makeWebhookConnection(h, session, 'https://receiver.example.com/hook')).id;
  const channel = await h.request('POST', '/api/v1/platform/alerting/channels', {
    token: h.platformToken,
    body: { name: 'ops', kind: 'WEBHOOK', config: { url: 'https://alerts.example.com/hook' } },
  });
  assert.equal(channel.status, 201, channel.text);
  channelId = channel.body.id;
});
after(() => h.close());

function assertProblem(response: TestResponse, status: number, code: string, what: string): void {
  assert.equal(response.status, status, `${what}: ${response.text}`);
  assert.equal(response.body?.code, code, what);
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/, what);
  assert.ok(response.headers.get('x-request-id'), `${what}: no X-Request-Id`);
  assert.equal(response.body.requestId, response.headers.get('x-request-id'), what);
}

/** A raw HTTP/1.1 exchange, for what fetch would refuse or normalize (methods, dot segments). */
function rawRequest(head: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(h.baseUrl);
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`${head}\r\n\r\n`));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const [headers = '', body = ''] = text.split('\r\n\r\n');
      resolve({ status: Number(headers.split(' ')[1]), headers, body });
    });
  });
}

function assertRawProblem(
  response: { status: number; headers: string; body: string },
  status: number,
  what: string,
): void {
  assert.equal(response.status, status, `${what}: ${response.headers}\n${response.body}`);
  assert.match(response.headers, /content-type: application\/problem\+json/i, what);
  const id = /x-request-id: (\S+)/i.exec(response.headers)?.[1];
  assert.ok(id, `${what}: no X-Request-Id`);
  assert.equal(JSON.parse(response.body).requestId, id, what);
}

// A NUL, lone surrogates of both halves, and a surrogate pair cut in two.
const BAD_STRINGS = ['a\u0000b', '\ud800', 'x\udc00y', '\ud83d!'];

describe('text in bodies', () => {
  // Each row: a route, a credential, a valid body, and the fields of it to poison one at a time.
  const bodies = () => [
    {
      method: 'POST',
      path: '/api/v1/platform/tenants',
      auth: { token: h.platformToken },
      body: { name: 'fine', entitlements: ['integrations'] },
      fields: [['name'], ['entitlements', 0]],
    },
    {
      method: 'POST',
      path: '/api/v1/auth/login',
      auth: {},
      body: { email: 'someone@example.com', password: 'whatever password' },
      fields: [['email'], ['password']],
    },
    {
      method: 'POST',
      path: '/api/v1/company/api-keys',
      auth: { session },
      body: {
        name: 'k',
        scopes: ['integrations:READER'],
        expiresAt: new Date(Date.now() + 864e5).toISOString(),
      },
      fields: [['name'], ['scopes', 0]],
    },
    {
      method: 'POST',
      path: '/api/v1/integrations/connections',
      auth: { session },
      body: { connectorKey: 'webhook', displayName: 'd', url: 'https://example.com/x' },
      fields: [['displayName'], ['url'], ['connectorKey']],
    },
    {
      method: 'POST',
      path: '/api/v1/integrations/events',
      auth: { session },
      body: { type: 'order.created', data: { nested: { deeper: 'ok' }, list: ['ok', { inList: 'ok' }] } },
      fields: [['type'], ['data', 'nested', 'deeper'], ['data', 'list', 0], ['data', 'list', 1, 'inList']],
    },
    {
      method: 'PATCH',
      path: `/api/v1/platform/alerting/channels/${channelId}`,
      auth: { token: h.platformToken },
      body: { name: 'renamed' },
      fields: [['name']],
    },
    {
      method: 'PUT',
      path: `/api/v1/platform/tenants/${tenantId}/users`.replace('/users', '/entitlements'),
      auth: { token: h.platformToken },
      body: { entitlements: ['integrations', 'integration_hub'] },
      fields: [['entitlements', 1]],
    },
  ];

  function poisoned(body: unknown, field: (string | number)[], value: string): unknown {
    const copy = structuredClone(body) as Record<string | number, unknown>;
    let at = copy;
    for (const key of field.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
    at[field[field.length - 1] as string | number] = value;
    return copy;
  }

  test('a NUL or an unpaired surrogate in any string field is 400 validation_failed naming the field', async () => {
    for (const row of bodies()) {
      for (const field of row.fields) {
        for (const bad of BAD_STRINGS) {
          const what = `${row.method} ${row.path} ${field.join('.')} ${JSON.stringify(bad)}`;
          // JSON.stringify writes a lone surrogate as the escape \udXXX: the JSON escape form.
          const response = await h.request(row.method, row.path, {
            ...row.auth,
            body: poisoned(row.body, field, bad),
          });
          assertProblem(response, 400, 'validation_failed', what);
          assert.equal(response.body.errors?.[0]?.path, field.join('.'), what);
        }
      }
    }
  });

  test('raw bytes that are not UTF-8 (an encoded surrogate, a cut sequence) are 400 naming the field', async () => {
    for (const bytes of [[0xed, 0xa0, 0x80], [0xc3], [0xff]]) {
      const raw = Buffer.concat([
        Buffer.from('{"entitlements":["integrations"],"name":"a'),
        Buffer.from(bytes),
        Buffer.from('"}'),
      ]);
      const response = await h.request('POST', '/api/v1/platform/tenants', {
        token: h.platformToken,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      assertProblem(response, 400, 'validation_failed', `bytes ${bytes.join(',')}`);
      assert.equal(
        response.body.errors?.[0]?.path,
        'name',
        `bytes ${bytes.join(',')}: the error does not name the name field`,
      );
    }
  });

  test('object keys are text too: a bad key is 400, never stored', async () => {
    for (const bad of BAD_STRINGS) {
      const response = await h.request('POST', '/api/v1/integrations/events', {
        session,
        body: { type: 'order.created', data: { outer: { [bad]: 1 } } },
      });
      assertProblem(response, 400, 'validation_failed', `key ${JSON.stringify(bad)}`);
      assert.match(
        response.body.errors?.[0]?.path,
        /^data\.outer\./,
        `key ${JSON.stringify(bad)}: the error does not name the bad key's place in data`,
      );
    }
  });

  test('the refusal says what is wrong: U+0000, an unpaired surrogate, or bytes that are not UTF-8', async () => {
    const expected = (bad: string) =>
      bad.includes('\u0000')
        ? 'must not contain U+0000'
        : 'must not contain an unpaired surrogate (half of a UTF-16 pair alone)';
    for (const bad of BAD_STRINGS) {
      const what = JSON.stringify(bad);
      const asValue = await h.request('POST', '/api/v1/platform/tenants', {
        token: h.platformToken,
        body: { name: bad, entitlements: [] },
      });
      assertProblem(asValue, 400, 'validation_failed', `value ${what}`);
      assert.deepEqual(
        asValue.body.errors,
        [{ path: 'name', message: expected(bad) }],
        `value ${what}: the refusal does not say what is wrong with the text`,
      );
      assert.equal(asValue.body.detail, `name: ${expected(bad)}`, `value ${what}: the detail says otherwise`);
      const asKey = await h.request('POST', '/api/v1/integrations/events', {
        session,
        body: { type: 'order.created', data: { [bad]: 1 } },
      });
      assertProblem(asKey, 400, 'validation_failed', `key ${what}`);
      assert.equal(
        asKey.body.errors?.[0]?.message,
        expected(bad),
        `key ${what}: the refusal does not say what is wrong with the key`,
      );
    }
    const query = await h.request('GET', '/api/v1/platform/tenants?cursor=a%00b', { token: h.platformToken });
    assert.equal(
      query.body.errors?.[0]?.message,
      'must not contain U+0000',
      'a NUL in a query string is refused with another message',
    );
    const bytes = await h.request('POST', '/api/v1/platform/tenants', {
      token: h.platformToken,
      rawBody: Buffer.concat([
        Buffer.from('{"entitlements":[],"name":"a'),
        Buffer.from([0xed, 0xa0, 0x80, 0x22, 0x7d]),
      ]),
      headers: { 'content-type': 'application/json' },
    });
    assert.deepEqual(
      bytes.body.errors,
      [{ path: 'name', message: 'is not valid UTF-8' }],
      'bytes that are not UTF-8 (an encoded surrogate) are refused with another message',
    );
  });

  test('sign-in with a NUL gives one 400 whether or not the account exists', async () => {
    const user = await makeUser(h, tenantId);
    const answers = [];
    for (const email of [user.email, 'nobody-here@example.com']) {
      const response = await h.request('POST', '/api/v1/auth/login', {
        body: { email: `${email}\u0000`, password: user.password },
      });
      assertProblem(response, 400, 'validation_failed', email);
      answers.push({ ...response.body, requestId: undefined });
    }
    assert.deepEqual(
      answers[0],
      answers[1],
      'a NUL in the e-mail is answered differently for an existing and an unknown account',
    );
  });
});

describe('text in query strings and paths', () => {
  test('a NUL or an unpaired surrogate in a query string value is 400 naming the field', async () => {
    const lists = [
      { path: '/api/v1/platform/tenants', auth: { token: h.platformToken } },
      { path: '/api/v1/integrations/connections', auth: { session } },
      { path: `/api/v1/integrations/connections/${connectionId}/events`, auth: { session } },
      { path: '/api/v1/company/audit-log', auth: { session } },
    ];
    for (const list of lists) {
      for (const encoded of ['%00', 'a%00b', '%ED%A0%80']) {
        const response = await h.request('GET', `${list.path}?cursor=${encoded}`, list.auth);
        assertProblem(response, 400, 'validation_failed', `${list.path} cursor ${encoded}`);
        assert.equal(
          response.body.errors?.[0]?.path,
          'querystring.cursor',
          `${list.path} cursor ${encoded}: the error does not name the cursor`,
        );
      }
    }
    const status = await h.request(
      'GET',
      `/api/v1/integrations/connections/${connectionId}/events?status=%00`,
      {
        session,
      },
    );
    assertProblem(status, 400, 'validation_failed', 'status');
  });

  test('a NUL or an unpaired surrogate in a path parameter is 400 naming it, on every kind of route', async () => {
    const routes = [
      {
        method: 'GET',
        path: (id: string) => `/api/v1/platform/tenants/${id}`,
        auth: { token: h.platformToken },
      },
      { method: 'GET', path: (id: string) => `/api/v1/integrations/connections/${id}`, auth: { session } },
      {
        method: 'POST',
        path: (id: string) => `/api/v1/integrations/connections/${id}/revoke`,
        auth: { session },
      },
      {
        method: 'PUT',
        path: (id: string) => `/api/v1/integrations/connections/${id}/credentials`,
        auth: { session },
      },
      {
        method: 'GET',
        path: (id: string) => `/api/v1/integrations/connections/${id}/events`,
        auth: { session },
      },
      {
        method: 'POST',
        path: (id: string) => `/api/v1/integrations/connections/${connectionId}/events/${id}/retry`,
        auth: { session },
        param: 'deliveryId',
      },
      { method: 'POST', path: (id: string) => `/api/v1/company/api-keys/${id}/rotate`, auth: { session } },
      { method: 'DELETE', path: (id: string) => `/api/v1/company/api-keys/${id}`, auth: { session } },
      {
        method: 'DELETE',
        path: (id: string) => `/api/v1/platform/alerting/channels/${id}`,
        auth: { token: h.platformToken },
      },
      {
        method: 'POST',
        path: (id: string) => `/api/v1/platform/tenants/${id}/users`,
        auth: { token: h.platformToken },
        body: { email: 'x@example.com', role: 'COMPANY_IT_ADMIN', password: 'correct horse battery staple' },
      },
    ];
    for (const route of routes) {
      for (const encoded of ['con_%00', '%00', 'ten_a%ED%A0%80']) {
        const what = `${route.method} ${route.path(encoded)}`;
        const response = await h.request(route.method, route.path(encoded), {
          ...route.auth,
          ...(route.body ? { body: route.body } : {}),
        });
        assertProblem(response, 400, 'validation_failed', what);
        if (!encoded.includes('%ED'))
          assert.equal(
            response.body.errors?.[0]?.path,
            `params.${route.param ?? 'id'}`,
            `${what}: the error does not name the path parameter`,
          );
      }
    }
  });
});

describe('lists: limit and cursor', () => {
  // Every list of the service, with the ID prefix of the items it pages through.
  // Every list of the service, with the ID prefix of the items it pages through and the list its
  // cursors are signed for (src/http/pagination.ts): its name and its owners.
  const lists = () => [
    { path: '/api/v1/platform/tenants', prefix: 'ten', auth: { token: h.platformToken }, list: ['tenants'] },
    {
      path: '/api/v1/platform/alerting/channels',
      prefix: 'chn',
      auth: { token: h.platformToken },
      list: ['alert-channels'],
    },
    {
      path: '/api/v1/integrations/connections',
      prefix: 'con',
      auth: { session },
      list: ['connections', tenantId],
    },
    { path: '/api/v1/company/api-keys', prefix: 'key', auth: { session }, list: ['api-keys', tenantId] },
    {
      path: `/api/v1/integrations/connections/${connectionId}/events`,
      prefix: 'dlv',
      auth: { session },
      list: ['connection-events', tenantId, connectionId],
    },
    { path: '/api/v1/company/audit-log', prefix: 'aud', auth: { session }, list: ['audit-log', tenantId] },
  ];
  const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  /**
   * A cursor in the service's form, signed with its key for `list`, holding `at` and `id` as written:
   * what refuses one that holds a time or an ID the service never writes is the position, not the
   * signature.
   */
  const signed = (at: string, id: string, list: readonly string[]) =>
    encodePosition([at, id], { keyring: h.keyring, list });
  const position = (at: string, prefix: string, list: readonly string[]) =>
    signed(at, `${prefix}_AAAAAAAAAAAAAAAAAAAAAA`, list);

  test('limit accepts decimal digits only', async () => {
    for (const list of lists()) {
      for (const limit of [
        '0x10',
        '1e1',
        '%205',
        '5%20',
        '%2B5',
        '5.0',
        '',
        '-1',
        '0',
        '101',
        '0b1',
        'Infinity',
      ]) {
        const response = await h.request('GET', `${list.path}?limit=${limit}`, list.auth);
        assertProblem(response, 400, 'validation_failed', `${list.path} limit=${limit}`);
        assert.equal(
          response.body.errors?.[0]?.path,
          'querystring.limit',
          `${list.path} limit=${limit}: the error does not name the limit`,
        );
      }
      const fine = await h.request('GET', `${list.path}?limit=5`, list.auth);
      assert.equal(fine.status, 200, fine.text);
    }
  });

  test('a cursor that decodes to an impossible position is 400 validation_failed', async () => {
    const impossible = [
      cursor(['-010000-01-01T00:00:00.000Z', 'ten_AAAAAAAAAAAAAAAAAAAAAA']),
      cursor(['+275760-09-13T00:00:00.000Z', 'ten_AAAAAAAAAAAAAAAAAAAAAA']),
      cursor(['0000-01-01T00:00:00.000Z', 'ten_AAAAAAAAAAAAAAAAAAAAAA']),
      cursor(['2020-02-30T00:00:00.000Z', 'ten_AAAAAAAAAAAAAAAAAAAAAA']),
      cursor(['1', 'ten_AAAAAAAAAAAAAAAAAAAAAA']),
      cursor(['2020-01-01T00:00:00.000Z', 'x\u0000']),
      cursor(['2020-01-01T00:00:00.000Z', '\ud800']),
      cursor(['2020-01-01T00:00:00.000Z', '']),
      cursor(['2020-01-01T00:00:00.000Z', 7]),
      cursor({ createdAt: '2020-01-01T00:00:00.000Z' }),
      'not base64 at all!',
    ];
    for (const list of lists()) {
      for (const value of impossible) {
        const response = await h.request(
          'GET',
          `${list.path}?cursor=${encodeURIComponent(value)}`,
          list.auth,
        );
        assertProblem(response, 400, 'validation_failed', `${list.path} cursor ${value}`);
        assert.equal(
          response.body.errors?.[0]?.path,
          'querystring.cursor',
          `${list.path} cursor ${value}: the error does not name the cursor`,
        );
      }
    }
  });

  test('a cursor is exactly what the service wrote: no padding, spaces, trailing bytes or other spelling', async () => {
    for (const list of lists()) {
      const valid = position('2020-01-01T00:00:00.000Z', list.prefix, list.list);
      const fine = await h.request('GET', `${list.path}?cursor=${valid}`, list.auth);
      assert.equal(fine.status, 200, `${list.path}: ${fine.text}`);
      const json = Buffer.from(valid, 'base64url').toString();
      for (const variant of [
        `${valid}!!`,
        `%20${valid}`,
        `${valid}%20`,
        `${valid}=`,
        `${valid}%3D%3D`,
        `${valid}==`,
        `${valid}AA`,
        Buffer.from(` ${json}`).toString('base64url'),
        Buffer.from(json.replace('","', '", "')).toString('base64url'),
        Buffer.from(json.replace('_A', '\\u005fA')).toString('base64url'),
      ]) {
        const response = await h.request('GET', `${list.path}?cursor=${variant}`, list.auth);
        assertProblem(response, 400, 'validation_failed', `${list.path} cursor ${variant}`);
        assert.equal(
          response.body.errors?.[0]?.path,
          'querystring.cursor',
          `${list.path} cursor ${variant}: the error does not name the cursor`,
        );
      }
    }
  });

  test('a cursor holds an ID of the list it is used on and a time in years 1970 to 9999', async () => {
    for (const list of lists()) {
      const others = lists()
        .map((l) => l.prefix)
        .filter((p) => p !== list.prefix);
      for (const value of [
        ...others.map((p) => position('2020-01-01T00:00:00.000Z', p, list.list)),
        position('0001-01-01T00:00:00.000Z', list.prefix, list.list),
        position('1969-12-31T23:59:59.999Z', list.prefix, list.list),
        position('2020-01-01T00:00:00Z', list.prefix, list.list),
        position('2020-01-01T00:00:00.000+00:00', list.prefix, list.list),
        position('2020-01-01t00:00:00.000z', list.prefix, list.list),
      ]) {
        const response = await h.request('GET', `${list.path}?cursor=${value}`, list.auth);
        const decoded = Buffer.from(value, 'base64url').toString();
        assertProblem(response, 400, 'validation_failed', `${list.path} cursor ${decoded}`);
        assert.equal(
          response.body.errors?.[0]?.path,
          'querystring.cursor',
          `${list.path} cursor ${decoded}: the error does not name the cursor`,
        );
      }
      // The ends of the range are positions: before everything, and after everything.
      for (const at of ['1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
        const response = await h.request(
          'GET',
          `${list.path}?cursor=${position(at, list.prefix, list.list)}`,
          list.auth,
        );
        assert.equal(response.status, 200, `${list.path} ${at}: ${response.text}`);
      }
    }
  });

  test('a bad cursor is 400 before the list owner is looked up (validation before 404, docs/api/errors.md)', async () => {
    const unknownId = 'con_AAAAAAAAAAAAAAAAAAAAAA';
    const unknown = `/api/v1/integrations/connections/${unknownId}/events`;
    const itsList = ['connection-events', tenantId, unknownId];
    const response = await h.request(
      'GET',
      `${unknown}?cursor=${position('2020-01-01T00:00:00.000Z', 'con', itsList)}`,
      {
        session,
      },
    );
    assertProblem(response, 400, 'validation_failed', unknown);
    assert.equal(
      response.body.errors?.[0]?.path,
      'querystring.cursor',
      'a bad cursor on an unknown connection: the error does not name the cursor',
    );
    const fine = await h.request(
      'GET',
      `${unknown}?cursor=${position('2020-01-01T00:00:00.000Z', 'dlv', itsList)}`,
      { session },
    );
    assertProblem(fine, 404, 'not_found', unknown);
  });

  test("another tenant's cursor is refused: a cursor is valid only on the list that made it", async () => {
    const other = await makeSignedInTenant(h);
    const ours = new Set<string>();
    for (const url of ['https://one.example.com/hook', 'https://two.example.com/hook']) {
      ours.add((await makeWebhookConnection(h, other.session, url)).id);
    }
    const page = await h.request('GET', '/api/v1/integrations/connections?limit=1', {
      session: other.session,
    });
    assert.equal(page.status, 200, page.text);
    assert.ok(page.body.nextCursor, "the other tenant's first page of one offers no next page");
    const theirs = await h.request('GET', `/api/v1/integrations/connections?cursor=${page.body.nextCursor}`, {
      session,
    });
    assertProblem(theirs, 400, 'validation_failed', "another tenant's cursor");
    assert.equal(theirs.body.errors?.[0]?.path, 'querystring.cursor', 'the error does not name the cursor');
    // Their own cursor still reads their next page.
    const next = await h.request('GET', `/api/v1/integrations/connections?cursor=${page.body.nextCursor}`, {
      session: other.session,
    });
    assert.equal(next.status, 200, next.text);
    assert.ok(
      next.body.data.every((item: { id: string }) => ours.has(item.id)),
      'their next page lists what is not theirs',
    );
  });

  test('a forged cursor is refused on every list: one in the service format, with any signature but its own', async () => {
    for (const list of lists()) {
      const id = `${list.prefix}_AAAAAAAAAAAAAAAAAAAAAA`;
      const genuine = position('2020-01-01T00:00:00.000Z', list.prefix, list.list);
      const [, , tag = ''] = JSON.parse(Buffer.from(genuine, 'base64url').toString()) as string[];
      const flipped = `${tag.slice(0, -1)}${tag.endsWith('A') ? 'B' : 'A'}`;
      for (const [what, value] of [
        ['no signature (the format before signing)', cursor(['2020-01-01T00:00:00.000Z', id])],
        ['a made-up signature', cursor(['2020-01-01T00:00:00.000Z', id, 'A'.repeat(22)])],
        ['a signature with one character changed', cursor(['2020-01-01T00:00:00.000Z', id, flipped])],
        ["another position under this position's signature", cursor(['2021-01-01T00:00:00.000Z', id, tag])],
        ['a signature for another list', position('2020-01-01T00:00:00.000Z', list.prefix, ['other'])],
        [
          'a signature for the same list with a filter',
          encodeCursor(
            { createdAt: new Date('2020-01-01T00:00:00.000Z'), id },
            { keyring: h.keyring, list: list.list, filters: { status: 'failed' } },
          ),
        ],
      ] as const) {
        const response = await h.request('GET', `${list.path}?cursor=${value}`, list.auth);
        assertProblem(response, 400, 'validation_failed', `${list.path} with ${what}`);
        assert.equal(
          response.body.errors?.[0]?.path,
          'querystring.cursor',
          `${list.path} with ${what}: the error does not name the cursor`,
        );
      }
    }
  });

  test('lists ordered otherwise (event types by name, OAuth2 providers by key) sign their cursors too', async () => {
    const other = await makeSignedInTenant(h);
    for (const who of [session, other.session]) {
      for (const name of ['sign.a', 'sign.b', 'sign.c']) {
        const made = await h.request('POST', '/api/v1/integrations/event-types', {
          session: who,
          body: { name },
        });
        assert.equal(made.status, 201, made.text);
      }
    }
    for (const key of ['signed-a', 'signed-b']) {
      const made = await h.request('POST', '/api/v1/platform/oauth-providers', {
        token: h.platformToken,
        body: {
          key: `${key}-${tenantId.slice(-6).toLowerCase()}`,
          name: key,
          grant: 'client_credentials',
          tokenUrl: 'https://auth.example.com/token',
          apiBaseUrl: 'https://api.example.com/v1',
          clientId: 'c',
          clientSecret: 's',
        },
      });
      assert.equal(made.status, 201, made.text);
    }
    const types = '/api/v1/integrations/event-types';
    const theirs = await h.request('GET', `${types}?limit=1`, { session: other.session });
    assert.ok(theirs.body.nextCursor, "the other tenant's first page of event types offers no next page");
    const providers = '/api/v1/platform/oauth-providers';
    const first = await h.request('GET', `${providers}?limit=1`, { token: h.platformToken });
    assert.ok(first.body.nextCursor, 'the first page of providers offers no next page');
    const [at, key] = JSON.parse(Buffer.from(first.body.nextCursor, 'base64url').toString()) as string[];
    for (const [path, auth, value, what] of [
      [types, { session }, theirs.body.nextCursor, "another tenant's event types cursor"],
      [types, { session }, Buffer.from('sign.a').toString('base64url'), 'a name written by the client'],
      [types, { session }, cursor(['sign.a', 'A'.repeat(22)]), 'a name with a made-up signature'],
      [providers, { token: h.platformToken }, cursor([at, key]), 'a provider position without a signature'],
      [providers, { token: h.platformToken }, cursor([at, key, 'A'.repeat(22)]), 'a made-up signature'],
      [providers, { token: h.platformToken }, theirs.body.nextCursor, 'an event types cursor'],
    ] as const) {
      const response = await h.request('GET', `${path}?cursor=${value}`, auth);
      assertProblem(response, 400, 'validation_failed', `${path} with ${what}`);
      assert.equal(response.body.errors?.[0]?.path, 'querystring.cursor', `${what}: the cursor is not named`);
    }
    const next = await h.request('GET', `${types}?limit=1&cursor=${theirs.body.nextCursor}`, {
      session: other.session,
    });
    assert.equal(next.status, 200, next.text);
    const more = await h.request('GET', `${providers}?limit=1&cursor=${first.body.nextCursor}`, {
      token: h.platformToken,
    });
    assert.equal(more.status, 200, more.text);
  });

  test('a cursor from a page still reads the next page', async () => {
    for (let i = 0; i < 3; i++) {
      await h.request('POST', '/api/v1/platform/tenants', {
        token: h.platformToken,
        body: { name: `page ${i}` },
      });
    }
    const first = await h.request('GET', '/api/v1/platform/tenants?limit=1', { token: h.platformToken });
    assert.equal(first.status, 200, 'listing tenants fails');
    const next = await h.request('GET', `/api/v1/platform/tenants?limit=1&cursor=${first.body.nextCursor}`, {
      token: h.platformToken,
    });
    assert.equal(next.status, 200, next.text);
    assert.notEqual(
      next.body.data[0].id,
      first.body.data[0].id,
      'the cursor from the first page reads the first page again',
    );
  });
});

describe('bodies without a JSON value', () => {
  test("whitespace alone, JSON's or any other Unicode space, is invalid_json; only zero bytes are no body", async () => {
    const { id } = await makeWebhookConnection(h, session, 'https://blank.example.com/hook');
    const pause = `/api/v1/integrations/connections/${id}/pause`;
    const blanks: Array<[string, string]> = [
      ['a vertical tab', '\x0b'],
      ['a form feed', '\x0c'],
      ['a no-break space', '\u00a0'],
      ['a byte order mark', '\ufeff'],
      ['an em space', '\u2003'],
      ['an ideographic space', '\u3000'],
      ['a line separator', '\u2028'],
      ['a BOM and a no-break space around a newline', '\ufeff\n\u00a0'],
      ["JSON's own whitespace, with no value", ' \t\r\n'],
    ];
    for (const [what, text] of blanks) {
      const response = await h.request('POST', pause, {
        session,
        rawBody: Buffer.from(text, 'utf8'),
        headers: { 'content-type': 'application/json' },
      });
      assertProblem(response, 400, 'invalid_json', `a body of ${what}`);
    }
    const still = await h.request('GET', `/api/v1/integrations/connections/${id}`, { session });
    assert.equal(still.body.status, 'active', 'a body without a JSON value paused the connection');
    const empty = await h.request('POST', pause, {
      session,
      rawBody: Buffer.alloc(0),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(empty.status, 200, `a zero-byte body is no body: ${empty.text}`);
    assert.equal(empty.body.status, 'paused', 'a zero-byte body did not pause the connection');
  });
});

describe('prototype keys', () => {
  // Each row: a route, a credential, the raw body, and the field the 400 must name.
  const cases = () => [
    {
      path: '/api/v1/auth/login',
      auth: {},
      raw: '{"email":"a@b.c","password":"x","__proto__":{"x":1}}',
      field: '__proto__',
    },
    {
      path: '/api/v1/platform/tenants',
      auth: { token: h.platformToken },
      raw: '{"name":"y","\\u005f_proto__":{"polluted":true}}',
      field: '__proto__',
    },
    {
      path: '/api/v1/integrations/events',
      auth: { session },
      raw: '{"type":"order.created","data":{"a":{"__proto__":{"polluted":true}}}}',
      field: 'data.a.__proto__',
    },
    {
      path: '/api/v1/integrations/events',
      auth: { session },
      raw: '{"type":"order.created","data":{"list":[1,{"__proto__":null}]}}',
      field: 'data.list.1.__proto__',
    },
    {
      path: '/api/v1/integrations/events',
      auth: { session },
      raw: '{"type":"order.created","data":{"a\\u0000":{"__proto__":1}}}',
      field: 'data.a\uFFFD.__proto__',
    },
    {
      path: '/api/v1/integrations/events',
      auth: { session },
      raw: '{"type":"order.created","data":{"constructor":{"prototype":{"polluted":true}}}}',
      field: 'data.constructor.prototype',
    },
    {
      path: '/api/v1/platform/tenants',
      auth: { token: h.platformToken },
      raw: '{"name":"y","constructor":{"prototype":{"polluted":true}}}',
      field: 'constructor.prototype',
    },
  ];

  test('a __proto__ or constructor.prototype key is 400 validation_failed naming it, at any depth', async () => {
    const tenants = async () => (await h.database.kysely.selectFrom('tenants').select('id').execute()).length;
    const before = await tenants();
    for (const c of cases()) {
      const response = await h.request('POST', c.path, {
        ...c.auth,
        rawBody: c.raw,
        headers: { 'content-type': 'application/json' },
      });
      assertProblem(response, 400, 'validation_failed', `${c.path} ${c.raw}`);
      assert.deepEqual(response.body.errors, [{ path: c.field, message: 'is not allowed' }], c.raw);
    }
    assert.equal(await tenants(), before, 'a tenant was created');
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype polluted');
  });

  test('the same words as values, and a constructor key without a prototype, are plain data', async () => {
    const response = await h.request('POST', '/api/v1/integrations/events', {
      session,
      rawBody: '{"type":"order.created","data":{"note":"__proto__","constructor":{"name":"prototype"}}}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 202, response.text);
  });

  test('JSON that does not parse is still invalid_json, whatever keys it holds', async () => {
    const response = await h.request('POST', '/api/v1/platform/tenants', {
      token: h.platformToken,
      rawBody: '{"__proto__":{"x":1},"name":"y"',
      headers: { 'content-type': 'application/json' },
    });
    assertProblem(response, 400, 'invalid_json', 'unterminated');
  });
});

describe('nesting', () => {
  const nested = (levels: number): unknown => {
    let value: unknown = { leaf: true };
    for (let i = 1; i < levels; i++) value = { a: value };
    return value;
  };

  test('event data nests at most 64 levels', async () => {
    const fine = await h.request('POST', '/api/v1/integrations/events', {
      session,
      body: { type: 'order.created', data: nested(64) },
    });
    assert.equal(fine.status, 202, fine.text);
    for (const levels of [65, 100, 200, 5_000]) {
      // Written out by hand: JSON.stringify itself overflows the stack on the deepest.
      const data = `${'{"a":'.repeat(levels - 1)}{"leaf":true}${'}'.repeat(levels - 1)}`;
      const response = await h.request('POST', '/api/v1/integrations/events', {
        session,
        rawBody: `{"type":"order.created","data":${data}}`,
        headers: { 'content-type': 'application/json' },
      });
      assertProblem(response, 400, 'validation_failed', `${levels} levels`);
      assert.equal(response.body.errors?.[0]?.path, 'data', `${levels} levels: the error does not name data`);
    }
  });

  test('every refusal for nesting names the one limit, 64 levels, however deep and wherever', async () => {
    const message = 'nests deeper than 64 levels';
    for (const levels of [65, 129, 5_000]) {
      const data = `${'{"a":'.repeat(levels - 1)}{"leaf":true}${'}'.repeat(levels - 1)}`;
      const alone = await h.request('POST', '/api/v1/integrations/events', {
        session,
        rawBody: `{"type":"order.created","data":${data}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.deepEqual(
        alone.body.errors,
        [{ path: 'data', message }],
        `event data ${levels} levels deep is refused with another limit`,
      );
      const tenant = await h.request('POST', '/api/v1/platform/tenants', {
        token: h.platformToken,
        rawBody: `{"entitlements":[],"name":${data}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(tenant.status, 400, `a tenant name ${levels} levels deep is not refused`);
      if (levels > 128)
        assert.deepEqual(
          tenant.body.errors,
          [{ path: 'name', message }],
          `a body ${levels} levels deep is refused with another limit`,
        );
    }
    // In a batch, an event nested past the limit is refused on its own, as if published alone.
    const batch = await h.request('POST', '/api/v1/integrations/events/batch', {
      session,
      body: {
        events: [
          { type: 'order.created', data: nested(65) },
          { type: 'order.created', data: {} },
        ],
      },
    });
    assert.equal(batch.status, 202, `a batch with one event nested too deep is refused whole: ${batch.text}`);
    assert.deepEqual(
      batch.body.data[0],
      { error: { status: 400, code: 'validation_failed', detail: `events.0.data: ${message}` } },
      'the batch event nested too deep is not refused on its own with the one limit',
    );
  });

  test('no body nesting crashes the process: arrays and objects half a million deep are 400', async () => {
    for (const [open, close] of [
      ['[', ']'],
      ['{"a":', '}'],
    ] as const) {
      const depth = Math.floor((1024 * 1024 - 100) / (open.length + close.length));
      for (const [path, auth, field] of [
        ['/api/v1/platform/tenants', { token: h.platformToken }, 'name'],
        ['/api/v1/integrations/events', { session }, 'data'],
      ] as const) {
        const raw = `{"type":"order.created","${field}":{"x":${open.repeat(depth)}1${close.repeat(depth)}}}`;
        const response = await h.request('POST', path, {
          ...auth,
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        assertProblem(response, 400, 'validation_failed', `${path} ${open}`);
        assert.equal(
          response.body.errors?.[0]?.path,
          field,
          `${path} ${open}: the error does not name ${field}`,
        );
      }
    }
    assert.equal(
      (await h.request('GET', '/healthz')).status,
      200,
      'the process stopped answering after deeply nested bodies',
    );
  });
});

describe('requests the router cannot place', () => {
  test('unknown methods are 404 problem details with X-Request-Id', async () => {
    for (const head of [
      'QUERY /api/v1/platform/tenants HTTP/1.1',
      'QUERY /api/v1/platform/tenants HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}',
      'PROPFIND / HTTP/1.1',
      'PURGE /api/v1/platform/tenants HTTP/1.1',
      'SEARCH /healthz HTTP/1.1',
      'get /healthz HTTP/1.1',
      'Post /api/v1/platform/tenants HTTP/1.1',
      'FOO /healthz HTTP/1.1',
    ]) {
      const [line = '', ...rest] = head.split('\r\n');
      const request = [`${line}\r\nhost: 127.0.0.1\r\nconnection: close`, ...rest].join('\r\n');
      assertRawProblem(await rawRequest(request), 404, line);
    }
  });

  test('malformed URLs are 400 problem details with X-Request-Id', async () => {
    for (const path of [
      '/api/v1/integrations/connections/%E0%A4%A',
      '/api/v1/integrations/connections/%',
      '/api/v1/nope/%E0%A4%A',
      `/api/v1/integrations/connections/${'a'.repeat(101)}`,
      `/api/v1/platform/tenants/${'b'.repeat(5000)}`,
    ]) {
      const response = await h.request('GET', path, { session });
      assertProblem(response, 400, 'validation_failed', path.slice(0, 60));
    }
    const hundred = await h.request('GET', `/api/v1/integrations/connections/${'a'.repeat(100)}`, {
      session,
    });
    assertProblem(hundred, 404, 'not_found', 'a parameter of 100 characters');
  });

  test('unknown paths are 404 whatever the method and body', async () => {
    for (const [method, headers, body] of [
      ['POST', { 'content-type': 'text/plain' }, 'x'],
      ['POST', { 'content-type': 'application/json' }, '{not json'],
      ['PUT', {}, 'x'.repeat(2 * 1024 * 1024)],
      ['DELETE', {}, undefined],
    ] as const) {
      const response = await h.request(method, '/api/v1/nothing/here', { rawBody: body, headers });
      assertProblem(response, 404, 'not_found', `${method} ${JSON.stringify(headers)}`);
    }
  });

  test('dot segments never reach a file outside the served assets', async () => {
    const heads = [
      '/docs/static/../x',
      '/docs/static/../../../../../../etc/passwd',
      '/docs/static/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/docs/static/%2E%2E/%2E%2E/%2E%2E/package.json',
      '/docs/static/..%2f..%2f..%2fpackage.json',
      '/docs/static/..%5c..%5c..%5cpackage.json',
      '/docs/static/.%2e/.%2e/.%2e/package.json',
      '/docs/./static/index.html',
      '/api/v1/../../package.json',
      '/api/v1/platform/tenants/..',
    ];
    for (const path of heads) {
      const response = await rawRequest(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close`);
      assertRawProblem(response, 404, path);
      assert.ok(!response.body.includes('"hubgate"') && !response.body.includes('root:'), path);
    }
    const asset = await rawRequest(
      'GET /docs/static/index.css HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close',
    );
    assert.equal(asset.status, 200, 'the real assets are still served');
  });

  test('requests the router cannot place are logged and counted like any request', async () => {
    const countUnmatched = async () => {
      const metrics = await h.request('GET', '/metrics', { token: h.platformToken });
      return [
        ...metrics.text.matchAll(/^hubgate_http_requests_total\{[^}]*route="unmatched"[^}]*\} (\d+)$/gm),
      ]
        .map((m) => Number(m[1]))
        .reduce((a, b) => a + b, 0);
    };
    const before = await countUnmatched();
    const logLines = () =>
      h
        .logs()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"')).length;
    const linesBefore = logLines();
    await rawRequest('GET /docs/static/%2e%2e/x HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close');
    await rawRequest('QUERY /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close');
    await rawRequest('get /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close');
    await h.request('GET', '/api/v1/integrations/connections/%E0%A4%A');
    await h.request('GET', `/api/v1/integrations/connections/${'a'.repeat(101)}`);
    await waitUntil(() => logLines() >= linesBefore + 5, { message: 'five access log lines' });
    assert.equal(
      (await countUnmatched()) - before,
      5,
      'the unplaceable requests are counted as other than five unmatched requests',
    );
  });
});

describe('unplaceable requests are limited per address', () => {
  let limited: Harness;
  before(async () => {
    limited = await startHarness({ env: { RATE_LIMIT_PER_MINUTE: '5' } });
  });
  after(() => limited.close());

  test('dot-segment and unknown-path requests count against the per-address limit', async () => {
    const statuses: number[] = [];
    const { port } = new URL(limited.baseUrl);
    for (let i = 0; i < 8; i++) {
      const path = i % 2 ? '/docs/static/%2e%2e/x' : '/api/v1/no-such-thing';
      const status = await new Promise<number>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n`),
        );
        let text = '';
        socket.on('data', (c) => {
          text += c.toString();
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(Number(text.split(' ')[1])));
      });
      statuses.push(status);
    }
    assert.ok(statuses.includes(429), `statuses: ${statuses.join(',')}`);
    assert.ok(
      statuses.every((s) => s === 404 || s === 429),
      `statuses: ${statuses.join(',')}`,
    );
  });
});

describe('a client that goes away mid-request', () => {
  test('is neither a database outage nor a server error', async () => {
    const snapshot = async () =>
      (await h.request('GET', '/api/v1/platform/monitoring', { token: h.platformToken })).body.http;
    const before = await snapshot();
    const requestLines = () =>
      h
        .logs()
        .split('\n')
        .filter((l) => l.includes('"msg":"request"') && l.includes('"method":"POST"')).length;
    const linesBefore = requestLines();
    const { port } = new URL(h.baseUrl);
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(
            'POST /api/v1/platform/tenants HTTP/1.1\r\nhost: 127.0.0.1\r\n' +
              `authorization: Bearer ${h.platformToken}\r\ncontent-type: application/json\r\n` +
              'content-length: 1000\r\n\r\n{"name":"half',
          );
          // Give the server the headers and the first bytes, then vanish.
          setImmediate(() => {
            socket.destroy();
            resolve();
          });
        });
      });
    }
    await waitUntil(() => requestLines() >= linesBefore + 3, {
      message: 'the aborted requests to be logged',
    });
    assert.ok(!h.logs().includes('database unavailable'), 'a client abort was logged as a database outage');
    const afterwards = await snapshot();
    assert.equal(afterwards.errors5xx, before.errors5xx, 'a client abort was counted as a 5xx');
    const metrics = await h.request('GET', '/metrics', { token: h.platformToken });
    const closed =
      /^hubgate_http_requests_total\{method="POST",route="\/api\/v1\/platform\/tenants",status="499"\} (\d+)$/m;
    assert.equal(Number(closed.exec(metrics.text)?.[1]), 3, 'counted as closed by the client (499)');
  });
});
