import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { assertNoLeak, makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startOAuthProvider, type TestOAuthProvider } from '../helpers/oauth-provider.js';
import { startReceiver, type Received } from '../helpers/receiver.js';

// Webhook receivers behind OAuth2 (docs/api/connections.md): deliveries of `webhook` and `http`
// connections with `oauth2ClientCredentials` carry a bearer token from a real OAuth 2.0 provider's
// token endpoint (oidc-provider on 127.0.0.1), and the receiver checks it with that provider.
let h: Harness;
let idp: TestOAuthProvider;
let close: () => Promise<unknown>;
const tokensSeen = new Set<string>();
const closing: Array<() => unknown> = [];
const cleanup = { after: (fn: () => unknown) => closing.push(fn) };

before(async () => {
  h = await startHarness({
    env: {
      DELIVERY_ALLOW_HTTP: 'true',
      DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
      DELIVERY_TIMEOUT_MS: '5000',
      DELIVERY_RETRY_SCHEDULE: '0,0,0',
    },
    workers: { pollMs: 50 },
  });
  const redirectUri = new URL('/api/v1/oauth/callback', h.config.publicUrl).href;
  idp = await startOAuthProvider(cleanup, { redirectUri });
  close = () => Promise.all(closing.map((fn) => fn()));
});
after(async () => {
  // The client secret and every token handed out: never in a log or an answer.
  assertNoLeak(h, [idp.clientSecret, ...tokensSeen]);
  await close();
  await h.close();
});

const CONNECTIONS = '/api/v1/integrations/connections';
const bearerOf = (request: Received) => {
  const token = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1] ?? '';
  if (token) tokensSeen.add(token);
  return token;
};
const clientCredentialGrants = () =>
  idp.tokenCalls.filter((c) => c.grantType === 'client_credentials').length;
const grant = () => ({ tokenUrl: idp.tokenUrl, clientId: idp.clientId, clientSecret: idp.clientSecret });

async function connect(
  session: TestSession,
  create: Record<string, unknown>,
  credentials: Record<string, unknown>,
) {
  const created = await h.request('POST', CONNECTIONS, {
    session,
    body: { displayName: 'oauth hook', ...create },
  });
  assert.equal(created.status, 201, `creating the connection answered ${created.status}: ${created.text}`);
  const id = created.body.id as string;
  const bound = await h.request('PUT', `${CONNECTIONS}/${id}/credentials`, { session, body: credentials });
  assert.equal(bound.status, 200, `binding the credentials answered ${bound.status}: ${bound.text}`);
  return id;
}

test('a webhook delivery carries a bearer token from the token URL, cached across deliveries', async () => {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const receiver = await startReceiver(cleanup);
  const id = await connect(
    session,
    { connectorKey: 'webhook', url: receiver.url('/hook') },
    { oauth2ClientCredentials: { ...grant(), scope: idp.scopes.join(' ') } },
  );
  const grantsBefore = clientCredentialGrants();
  await publishEvent(h, session);
  await publishEvent(h, session);
  await waitForDeliveries(h, session, id, { statuses: ['delivered', 'delivered'] });
  const [first, second] = receiver.received;
  assert.ok(first && second, 'the receiver did not get both deliveries');
  assert.ok(await idp.accepts(bearerOf(first)), 'the bearer token is not one the provider issued');
  assert.equal(bearerOf(second), bearerOf(first), 'the token was not reused for the second delivery');
  assert.ok(first.headers['webhook-signature'], 'the delivery is no longer signed');
  assert.equal(
    clientCredentialGrants(),
    grantsBefore + 1,
    'not exactly one token was fetched for two deliveries',
  );

  const shown = await h.request('GET', `${CONNECTIONS}/${id}`, { session });
  assert.equal(shown.status, 200, `reading the connection answered ${shown.status}`);
  assert.ok(!shown.text.includes(idp.clientSecret), 'the client secret is shown');
  assert.ok(!shown.text.includes(idp.tokenUrl), 'the credentials are shown');
});

