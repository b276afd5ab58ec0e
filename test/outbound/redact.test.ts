import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetOf } from '../../src/deadline.js';
import { withClientCredentials } from '../../src/outbound/client-credentials.js';
import {
  lookaheadBytes,
  MIN_CUT_SECRET_BYTES,
  redactBody,
  redactText,
  spellingsOf,
} from '../../src/outbound/redact.js';
import type { OutboundRequest, SendResult } from '../../src/outbound/request.js';

// docs/decisions/0063: what the sender takes out of an answer it keeps, and how an attempt's budget
// bounds the token requests it shares with others.

const SECRET = 'Bearer s3cr3t/value+1';

test('every spelling of a secret in a header or a short body is [redacted], whatever an encoder made of it', () => {
  const spellings = spellingsOf([SECRET]);
  const echoes = [
    SECRET,
    encodeURIComponent(SECRET),
    encodeURIComponent(SECRET).toLowerCase().replace('bearer', 'Bearer'),
    encodeURIComponent(SECRET).replaceAll('%20', '+'),
    JSON.stringify(SECRET).slice(1, -1).replaceAll('/', '\\/'),
  ];
  for (const echo of echoes) {
    assert.equal(
      redactText(`a ${echo} b`, spellings),
      'a [redacted] b',
      `${echo} is not redacted in a header`,
    );
    const body = Buffer.from(`{"echo":"${echo}"}`);
    assert.equal(
      redactBody(body, body.length, true, spellings),
      '{"echo":"[redacted]"}',
      `${echo} is not redacted in a body`,
    );
  }
  const unicode = spellingsOf(['pässwört-1234']);
  assert.equal(
    redactText('{"v":"p\\u00e4ssw\\u00f6rt-1234"}', unicode),
    '{"v":"[redacted]"}',
    'a secret beyond ASCII escaped as \\u is not redacted',
  );
});

test("a URL credential: the URL, its path and its last segment (Slack's secret part) in any spelling", () => {
  const url = 'https://hooks.slack.com/services/T0001/B0002/abcdefghijklmnopqrstuvwx';
  const spellings = spellingsOf([url]);
  for (const echo of [
    url,
    '/services/T0001/B0002/abcdefghijklmnopqrstuvwx',
    'abcdefghijklmnopqrstuvwx',
    encodeURIComponent(url),
    url.replaceAll('/', '\\/'),
  ])
    assert.equal(redactText(`<${echo}>`, spellings), '<[redacted]>', `${echo} is not redacted`);
  assert.equal(
    redactText('https://hooks.slack.com/ T0001', spellings),
    'https://hooks.slack.com/ T0001',
    'what is not secret in a URL (its origin, a short segment) is redacted',
  );
});

test('an answer without a secret is kept exactly as before: the first bytes as UTF-8, bad bytes replaced', () => {
  const body = Buffer.concat([Buffer.from('é'.repeat(10)), Buffer.from([0xff, 0x41])]);
  for (const keep of [0, 1, 5, 20, 22, 100])
    assert.equal(
      redactBody(body, keep, true, spellingsOf(['nowhere-in-it'])),
      body.subarray(0, keep).toString('utf8'),
      `keeping ${keep} bytes differs from the plain cut`,
    );
});

test('a secret across the end of the kept bytes is hidden whole, seen in the bytes read beyond them', () => {
  const spellings = spellingsOf([SECRET]);
  const keep = 100;
  const body = Buffer.from(`${'x'.repeat(keep - 5)}${SECRET}${'y'.repeat(200)}`);
  // What the sender reads: the kept bytes and a secret's length more.
  const read = body.subarray(0, keep + lookaheadBytes(spellings));
  assert.equal(
    redactBody(read, keep, false, spellings),
    `${'x'.repeat(keep - 5)}[redacted]`,
    'the start of a secret cut by the end of the kept bytes is shown',
  );
});

test('a secret that the read limit cut off: its start at the very end is hidden from 4 bytes on', () => {
  const spellings = spellingsOf([SECRET]);
  for (const shown of [MIN_CUT_SECRET_BYTES, 7, SECRET.length - 1]) {
    const read = Buffer.from(`${'x'.repeat(50)}${SECRET.slice(0, shown)}`);
    assert.equal(
      redactBody(read, read.length, false, spellings),
      `${'x'.repeat(50)}[redacted]`,
      `the first ${shown} characters of a secret at the end of what was read are shown`,
    );
  }
  const short = Buffer.from(`${'x'.repeat(50)}${SECRET.slice(0, MIN_CUT_SECRET_BYTES - 1)}`);
  assert.equal(
    redactBody(short, short.length, false, spellings),
    short.toString(),
    'fewer bytes than MIN_CUT_SECRET_BYTES are hidden though they may be anything',
  );
  const ended = Buffer.from(`${'x'.repeat(50)}${SECRET.slice(0, 8)}`);
  assert.equal(
    redactBody(ended, ended.length, true, spellings),
    ended.toString(),
    'the end of a body that ended there is hidden, though no secret was cut',
  );
});

