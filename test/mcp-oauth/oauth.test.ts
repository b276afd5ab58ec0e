import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { purgeMcpOAuth } from '../../src/mcp-oauth/store.js';
import {
  assertNoLeak,
  makeSignedInTenant,
  makeUser,
  makeWebhookConnection,
  signIn,
} from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { waitUntil } from '../helpers/wait.js';
import { connectAgent, MCP_PATH } from '../mcp/helpers.js';
import { approvedCode, authorize, grantAccess, pkce, REDIRECT_URI, registerClient, token } from './flow.js';

// OAuth for MCP clients (contract §23, docs/api/mcp.md): hubgate is the authorization server of its
// MCP route. The attacker's cases first: redirect URIs that must never be redirected to, codes and
// refresh tokens replayed, PKCE left out or wrong, a token for another resource or used elsewhere,
// scopes beyond the person, a demoted or removed person's grants.

const READ_TOOLS = [
  'get_connection',
  'list_connections',
  'list_deliveries',
  'get_delivery',
  'list_event_types',
];

let h: Harness;
let resource: string;
/** Codes, tokens: none may appear in a log; each token only in the one answer that issued it. */
const never: string[] = [];
/** Signing secrets: in the one answer that created each, nowhere else. */
const shownOnce: string[] = [];
before(async () => {
  h = await startHarness();
  resource = new URL(MCP_PATH, h.config.publicUrl).href;
});
after(async () => {
  try {
    assertNoLeak(h, never, shownOnce);
  } finally {
    await h.close();
  }
});