test('a 401 from the receiver fetches a new token once and sends once more', async () => {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const receiver = await startReceiver(cleanup, (_r, index, res) => {
    res.statusCode = index === 0 ? 401 : 200;
    res.end();
  });
  const id = await connect(
    session,
    { connectorKey: 'webhook', url: receiver.url('/hook') },
    { oauth2ClientCredentials: grant() },
  );
  const grantsBefore = clientCredentialGrants();
  await publishEvent(h, session);
  const [delivery] = await waitForDeliveries(h, session, id, { settled: 1 });
  assert.equal(delivery.status, 'delivered', `the delivery ended ${delivery.status}`);
  assert.equal(delivery.attemptCount, 1, 'the retry with a new token counted as another attempt');
  const [refused, retried] = receiver.received;
  assert.ok(refused && retried, 'the receiver was not called twice');
  assert.equal(receiver.received.length, 2, 'the delivery was sent more than twice');
  assert.notEqual(bearerOf(retried), bearerOf(refused), 'the retry went with the refused token');
  assert.ok(await idp.accepts(bearerOf(retried)), 'the new token is not the provider’s');
  assert.equal(clientCredentialGrants(), grantsBefore + 2, 'not exactly two tokens were fetched');
});

test('an http connection takes oauth2ClientCredentials instead of its header, not beside an Authorization header', async () => {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const receiver = await startReceiver(cleanup);
  const id = await connect(
    session,
    { connectorKey: 'http', url: receiver.url('/erp') },
    { oauth2ClientCredentials: grant(), headerName: 'X-Tenant', headerValue: 'acme' },
  );
  await publishEvent(h, session);
  await waitForDeliveries(h, session, id, { statuses: ['delivered'] });
  const [call] = receiver.received;
  assert.ok(call && (await idp.accepts(bearerOf(call))), 'the http delivery carries no provider token');
  assert.equal(call.headers['x-tenant'], 'acme', 'the configured header is gone');

  const refused = await h.request('PUT', `${CONNECTIONS}/${id}/credentials`, {
    session,
    body: { oauth2ClientCredentials: grant(), headerName: 'Authorization', headerValue: 'Bearer x' },
  });
  assert.equal(refused.status, 400, `an Authorization header beside OAuth2 answered ${refused.status}`);
  assert.match(refused.body.detail, /headerName/, 'the refusal does not name the field');
  const none = await h.request('PUT', `${CONNECTIONS}/${id}/credentials`, { session, body: {} });
  assert.equal(none.status, 400, `neither a header nor OAuth2 answered ${none.status}`);
});

test('the token URL passes the SSRF policy when saved', async () => {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const receiver = await startReceiver(cleanup);
  const created = await h.request('POST', CONNECTIONS, {
    session,
    body: { connectorKey: 'webhook', displayName: 'ssrf', url: receiver.url('/hook') },
  });
  assert.equal(created.status, 201, `creating the connection answered ${created.status}`);
  const r = await h.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, {
    session,
    body: { oauth2ClientCredentials: { ...grant(), tokenUrl: 'http://169.254.169.254/token' } },
  });
  assert.equal(r.status, 400, `a token URL at the metadata address answered ${r.status}`);
  assert.equal(r.body.code, 'destination_forbidden', 'the refusal is not destination_forbidden');
  assert.match(r.body.detail, /oauth2ClientCredentials\.tokenUrl/, 'the refusal does not name the field');

  assert.equal(receiver.received.length, 0, 'the receiver was called');
});

test('a token endpoint that refuses fails the attempt, saying why, without calling the receiver', async () => {
  const { session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const receiver = await startReceiver(cleanup);
  const wrongSecret = `wrong-${idp.clientSecret.slice(0, 8)}-secret`;
  const id = await connect(
    session,
    { connectorKey: 'webhook', url: receiver.url('/hook') },
    { oauth2ClientCredentials: { ...grant(), clientSecret: wrongSecret } },
  );
  await publishEvent(h, session);
  const [delivery] = await waitForDeliveries(h, session, id, { settled: 1 });
  assert.equal(delivery.status, 'failed', `the delivery ended ${delivery.status}`);
  const [attempt] = delivery.attempts;
  assert.ok(attempt, 'no attempt is logged');
  assert.equal(attempt.responseStatus, null, 'the attempt shows a receiver status');
  assert.match(
    String(attempt.errorDetail),
    /no OAuth2 token from the token URL: HTTP 401 \(invalid_client\)/,
    'the attempt does not say why',
  );
  assert.equal(receiver.received.length, 0, 'the receiver was called without a token');
  assertNoLeak(h, [wrongSecret]);
});
