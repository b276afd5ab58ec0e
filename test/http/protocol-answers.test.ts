import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startHarness, type Harness } from '../helpers/harness.js';
import { responseCheck } from '../helpers/openapi-check.js';
import { waitUntil } from '../helpers/wait.js';

/**
 * What Node's HTTP layer answers by itself, before any route (CONNECT, a missing Host, an unknown
 * Expect, an oversized head), seen from a raw socket: each must still be a problem details answer
 * with X-Request-Id, one access line and one count, like any request (docs/api/conventions.md, docs/api/errors.md, docs/api/limits.md).
 */
let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** Sends `request` as is and reads until the server closes the connection. */
function raw(request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(h.baseUrl).port), '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const split = text.indexOf('\r\n\r\n');
      const headers = split === -1 ? text : text.slice(0, split);
      resolve({
        status: Number(headers.split(' ')[1]),
        headers,
        body: split === -1 ? '' : text.slice(split + 4),
      });
    });
  });
}

/** Raw answers skip the harness's check against the OpenAPI document: the same check, by hand. */
function assertDocumented(request: string, answer: RawAnswer): void {
  const [method = '', path = ''] = request.split(' ');
  const headers = new Headers();
  for (const line of answer.headers.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers.append(line.slice(0, colon), line.slice(colon + 1).trim());
  }
  responseCheck(h.app.swagger())({
    method,
    path,
    status: answer.status,
    headers,
    text: answer.body,
    body: JSON.parse(answer.body),
  });
}

/** The sum of `hubgate_http_requests_total` over every series with this status. */
async function counted(status: number): Promise<number> {
  const metrics = await h.request('GET', '/metrics', { token: h.platformToken });
  return [...metrics.text.matchAll(/^hubgate_http_requests_total\{([^}]*)\} (\d+)$/gm)]
    .filter((m) => m[1]?.includes(`status="${status}"`))
    .reduce((sum, m) => sum + Number(m[2]), 0);
}

const accessLines = (requestId: string) =>
  h
    .logs()
    .split('\n')
    .filter((line) => line.includes('"msg":"request"') && line.includes(`"requestId":"${requestId}"`));

/**
 * The answer is problem details with `code`, carries X-Request-Id, and the request was logged once
 * and counted once under its status.
 */
async function assertAnswered(
  request: string,
  status: number,
  code: string,
): Promise<RawAnswer & { line: string }> {
  const what = request.slice(0, 60);
  const before = await counted(status);
  const abortsBefore = await counted(499);
  const answer = await raw(request);
  assert.equal(answer.status, status, `${what}: ${answer.headers}\n${answer.body}`);
  assert.match(answer.headers, /^content-type: application\/problem\+json/im, what);
  const requestId = /^x-request-id: (\S+)/im.exec(answer.headers)?.[1];
  assert.ok(requestId, `${what}: no X-Request-Id`);
  const body = JSON.parse(answer.body);
  assert.equal(body.code, code, what);
  assert.equal(body.status, status, what);
  assert.equal(body.requestId, requestId, what);
  await waitUntil(() => accessLines(requestId).length > 0, { message: `the access line of ${what}` });
  assert.equal(accessLines(requestId).length, 1, `${what}: one access line`);
  assert.match(accessLines(requestId)[0] ?? '', new RegExp(`"statusCode":${status}`), what);
  assert.equal((await counted(status)) - before, 1, `${what}: counted once`);
  assert.equal(await counted(499), abortsBefore, `${what}: not also counted as closed by the client`);
  assertDocumented(request, answer);
  return { ...answer, line: accessLines(requestId)[0] ?? '' };
}

describe('answers Node would give by itself', () => {
  test('CONNECT, in authority or origin form, is 404 problem details, then the connection closes', async () => {
    for (const target of ['127.0.0.1:18080', '/api/v1/x', '/healthz']) {
      await assertAnswered(`CONNECT ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`, 404, 'not_found');
    }
  });

  test('an HTTP/1.1 request without Host is 400 validation_failed naming the Host header', async () => {
    for (const request of [
      'GET /healthz HTTP/1.1\r\nconnection: close\r\n\r\n',
      'POST /api/v1/auth/login HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}',
      'GET /api/v1/no-such-route HTTP/1.1\r\nconnection: close\r\n\r\n',
    ]) {
      const answer = await assertAnswered(request, 400, 'validation_failed');
      assert.equal(JSON.parse(answer.body).errors?.[0]?.path, 'headers.host', request);
    }
    const http10 = await raw('GET /healthz HTTP/1.0\r\n\r\n');
    assert.equal(http10.status, 200, 'HTTP/1.0 has no Host requirement');
  });

  test('an Expect other than 100-continue is ignored: the request is answered as without it', async () => {
    const body = JSON.stringify({ email: 'nobody@example.com', password: 'not the password' });
    await assertAnswered(
      'POST /api/v1/auth/login HTTP/1.1\r\nhost: 127.0.0.1\r\nexpect: 200-ok\r\n' +
        `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
      401,
      'invalid_credentials',
    );
    const health = await raw(
      'GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nexpect: foo\r\nconnection: close\r\n\r\n',
    );
    assert.equal(health.status, 200, health.headers);
  });

  test('a request line or headers over the 16 KiB limit are 400 validation_failed', async () => {
    await assertAnswered(
      `GET /api/v1/${'a'.repeat(20_000)} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`,
      400,
      'validation_failed',
    );
    await assertAnswered(
      `GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ${'b'.repeat(20_000)}\r\n\r\n`,
      400,
      'validation_failed',
    );
  });

  test('answers written before routing carry the same browser policy as every other answer', async () => {
    for (const request of [
      `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`,
      'FOO /connections HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n',
    ]) {
      const answer = await raw(request);
      const policy = /^content-security-policy: (.*)$/im.exec(answer.headers)?.[1];
      const served = (await h.request('GET', '/healthz')).headers.get('content-security-policy');
      assert.equal(policy, served, request.slice(0, 20));
      assert.match(
        answer.headers,
        /^x-frame-options: DENY$/im,
        `an answer written before routing (${request.slice(0, 20)}) can be framed`,
      );
    }
  });

  test('a body Node cannot parse (a bad chunk size) on a route already reading it is 400, logged once', async () => {
    const { line } = await assertAnswered(
      'POST /api/v1/auth/login HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
        'transfer-encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n',
      400,
      'validation_failed',
    );
    assert.match(line, /"method":"POST","path":"\/api\/v1\/auth\/login"/, 'logged as the request it was');
  });
});