async function toolNames(access: string): Promise<string[]> {
  const agent = await connectAgent(h, access);
  try {
    return (await agent.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await agent.close();
  }
}

const mcpStatus = async (access: string): Promise<number> =>
  (
    await fetch(`${h.baseUrl}${MCP_PATH}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${access}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    })
  ).status;

function remember(granted: { code: string; access: string; refresh: string }) {
  never.push(granted.code, granted.access, granted.refresh);
}

test('the metadata documents describe the MCP route and its authorization server', async () => {
  const prm = (await (
    await fetch(`${h.baseUrl}/.well-known/oauth-protected-resource/api/v1/mcp`)
  ).json()) as Record<string, unknown>;
  assert.equal(prm.resource, resource, 'the resource is not the MCP route’s URL');
  assert.deepEqual(
    prm.authorization_servers,
    [h.config.publicUrl.origin],
    'the authorization server is not hubgate',
  );
  const as = (await (await fetch(`${h.baseUrl}/.well-known/oauth-authorization-server`)).json()) as Record<
    string,
    unknown
  >;
  assert.equal(as.issuer, h.config.publicUrl.origin, 'the issuer is not PUBLIC_URL’s origin');
  assert.equal(as.token_endpoint, `${h.config.publicUrl.origin}/oauth/token`, 'wrong token endpoint');
  assert.equal(
    as.registration_endpoint,
    `${h.config.publicUrl.origin}/oauth/register`,
    'wrong registration endpoint',
  );
  assert.deepEqual(as.code_challenge_methods_supported, ['S256'], 'plain PKCE must not be offered');
  assert.deepEqual(
    as.token_endpoint_auth_methods_supported,
    ['none'],
    'a client authentication other than none is offered',
  );
});

test('registration takes public clients with https or loopback redirect URIs only', async () => {
  const good = await registerClient(h.baseUrl, { redirect_uris: [REDIRECT_URI, 'https://agent.example/cb'] });
  assert.equal(good.status, 201, JSON.stringify(good.body));
  assert.match(String(good.body.client_id), /^mcc_/, 'the client ID has not the mcc_ shape');
  assert.equal(good.body.client_secret, undefined, 'a public client was given a secret');
  for (const uris of [
    ['http://agent.example/cb'],
    ['https://agent.example/cb#fragment'],
    ['javascript:alert(1)'],
    [],
  ]) {
    const bad = await registerClient(h.baseUrl, { redirect_uris: uris });
    assert.equal(bad.status, 400, `${JSON.stringify(uris)}: ${JSON.stringify(bad.body)}`);
    assert.equal(
      bad.body.error,
      'invalid_client_metadata',
      'a bad redirect URI is not invalid_client_metadata',
    );
  }
  const confidential = await registerClient(h.baseUrl, { token_endpoint_auth_method: 'client_secret_basic' });
  assert.equal(confidential.body.error, 'invalid_client_metadata', 'a confidential client was registered');
});

test('a bad client or redirect URI gets a page, never a redirect', async () => {
  const client = await registerClient(h.baseUrl);
  const clientId = String(client.body.client_id);
  const { challenge } = pkce();
  const base = {
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 's',
  };
  for (const params of [
    { ...base, client_id: 'mcc_unknown', redirect_uri: REDIRECT_URI },
    { ...base, client_id: clientId, redirect_uri: 'https://attacker.example/steal' },
    { ...base, client_id: clientId, redirect_uri: `${REDIRECT_URI}/../other` },
    { ...base, client_id: undefined, redirect_uri: REDIRECT_URI },
  ]) {
    const r = await authorize(h.baseUrl, params);
    assert.equal(r.status, 400, JSON.stringify(params));
    assert.equal(r.location, null, `redirected to ${r.location}`);
    assert.match(r.text, /cannot connect to hubgate/, 'the page does not say the application cannot connect');
  }
});

test('once client and redirect URI are good, errors go back to the client with its state', async () => {
  const client = await registerClient(h.baseUrl);
  const clientId = String(client.body.client_id);
  const { challenge } = pkce();
  const base = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    state: 'xyz',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
  const cases: Array<[Record<string, string | undefined>, string]> = [
    [{ ...base, code_challenge: undefined }, 'invalid_request'],
    [{ ...base, code_challenge_method: 'plain' }, 'invalid_request'],
    [{ ...base, response_type: 'token' }, 'unsupported_response_type'],
    [{ ...base, resource: 'https://other.example/mcp' }, 'invalid_target'],
    [{ ...base, scope: 'integrations:READER root:ADMIN' }, 'invalid_scope'],
  ];
  for (const [params, error] of cases) {
    const r = await authorize(h.baseUrl, params);
    assert.equal(r.status, 302, JSON.stringify(params));
    const to = new URL(r.location ?? '');
    assert.equal(
      `${to.origin}${to.pathname}`,
      REDIRECT_URI,
      'the error went elsewhere than the redirect URI',
    );
    assert.equal(to.searchParams.get('error'), error, r.location ?? '');
    assert.equal(to.searchParams.get('state'), 'xyz', 'the state did not come back with the error');
    assert.equal(to.searchParams.get('code'), null, 'an error came with a code');
  }
  const good = await authorize(h.baseUrl, { ...base, resource });
  assert.equal(good.status, 302, 'a good request was not sent on to consent');
  const consentUrl = new URL(good.location ?? '');
  assert.equal(
    `${consentUrl.origin}${consentUrl.pathname}`,
    new URL('/consent', h.config.publicUrl).href,
    'a good request was not sent to the consent page',
  );
  assert.match(consentUrl.searchParams.get('request') ?? '', /^mcq_/, 'the consent page names no request');
});

test('consent: key-managing roles only, scopes within the tenant entitlements, approve or deny', async () => {
  const { tenant, session } = await makeSignedInTenant(h, { entitlements: ['integrations'] });
  const client = await registerClient(h.baseUrl, { client_name: 'Claude Desktop' });
  const ask = async () => {
    const r = await authorize(h.baseUrl, {
      response_type: 'code',
      client_id: String(client.body.client_id),
      redirect_uri: REDIRECT_URI,
      state: 'st',
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      scope: 'integrations:READER integrations:OPERATOR integration_hub:READER',
    });
    return new URL(r.location ?? '').searchParams.get('request') ?? '';
  };
  const request = await ask();
  const view = await h.request('GET', `/api/v1/oauth/consent/${request}`, { session });
  assert.equal(view.status, 200, view.text);
  assert.deepEqual(
    view.body.client,
    { name: 'Claude Desktop', redirectUri: REDIRECT_URI },
    'the consent view names the wrong client',
  );
  assert.equal(view.body.tenant.id, tenant.id, 'the consent view names another tenant');
  // integration_hub is not entitled: not offered.
  assert.deepEqual(
    view.body.scopes,
    ['integrations:READER', 'integrations:OPERATOR'],
    'the offered scopes are not those asked within the entitlements',
  );

  const member = await signIn(h, await makeUser(h, tenant.id, { role: 'MEMBER' }));
  const refused = await h.request('GET', `/api/v1/oauth/consent/${request}`, { session: member });
  assert.equal(refused.status, 403, refused.text);
  assert.equal(refused.body.code, 'role_forbidden', 'a MEMBER saw the consent request');
  const refusedPost = await h.request('POST', '/api/v1/oauth/consent', {
    session: member,
    body: { request, approve: true },
  });
  assert.equal(refusedPost.body.code, 'role_forbidden', 'a MEMBER approved a request');

  const beyond = await h.request('POST', '/api/v1/oauth/consent', {
    session,
    body: { request, approve: true, scopes: ['integration_hub:READER'] },
  });
  assert.equal(beyond.status, 400, beyond.text);
  assert.equal(beyond.body.code, 'validation_failed', 'a scope beyond those offered was approved');
  const noCsrf = await h.request('POST', '/api/v1/oauth/consent', {
    session,
    headers: { 'x-csrf-token': 'forged' },
    body: { request, approve: true },
  });
  assert.equal(noCsrf.body.code, 'csrf_failed', 'a consent without the CSRF token was taken');

  const denied = await h.request('POST', '/api/v1/oauth/consent', {
    session,
    body: { request, approve: false },
  });
  assert.equal(denied.status, 200, denied.text);
  const back = new URL(denied.body.redirectUri);
  assert.equal(back.searchParams.get('error'), 'access_denied', 'a denial did not answer access_denied');
  assert.equal(back.searchParams.get('state'), 'st', 'the state did not come back with the denial');
  assert.equal(back.searchParams.get('code'), null, 'a denial came with a code');
  // Answered once: the request is gone.
  const again = await h.request('GET', `/api/v1/oauth/consent/${request}`, { session });
  assert.equal(again.status, 404, again.text);
});

test('an approved READER grant lists read tools only, on the MCP route only', async () => {
  const { session } = await makeSignedInTenant(h);
  const granted = await grantAccess(h.baseUrl, resource, session, ['integrations:READER']);
  remember(granted);
  assert.match(granted.access, /^oat_/, 'the access token has not the oat_ shape');
  assert.match(granted.refresh, /^ort_/, 'the refresh token has not the ort_ shape');
  assert.deepEqual(
    await toolNames(granted.access),
    [...READ_TOOLS].sort(),
    'a READER grant lists other tools than the read tools',
  );

  // The token is for the MCP server alone (its resource): the API itself refuses it.
  const direct = await h.request('GET', '/api/v1/integrations/connections', { token: granted.access });
  assert.equal(direct.status, 401, direct.text);
  assert.match(
    direct.headers.get('www-authenticate') ?? '',
    /invalid_token/,
    'the 401 does not say invalid_token',
  );

  // The tool reads what the API shows to the tenant, and nothing of another tenant.
  const hook = await makeWebhookConnection(h, session, 'https://hooks.example.com/a');
  shownOnce.push(hook.secret);
  const other = await makeSignedInTenant(h);
  const theirs = await makeWebhookConnection(h, other.session, 'https://hooks.example.com/b');
  shownOnce.push(theirs.secret);
  const agent = await connectAgent(h, granted.access);
  const listed = await agent.tool('list_connections', {});
  const ids = (listed.structuredContent as { data: Array<{ id: string }> }).data.map((c) => c.id);
  assert.deepEqual(ids, [hook.id], 'list_connections shows other connections than the tenant’s');
  const foreign = await agent.tool('get_connection', { connectionId: theirs.id });
  assert.equal(foreign.isError, true, 'another tenant’s connection was read');
  const write = await agent.tool('pause_connection', { connectionId: hook.id });
  assert.equal(write.isError, true, 'a READER grant paused a connection');
  await agent.close();
});

test('PKCE is required and checked; the code is for its client, redirect URI and resource', async () => {
  const { session } = await makeSignedInTenant(h);
  const client = await registerClient(h.baseUrl);
  const clientId = String(client.body.client_id);
  const verifier = pkce();
  const codeFor = async () => {
    const code = await approvedCode(h.baseUrl, session, clientId, verifier.challenge, [
      'integrations:READER',
    ]);
    never.push(code);
    return code;
  };
  const form = { grant_type: 'authorization_code', client_id: clientId, redirect_uri: REDIRECT_URI };
  const cases: Array<[Record<string, string | undefined>, string]> = [
    [{ code_verifier: undefined }, 'invalid_request'],
    [{ code_verifier: pkce().verifier }, 'invalid_grant'],
    [
      {
        code_verifier: verifier.verifier,
        client_id: String((await registerClient(h.baseUrl)).body.client_id),
      },
      'invalid_grant',
    ],
    [{ code_verifier: verifier.verifier, redirect_uri: 'http://127.0.0.1:1/other' }, 'invalid_grant'],
    [{ code_verifier: verifier.verifier, resource: 'https://other.example/mcp' }, 'invalid_target'],
    [{ code_verifier: verifier.verifier, client_id: undefined }, 'invalid_client'],
  ];
  for (const [change, error] of cases) {
    const r = await token(h.baseUrl, { ...form, code: await codeFor(), ...change });
    assert.equal(r.body.error, error, `${JSON.stringify(change)}: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.access_token, undefined, 'a refused exchange issued a token');
  }
  const unknown = await token(h.baseUrl, { ...form, code: 'not-a-code', code_verifier: verifier.verifier });
  assert.equal(unknown.body.error, 'invalid_grant', 'an unknown code was taken');
  const wrongType = await token(h.baseUrl, { ...form, grant_type: 'client_credentials' });
  assert.equal(wrongType.body.error, 'unsupported_grant_type', 'an unknown grant type was taken');
});

