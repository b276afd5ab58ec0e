import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';

// The OAuth flow of an MCP client against hubgate over plain HTTP (docs/api/mcp.md), as a desktop
// agent runs it, with a person's consent given through the consent route the page calls. The
// browser's part (the consent page) is test/web/mcp-consent.test.ts.

export const REDIRECT_URI = 'http://127.0.0.1:8976/callback';

export interface SessionHeaders {
  cookie: string;
  csrfToken: string;
}

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function registerClient(
  baseUrl: string,
  metadata: Record<string, unknown> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test agent', redirect_uris: [REDIRECT_URI], ...metadata }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** GET /oauth/authorize, never following: the status, the Location, and the page's text. */
export async function authorize(
  baseUrl: string,
  params: Record<string, string | undefined>,
): Promise<{ status: number; location: string | null; text: string }> {
  const query = new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const r = await fetch(`${baseUrl}/oauth/authorize?${query}`, { redirect: 'manual' });
  return { status: r.status, location: r.headers.get('location'), text: await r.text() };
}

export async function token(
  baseUrl: string,
  form: Record<string, string | undefined>,
): Promise<{ status: number; body: Record<string, string> }> {
  const body = new URLSearchParams(
    Object.entries(form).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const r = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body,
  });
  return { status: r.status, body: (await r.json()) as Record<string, string> };
}

export async function consent(
  baseUrl: string,
  session: SessionHeaders,
  body: { request: string; approve: boolean; scopes?: string[] },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${baseUrl}/api/v1/oauth/consent`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      cookie: session.cookie,
      'x-csrf-token': session.csrfToken,
    },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** A code for `clientId`: authorize (without resource, as the parameter is optional) and approve. */
export async function approvedCode(
  baseUrl: string,
  session: SessionHeaders,
  clientId: string,
  challenge: string,
  scopes?: string[],
): Promise<string> {
  const asked = await authorize(baseUrl, {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  assert.equal(asked.status, 302, `authorizing answered ${asked.status}: ${asked.text}`);
  const request = new URL(asked.location ?? '').searchParams.get('request') ?? '';
  const answer = await consent(baseUrl, session, { request, approve: true, scopes });
  assert.equal(answer.status, 200, `approving answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return new URL(String(answer.body.redirectUri)).searchParams.get('code') ?? '';
}

export interface Granted {
  clientId: string;
  /** The authorization request the consent answered (answered: no one can open it again). */
  request: string;
  code: string;
  pkce: Pkce;
  access: string;
  refresh: string;
}

/** The whole flow: register, authorize, approve `scopes`, exchange the code. */
export async function grantAccess(
  baseUrl: string,
  resource: string | undefined,
  session: SessionHeaders,
  scopes: string[],
): Promise<Granted> {
  const client = await registerClient(baseUrl);
  assert.equal(client.status, 201, JSON.stringify(client.body));
  const clientId = String(client.body.client_id);
  const verifier = pkce();
  const asked = await authorize(baseUrl, {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    state: 'st-1',
    code_challenge: verifier.challenge,
    code_challenge_method: 'S256',
    resource,
    scope: scopes.join(' '),
  });
  assert.equal(asked.status, 302, asked.text);
  const request = new URL(asked.location ?? '').searchParams.get('request') ?? '';
  const approved = await consent(baseUrl, session, { request, approve: true, scopes });
  assert.equal(approved.status, 200, JSON.stringify(approved.body));
  const back = new URL(String(approved.body.redirectUri));
  assert.equal(back.searchParams.get('state'), 'st-1', 'the state did not come back');
  const code = back.searchParams.get('code') ?? '';
  const tokens = await token(baseUrl, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier.verifier,
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    resource,
  });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  return {
    clientId,
    request,
    code,
    pkce: verifier,
    access: tokens.body.access_token ?? '',
    refresh: tokens.body.refresh_token ?? '',
  };
}
