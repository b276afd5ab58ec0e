import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test, type TestContext } from 'node:test';
import { publishEvent, waitForDeliveries, type Delivery, type Page } from '../helpers/events.js';
import { makeKey, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { bindCredentials, CONNECTIONS, createConnection } from '../helpers/operate.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

// docs/api/events.md, Inspection: a bound credential a receiver echoes back is [redacted] in the
// stored answer too, headers and body, in the spellings an echo takes (as is, inside JSON with its
// slashes escaped, URL-encoded). Receivers on 127.0.0.1 echo what they got; the log is read with a
// READER key, and no credential may be anywhere in what it answers.

const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '600',
  DELIVERY_TIMEOUT_MS: '5000',
};

let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/**
 * A receiver that answers 200 with every request header echoed back as `x-echo-<name>` and a JSON
 * body holding the URL it was called at (whole, URL-encoded, with `\/` as PHP writes it), the
 * headers and the body it got, and `known`: secrets it holds itself (a signing secret, a client
 * secret), as a debugging receiver might print them.
 */
function startEchoReceiver(t: TestContext, known: () => string[] = () => []): Promise<Receiver> {
  return startReceiver(t, (request, _i, res) => {
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && !['host', 'content-length', 'connection'].includes(name))
        res.setHeader(`x-echo-${name}`, value);
    }
    const url = `http://${request.headers.host}${request.url}`;
    res.setHeader('content-type', 'application/json');
    const json = JSON.stringify({
      url,
      path: request.url,
      encoded: encodeURIComponent(url),
      headers: request.headers,
      body: request.body,
      known: known(),
    });
    // And the URL as PHP's json_encode writes it, every slash as \/ (written as is, not re-escaped).
    res.end(`${json.slice(0, -1)},"php":"${url.replaceAll('/', '\\/')}"}`);
  });
}

/** Every string of a JSON value, however deep. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}

/** The spellings of a secret an echo may take. */
const spellings = (secret: string) => [
  secret,
  encodeURIComponent(secret),
  secret.replaceAll('/', '\\/'),
  JSON.stringify(secret).slice(1, -1),
];

/**
 * Reads the connection's log and each delivery's detail with a READER key, and fails the test if
 * any of `secrets` is in any string of what they answer. Returns the log's entries.
 */
async function assertNotInLog(
  session: TestSession,
  connectionId: string,
  secrets: Record<string, string>,
): Promise<Delivery[]> {
  const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
  const log = await h.request<Page<Delivery>>('GET', `${CONNECTIONS}/${connectionId}/events?limit=100`, {
    token: reader.secret,
  });
  assert.equal(log.status, 200, `a READER key reading the log answered ${log.status}: ${log.text}`);
  const answers: unknown[] = [log.body];
  for (const entry of log.body.data) {
    const one = await h.request('GET', `${CONNECTIONS}/${connectionId}/events/${entry.id}`, {
      token: reader.secret,
    });
    assert.equal(one.status, 200, `a READER key reading ${entry.id} answered ${one.status}`);
    answers.push(one.body);
  }
  const shown = answers.flatMap(stringsOf);
  for (const [what, secret] of Object.entries(secrets)) {
    for (const spelling of spellings(secret)) {
      const found = shown.find((text) => text.includes(spelling));
      assert.equal(found, undefined, `the log shows the ${what} (as ${JSON.stringify(spelling)})`);
    }
  }
  for (const [what, secret] of Object.entries(secrets))
    assert.ok(!h.logs().includes(secret), `the ${what} appeared in the logs`);
  return log.body.data;
}

const header = (headers: Record<string, string> | undefined, name: string) =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name)?.[1];