test('a code is valid 60 seconds', async () => {
  const { session } = await makeSignedInTenant(h);
  const client = await registerClient(h.baseUrl);
  const clientId = String(client.body.client_id);
  const verifier = pkce();
  const code = await approvedCode(h.baseUrl, session, clientId, verifier.challenge);
  never.push(code);
  h.setNow(new Date(Date.now() + 61_000));
  try {
    const late = await token(h.baseUrl, {
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: verifier.verifier,
    });
    assert.equal(late.body.error, 'invalid_grant', JSON.stringify(late.body));
  } finally {
    h.setNow(null);
  }
});

test('a code used twice revokes its grant: the first exchange’s tokens stop working', async () => {
  const { session } = await makeSignedInTenant(h);
  const granted = await grantAccess(h.baseUrl, resource, session, ['integrations:READER']);
  remember(granted);
  assert.equal(await mcpStatus(granted.access), 200, 'the fresh grant’s access token is refused');
  const replay = await token(h.baseUrl, {
    grant_type: 'authorization_code',
    client_id: granted.clientId,
    code: granted.code,
    code_verifier: granted.pkce.verifier,
  });
  assert.equal(replay.body.error, 'invalid_grant', JSON.stringify(replay.body));
  assert.equal(
    await mcpStatus(granted.access),
    401,
    'the grant’s access token still works after a code replay',
  );
  const refreshed = await token(h.baseUrl, {
    grant_type: 'refresh_token',
    client_id: granted.clientId,
    refresh_token: granted.refresh,
  });
  assert.equal(refreshed.body.error, 'invalid_grant', 'the revoked grant’s refresh token still works');
});