/** A sender whose token requests answer when the test says, noting the signal each one got. */
function fakeSender() {
  const tokenCalls: Array<{ signal: AbortSignal; answer: (token: string) => void }> = [];
  const sends: OutboundRequest[] = [];
  const result = (status: number | null): SendResult => ({
    ok: status === 200,
    status,
    remoteAddress: null,
    error: status === 200 ? null : 'timeout',
    errorDetail: null,
    retryAfterSeconds: null,
    durationMs: 1,
  });
  const send = (outbound: OutboundRequest): Promise<SendResult> => {
    if (outbound.keepAnswerBytes === undefined) {
      sends.push(outbound);
      return Promise.resolve(result(200));
    }
    const signal = outbound.budget!.signal;
    return new Promise((resolve) => {
      signal.addEventListener('abort', () => resolve(result(null)), { once: true });
      tokenCalls.push({
        signal,
        answer: (token) =>
          resolve({
            ...result(200),
            answer: {
              contentType: 'application/json',
              body: Buffer.from(`{"access_token":"${token}"}`),
              tooLarge: false,
            },
          }),
      });
    });
  };
  return { send, tokenCalls, sends };
}

const GRANT = { tokenUrl: 'https://auth.example/token', clientId: 'c', clientSecret: 'client-secret-1' };
const request = (budgetMs: number): OutboundRequest => ({
  method: 'POST',
  url: 'https://receiver.example/hook',
  headers: {},
  body: '{}',
  clientCredentials: GRANT,
  budget: budgetOf(budgetMs),
});

test('a shared token request runs while one attempt waiting for it has time, and is aborted when the last one runs out', async () => {
  const fake = fakeSender();
  const send = withClientCredentials(fake.send);
  const short = send(request(30));
  const long = send(request(10_000));
  assert.equal(fake.tokenCalls.length, 1, 'two attempts at once did not share one token request');
  const shortResult = await short;
  assert.equal(shortResult.error, 'timeout', 'the attempt whose time ran out did not end as a timeout');
  assert.match(shortResult.errorDetail ?? '', /no OAuth2 token/, 'its detail does not say it had no token');
  assert.equal(
    fake.tokenCalls[0]!.signal.aborted,
    false,
    'the token request was aborted while another waited',
  );
  fake.tokenCalls[0]!.answer('token-a');
  const longResult = await long;
  assert.equal(longResult.ok, true, 'the attempt with time left did not get the shared token');
  assert.equal(fake.sends[0]?.headers.authorization, 'Bearer token-a', 'the token was not sent');
  assert.deepEqual(
    fake.sends[0]?.redact,
    ['token-a'],
    'the token is not among what the answer must not show',
  );

  const lone = fakeSender();
  const lonely = withClientCredentials(lone.send)(request(30));
  assert.equal((await lonely).error, 'timeout', 'an attempt out of time did not end as a timeout');
  assert.equal(
    lone.tokenCalls[0]!.signal.aborted,
    true,
    'the token request went on after its only attempt ended',
  );
});

test('an attempt out of time starts no token request and no send', async () => {
  const fake = fakeSender();
  const result = await withClientCredentials(fake.send)(request(0));
  assert.equal(result.error, 'timeout', 'an attempt with no time left did not end as a timeout');
  assert.equal(fake.tokenCalls.length, 0, 'a token request started with no time left');
  assert.equal(fake.sends.length, 0, 'a send started with no time left');
});

test("a token endpoint's error code that holds the client secret is shown [redacted]", async () => {
  const send = (outbound: OutboundRequest): Promise<SendResult> =>
    Promise.resolve({
      ok: false,
      status: 401,
      remoteAddress: null,
      error: 'http_status',
      errorDetail: 'HTTP 401',
      retryAfterSeconds: null,
      durationMs: 1,
      answer: {
        contentType: 'application/json',
        body: Buffer.from(
          JSON.stringify({ error: `bad:${outbound.clientCredentials?.clientSecret ?? GRANT.clientSecret}` }),
        ),
        tooLarge: false,
      },
    });
  const result = await withClientCredentials(send)(request(1000));
  assert.equal(
    result.errorDetail,
    'no OAuth2 token from the token URL: HTTP 401 (bad:[redacted])',
    'the client secret in the error code is shown',
  );
});