describe('a receiver that echoes a credential', () => {
  test('the http connector: its header value, echoed in a header and the body, is [redacted] in the stored answer', async (t) => {
    const receiver = await startEchoReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const headerValue = `Key ${hex(16)}/${hex(4)}`;
    const c = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'echo',
      url: receiver.url('/erp'),
    });
    await bindCredentials(h, session, c.id, { headerName: 'X-Api-Key', headerValue });
    await publishEvent(h, session, { type: 'echo.http' });
    await waitForDeliveries(h, session, c.id, { statuses: ['delivered'] });
    assert.equal(
      (await receiver.waitFor(1))[0]!.headers['x-api-key'],
      headerValue,
      'the header was not sent',
    );

    const [entry] = await assertNotInLog(session, c.id, { 'header value': headerValue });
    const response = entry!.attempts[0]!.response;
    assert.equal(
      header(response?.headers, 'x-echo-x-api-key'),
      '[redacted]',
      'the echoed header does not show [redacted]',
    );
    assert.equal(
      header(response?.headers, 'x-echo-user-agent'),
      header(entry!.attempts[0]!.request?.headers, 'user-agent'),
      'a header that holds no secret is not shown as it came',
    );
    assert.match(response?.body ?? '', /\[redacted\]/, 'the body does not show where the secret was');
  });

  test('the Slack webhook URL and its secret path, echoed whole, as a path, URL-encoded and with escaped slashes', async (t) => {
    const receiver = await startEchoReceiver(t);
    const { session } = await makeSignedInTenant(h);
    const secretPart = hex(12);
    const webhookUrl = receiver.url(`/services/T0${hex(4)}/B0${hex(4)}/${secretPart}`);
    const c = await createConnection(h, session, { connectorKey: 'slack', displayName: 'echo' });
    await bindCredentials(h, session, c.id, { webhookUrl });
    await publishEvent(h, session, { type: 'echo.slack' });
    await waitForDeliveries(h, session, c.id, { statuses: ['delivered'] });
    await receiver.waitFor(1);

    const [entry] = await assertNotInLog(session, c.id, {
      'webhook URL': webhookUrl,
      'webhook path': new URL(webhookUrl).pathname,
      "webhook URL's secret part": secretPart,
    });
    assert.ok(entry!.attempts[0]!.response?.body, 'the answer is not kept at all');
  });

  test('a receiver behind OAuth2: the bearer token, the client secret and the signing secret', async (t) => {
    const clientSecret = `cs-${hex(16)}`;
    const issued: string[] = [];
    const tokenServer = createServer((req, res) => {
      req.resume();
      const basic = Buffer.from(`deadbeef-client:${clientSecret}`).toString('base64');
      if (req.headers.authorization !== `Basic ${basic}`) {
        res.statusCode = 401;
        return void res.end('{"error":"invalid_client"}');
      }
      const token = `at-${hex(20)}`;
      issued.push(token);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => tokenServer.close(() => resolve())));
    const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;

    let signingSecret = '';
    const receiver = await startEchoReceiver(t, () => [clientSecret, signingSecret]);
    const { session } = await makeSignedInTenant(h);
    const c = await createConnection(h, session, {
      connectorKey: 'webhook',
      displayName: 'echo',
      url: receiver.url('/hook'),
    });
    const bound = await bindCredentials(h, session, c.id, {
      oauth2ClientCredentials: { tokenUrl, clientId: 'deadbeef-client', clientSecret },
    });
    signingSecret = bound.credentials.signingSecret!;
    await publishEvent(h, session, { type: 'echo.oauth' });
    await waitForDeliveries(h, session, c.id, { statuses: ['delivered'] });
    const [got] = await receiver.waitFor(1);
    const token = issued[0]!;
    assert.equal(got!.headers.authorization, `Bearer ${token}`, 'the delivery carried no token');

    const [entry] = await assertNotInLog(session, c.id, {
      'bearer token': token,
      'client secret': clientSecret,
      'signing secret': signingSecret,
    });
    assert.equal(
      header(entry!.attempts[0]!.response?.headers, 'x-echo-authorization'),
      'Bearer [redacted]',
      'the echoed Authorization header does not show the token [redacted]',
    );
  });

  test('a credential across the end of the kept body is hidden whole, not its first characters', async (t) => {
    const headerValue = `Zq${hex(20)}`;
    const keep = h.config.delivery.responseBodyBytes;
    // The credential starts 6 bytes before the end of what the log keeps.
    const receiver = await startReceiver(t, (_r, _i, res) => {
      res.end(`${'x'.repeat(keep - 6)}${headerValue}${'y'.repeat(100)}`);
    });
    const { session } = await makeSignedInTenant(h);
    const c = await createConnection(h, session, {
      connectorKey: 'http',
      displayName: 'cut',
      url: receiver.url('/cut'),
    });
    await bindCredentials(h, session, c.id, { headerName: 'X-Api-Key', headerValue });
    await publishEvent(h, session, { type: 'echo.cut' });
    await waitForDeliveries(h, session, c.id, { statuses: ['delivered'] });

    const [entry] = await assertNotInLog(session, c.id, { 'header value': headerValue });
    const response = entry!.attempts[0]!.response!;
    assert.equal(response.bodyTruncated, true, 'a body longer than the bytes kept is not shown as cut');
    assert.ok(
      response.body?.startsWith('x'.repeat(keep - 6)),
      'the bytes before the credential are not kept',
    );
    assert.equal(
      response.body?.slice(keep - 6),
      '[redacted]',
      'the end of the kept body shows part of the credential, not [redacted]',
    );
  });
});