test('refresh tokens rotate; a used one replayed revokes the grant', async () => {
  const { session } = await makeSignedInTenant(h);
  const granted = await grantAccess(h.baseUrl, resource, session, ['integrations:OPERATOR']);
  remember(granted);
  const first = await token(h.baseUrl, {
    grant_type: 'refresh_token',
    client_id: granted.clientId,
    refresh_token: granted.refresh,
    resource,
  });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  never.push(first.body.access_token ?? '', first.body.refresh_token ?? '');
  assert.notEqual(first.body.refresh_token, granted.refresh, 'the refresh token did not rotate');
  assert.equal(first.body.expires_in, 3600 as unknown as string, 'the access token is not valid for an hour');
  assert.equal(first.body.scope, 'integrations:OPERATOR', 'the refreshed scopes differ from the grant’s');
  assert.equal(await mcpStatus(first.body.access_token ?? ''), 200, 'the refreshed access token is refused');
  const otherClient = await token(h.baseUrl, {
    grant_type: 'refresh_token',
    client_id: String((await registerClient(h.baseUrl)).body.client_id),
    refresh_token: first.body.refresh_token,
  });
  assert.equal(otherClient.body.error, 'invalid_grant', 'another client used the refresh token');

  const replayed = await token(h.baseUrl, {
    grant_type: 'refresh_token',
    client_id: granted.clientId,
    refresh_token: granted.refresh,
  });
  assert.equal(replayed.body.error, 'invalid_grant', 'a replayed refresh token was taken');
  // Two holders of one refresh token: neither keeps access.
  assert.equal(
    await mcpStatus(first.body.access_token ?? ''),
    401,
    'the grant survived a refresh token replay',
  );
  const rotated = await token(h.baseUrl, {
    grant_type: 'refresh_token',
    client_id: granted.clientId,
    refresh_token: first.body.refresh_token,
  });
  assert.equal(
    rotated.body.error,
    'invalid_grant',
    'the rotated refresh token works after a replay revoked the grant',
  );
});

test('grants are listed with their last use and revoked on the API keys page', async () => {
  const { session } = await makeSignedInTenant(h);
  const granted = await grantAccess(h.baseUrl, resource, session, ['integrations:READER']);
  remember(granted);
  assert.equal(await mcpStatus(granted.access), 200, 'the fresh grant’s access token is refused');
  const listed = await waitUntil(
    async () => {
      const r = await h.request('GET', '/api/v1/company/oauth-grants', { session });
      const [grant] = r.body.data as Array<Record<string, unknown>>;
      return grant?.lastUsedAt ? grant : false;
    },
    { message: 'the grant’s last use' },
  );
  assert.deepEqual(
    listed.client,
    { id: granted.clientId, name: 'Test agent' },
    'the grant lists the wrong client',
  );
  assert.deepEqual(listed.scopes, ['integrations:READER'], 'the grant lists the wrong scopes');
  const other = await makeSignedInTenant(h);
  const theirs = await h.request('GET', '/api/v1/company/oauth-grants', { session: other.session });
  assert.deepEqual(theirs.body.data, [], 'another tenant sees the grant');
  const notTheirs = await h.request('DELETE', `/api/v1/company/oauth-grants/${String(listed.id)}`, {
    session: other.session,
  });
  assert.equal(notTheirs.status, 404, 'another tenant revoked the grant');

  const revoked = await h.request('DELETE', `/api/v1/company/oauth-grants/${String(listed.id)}`, { session });
  assert.equal(revoked.status, 204, revoked.text);
  // This process forgets it at once (other processes within 1 s: test/access/revocation-across-processes.test.ts).
  assert.equal(await mcpStatus(granted.access), 401, 'a revoked grant’s token still works in this process');
  const after = await h.request('GET', '/api/v1/company/oauth-grants', { session });
  assert.deepEqual(after.body.data, [], 'a revoked grant is still listed');
  const audit = await h.request('GET', '/api/v1/company/audit-log', { session });
  const actions = (audit.body.data as Array<{ action: string }>).map((row) => row.action);
  assert.ok(actions.includes('mcp_grant.create') && actions.includes('mcp_grant.revoke'), audit.text);
});

test('a tool call with a grant is audited as the grant, via MCP', async () => {
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, 'https://hooks.example.com/c');
  shownOnce.push(hook.secret);
  const granted = await grantAccess(h.baseUrl, resource, session, ['integrations:OPERATOR']);
  remember(granted);
  const agent = await connectAgent(h, granted.access);
  const paused = await agent.tool('pause_connection', { connectionId: hook.id });
  assert.equal(paused.isError, undefined, JSON.stringify(paused));
  await agent.close();
  const audit = await h.request('GET', '/api/v1/company/audit-log', { session });
  type Row = { action: string; actorType: string; actorId: string; metadata: Record<string, unknown> };
  const row = (audit.body.data as Row[]).find((r) => r.action === 'connection.pause');
  assert.equal(row?.actorType, 'mcp_grant', audit.text);
  assert.match(row?.actorId ?? '', /^mcg_/, 'the actor is not the grant');
  assert.equal(row?.metadata.via, 'mcp', 'the audit row is not marked via mcp');
});

test('a demoted person’s grants shrink to their role; a removed person’s end', async () => {
  const { tenant, session: admin } = await makeSignedInTenant(h);
  const approver = await makeUser(h, tenant.id, { role: 'COMPANY_IT_ADMIN' });
  const approverSession = await signIn(h, approver);
  const granted = await grantAccess(h.baseUrl, resource, approverSession, ['integrations:OPERATOR']);
  remember(granted);
  assert.ok((await toolNames(granted.access)).includes('pause_connection'), 'an OPERATOR grant cannot pause');
  const demoted = await h.request('PATCH', `/api/v1/company/users/${approver.id}`, {
    session: admin,
    body: { role: 'MEMBER' },
  });
  assert.equal(demoted.status, 200, demoted.text);
  // Within the second a revocation takes: the cached grant is re-read.
  const names = await waitUntil(
    async () => {
      const now = await toolNames(granted.access);
      return now.includes('pause_connection') ? false : now;
    },
    { message: 'the demoted person’s grant shrinking', timeoutMs: 3_000 },
  );
  assert.deepEqual(
    names,
    [...READ_TOOLS].sort(),
    'the demoted person’s grant did not shrink to the read tools',
  );
  const removed = await h.request('DELETE', `/api/v1/company/users/${approver.id}`, { session: admin });
  assert.equal(removed.status, 204, removed.text);
  await waitUntil(async () => (await mcpStatus(granted.access)) === 401, {
    message: 'the removed person’s grant ending',
    timeoutMs: 3_000,
  });
});

// Last in this file: the purge runs as of two days ahead, over every test's rows.
test('retention: a client never used goes after a day; a granted one stays, its expired tokens go', async () => {
  const lone = await registerClient(h.baseUrl);
  const { session } = await makeSignedInTenant(h);
  const granted = await grantAccess(h.baseUrl, resource, session, ['integrations:READER']);
  remember(granted);
  const deleted = await purgeMcpOAuth(h.database.kysely, new Date(Date.now() + 2 * 86_400_000));
  assert.ok(deleted > 0, 'the purge deleted nothing');
  const gone = await authorize(h.baseUrl, {
    response_type: 'code',
    client_id: String(lone.body.client_id),
    redirect_uri: REDIRECT_URI,
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
  });
  assert.equal(gone.status, 400, 'an unused client outlived the purge');
  const grants = await h.request('GET', '/api/v1/company/oauth-grants', { session });
  assert.equal(grants.body.data.length, 1, 'the purge took a grant in force');
  // The access token's hour is over (its row is gone); the refresh token's 30 days are not.
  assert.equal(await mcpStatus(granted.access), 401, 'an expired access token’s row outlived the purge');
  const refreshed = await token(h.baseUrl, {
    grant_type: 'refresh_token',
    client_id: granted.clientId,
    refresh_token: granted.refresh,
  });
  never.push(refreshed.body.access_token ?? '', refreshed.body.refresh_token ?? '');
  assert.equal(
    refreshed.status,
    200,
    `the purge took a refresh token in force: ${JSON.stringify(refreshed.body)}`,
  );
});
