import { createHash, timingSafeEqual } from 'node:crypto';
import {
  InvalidClientError,
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  UnsupportedGrantTypeError,
  UnsupportedResponseTypeError,
  type OAuthError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { OAuthClientMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import {
  KEY_MANAGING_ROLES,
  levelRank,
  LEVELS,
  parseScope,
  roleLevel,
  type Role,
} from '../access/catalog.js';
import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { generateToken } from '../crypto/api-tokens.js';
import { randomBase62 } from '../crypto/base62.js';
import { newId } from '../crypto/ids.js';
import { fieldProblem, HttpProblem, notFound } from '../http/problem.js';
import {
  findAuthRequest,
  findClient,
  insertAuthRequest,
  insertClient,
  insertGrant,
  insertTokens,
  listGrants,
  revokeGrant,
  revokeGrantById,
  takeAuthRequest,
  useCode,
  useRefreshToken,
  type GrantListing,
} from './store.js';

// OAuth for MCP clients (docs/api/mcp.md, docs/decisions/0087-…): hubgate is the authorization
// server of one resource, its MCP route. The SDK gives the wire vocabulary (client metadata schema,
// error classes with their RFC 6749 codes); the flow itself is this module, over hubgate's own
// sessions, roles and tables.

export const ACCESS_TOKEN_SECONDS = 3_600;
const REFRESH_TOKEN_SECONDS = 30 * 86_400;
const CODE_SECONDS = 60;
const REQUEST_SECONDS = 600;

/** The MCP route's URL: the one resource (RFC 8707) hubgate's tokens are for. */
export const mcpResourceOf = (publicUrl: URL): string => new URL('/api/v1/mcp', publicUrl).href;

/** The scopes an MCP client may ask for: those its tools need (docs/api/mcp.md's tool table). */
export const MCP_SCOPES = ['integration_hub:READER', 'integrations:READER', 'integrations:OPERATOR'] as const;

const MAX_REDIRECT_URIS = 10;
const MAX_NAME = 200;

/** An `https` URI, or `http` on a loopback host (RFC 8252 §7.3), without a fragment. */
function isAllowedRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash !== '' || value.length > 2_000) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: 'none';
  grant_types: string[];
  response_types: string[];
}

/** RFC 7591: a public client, no secret. Anything else it asks is an `invalid_client_metadata`. */
export async function registerClient(ctx: AppContext, body: unknown): Promise<RegisteredClient> {
  const parsed = OAuthClientMetadataSchema.safeParse(body);
  if (!parsed.success) throw new InvalidClientMetadataError('The client metadata is not valid (RFC 7591).');
  const metadata = parsed.data;
  const uris = metadata.redirect_uris;
  if (uris.length === 0 || uris.length > MAX_REDIRECT_URIS || !uris.every(isAllowedRedirectUri)) {
    throw new InvalidClientMetadataError(
      `redirect_uris: 1 to ${MAX_REDIRECT_URIS} URIs on https, or http on a loopback address, without a fragment.`,
    );
  }
  if ((metadata.token_endpoint_auth_method ?? 'none') !== 'none') {
    throw new InvalidClientMetadataError('token_endpoint_auth_method: only "none" (a public client, PKCE).');
  }
  const grantTypes = metadata.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!grantTypes.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
    throw new InvalidClientMetadataError('grant_types: authorization_code and refresh_token only.');
  }
  if (!(metadata.response_types ?? ['code']).every((r) => r === 'code')) {
    throw new InvalidClientMetadataError('response_types: code only.');
  }
  const name = (metadata.client_name ?? 'MCP client').trim().slice(0, MAX_NAME) || 'MCP client';
  const now = ctx.now();
  const id = newId('mcc');
  await insertClient(ctx.db, { id, name, redirect_uris: uris, created_at: now });
  return {
    client_id: id,
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    client_name: name,
    redirect_uris: uris,
    token_endpoint_auth_method: 'none',
    grant_types: grantTypes,
    response_types: ['code'],
  };
}

/** What /oauth/authorize answers: a page (no redirect may be trusted), or where to send the browser. */
export type AuthorizeOutcome = { kind: 'page'; message: string } | { kind: 'redirect'; location: string };

const withParams = (uri: string, params: Record<string, string | undefined>): string => {
  const url = new URL(uri);
  for (const [name, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
};

/**
 * GET /oauth/authorize. The client and its redirect URI are checked first: until both are known
 * good, an error is a page, never a redirect (RFC 6749 §4.1.2.1). After that, errors go back to the
 * client; a good request waits for a person's consent at PUBLIC_URL/consent.
 */
export async function authorize(
  ctx: AppContext,
  publicUrl: URL,
  query: Record<string, string | undefined>,
): Promise<AuthorizeOutcome> {
  const client = query.client_id ? await findClient(ctx.db, query.client_id) : undefined;
  if (!client)
    return { kind: 'page', message: 'This application is not registered with hubgate (unknown client_id).' };
  const redirectUri =
    query.redirect_uri ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
  if (redirectUri === undefined || !client.redirect_uris.includes(redirectUri)) {
    return { kind: 'page', message: 'The redirect URI is not one this application registered.' };
  }
  const back = (error: OAuthError) => ({
    kind: 'redirect' as const,
    location: withParams(redirectUri, {
      error: error.errorCode,
      error_description: error.message,
      state: query.state,
      iss: publicUrl.origin,
    }),
  });
  if (query.response_type !== 'code')
    return back(new UnsupportedResponseTypeError('response_type must be code.'));
  if (!query.code_challenge || query.code_challenge_method !== 'S256') {
    return back(new InvalidRequestError('PKCE is required: code_challenge with code_challenge_method S256.'));
  }
  if (!/^[A-Za-z0-9_-]{43}$/.test(query.code_challenge)) {
    return back(new InvalidRequestError('code_challenge must be a base64url SHA-256 (43 characters).'));
  }
  if (query.resource !== undefined && query.resource !== mcpResourceOf(publicUrl)) {
    return back(new InvalidTargetError(`resource must be ${mcpResourceOf(publicUrl)}.`));
  }
  const asked = (query.scope ?? MCP_SCOPES.join(' ')).split(' ').filter((s) => s !== '');
  if (asked.length === 0 || asked.length > 30 || !asked.every((s) => parseScope(s) !== undefined)) {
    return back(new InvalidScopeError('scope: space-separated scopes such as integrations:READER.'));
  }
  const id = newId('mcq');
  await insertAuthRequest(ctx.db, {
    id,
    client_id: client.id,
    redirect_uri: redirectUri,
    state: query.state?.slice(0, 1_000) ?? null,
    code_challenge: query.code_challenge,
    scopes: [...new Set(asked)],
    expires_at: new Date(ctx.now().getTime() + REQUEST_SECONDS * 1000),
  });
  return { kind: 'redirect', location: withParams(new URL('/consent', publicUrl).href, { request: id }) };
}

/** The asked scopes a person of `role` may grant on a tenant with these entitlements. */
export function grantableScopes(
  asked: readonly string[],
  role: Role,
  entitlements: readonly string[],
): string[] {
  const ceiling = levelRank(roleLevel(role));
  return asked.filter((scope) => {
    const parsed = parseScope(scope);
    return parsed !== undefined && entitlements.includes(parsed.module) && levelRank(parsed.level) <= ceiling;
  });
}

/**
 * A grant's scopes as its approving person's role reaches them now: a scope above the role's level
 * comes down to it (docs/decisions/0087-…: a demoted person's grants shrink).
 */
export function scopesWithinRole(scopes: readonly string[], role: Role): string[] {
  const ceiling = levelRank(roleLevel(role));
  const capped = scopes.flatMap((scope) => {
    const parsed = parseScope(scope);
    if (!parsed) return [];
    const level = LEVELS[Math.min(levelRank(parsed.level), ceiling)];
    return [`${parsed.module}:${level}`];
  });
  return [...new Set(capped)];
}

export interface ConsentView {
  client: { name: string; redirectUri: string };
  tenant: { id: string; name: string };
  scopes: string[];
}

export interface Approver {
  userId: string;
  role: Role;
  tenant: { id: string; name: string };
}

export async function consentView(
  ctx: AppContext,
  scope: TenantScope,
  approver: Approver,
  requestId: string,
): Promise<ConsentView> {
  const request = await findAuthRequest(ctx.db, requestId, ctx.now());
  if (!request)
    throw notFound('authorization request (it may have expired: start again from the application)');
  return {
    client: { name: request.client_name, redirectUri: request.redirect_uri },
    tenant: approver.tenant,
    scopes: grantableScopes(request.scopes, approver.role, scope.entitlements),
  };
}

/** A person's answer to a request: the client's redirect URI with a code, or with access_denied. */
export async function decideConsent(
  ctx: AppContext,
  scope: TenantScope,
  approver: Approver,
  origin: AuditOrigin,
  publicUrl: URL,
  answer: { request: string; approve: boolean; scopes?: string[] },
): Promise<{ redirectUri: string }> {
  const now = ctx.now();
  const pending = await findAuthRequest(ctx.db, answer.request, now);
  if (!pending)
    throw notFound('authorization request (it may have expired: start again from the application)');
  const grantable = grantableScopes(pending.scopes, approver.role, scope.entitlements);
  const chosen = answer.scopes ?? grantable;
  if (answer.approve) {
    const beyond = chosen.filter((s) => !grantable.includes(s));
    if (beyond.length > 0)
      throw fieldProblem('scopes', `not among those asked and grantable: ${beyond.join(', ')}`);
    if (chosen.length === 0) throw fieldProblem('scopes', 'choose at least one scope, or deny.');
  }
  const iss = publicUrl.origin;
  return ctx.db.transaction().execute(async (trx) => {
    const request = await takeAuthRequest(trx, answer.request, now);
    if (!request) throw notFound('authorization request (it was answered already)');
    const state = request.state ?? undefined;
    if (!answer.approve) {
      return { redirectUri: withParams(request.redirect_uri, { error: 'access_denied', state, iss }) };
    }
    const code = randomBase62(43);
    const grantId = newId('mcg');
    await insertGrant(trx, scope, {
      id: grantId,
      tenant_id: scope.tenantId,
      client_id: request.client_id,
      user_id: approver.userId,
      scopes: [...new Set(chosen)],
      redirect_uri: request.redirect_uri,
      code_hash: ctx.keyring.hashToken('token-hash', `code:${code}`),
      code_challenge: request.code_challenge,
      code_expires_at: new Date(now.getTime() + CODE_SECONDS * 1000),
      code_used_at: null,
      created_at: now,
      last_used_at: null,
      revoked_at: null,
    });
    await recordAudit(trx, origin, {
      tenantId: scope.tenantId,
      action: 'mcp_grant.create',
      targetType: 'mcp_grant',
      targetId: grantId,
      metadata: { clientId: request.client_id, clientName: pending.client_name, scopes: chosen },
    });
    return { redirectUri: withParams(request.redirect_uri, { code, state, iss }) };
  });
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const pkceMatches = (verifier: string, challenge: string): boolean => {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
};

/** Callbacks the token endpoint tells of a grant ended, so this process forgets its tokens at once. */
export type GrantEnded = (grantId: string) => void;

/** POST /oauth/token: `authorization_code` (with PKCE) or `refresh_token`; both rotate the refresh token. */
export async function exchangeToken(
  ctx: AppContext,
  publicUrl: URL,
  form: Record<string, string | undefined>,
  ended: GrantEnded,
): Promise<TokenAnswer> {
  const now = ctx.now();
  if (!form.client_id) throw new InvalidClientError('client_id is required (a public client).');
  if (form.resource !== undefined && form.resource !== mcpResourceOf(publicUrl)) {
    throw new InvalidTargetError(`resource must be ${mcpResourceOf(publicUrl)}.`);
  }
  if (form.grant_type === 'authorization_code') {
    if (!form.code || !form.code_verifier)
      throw new InvalidRequestError('code and code_verifier are required.');
    const found = await useCode(ctx.db, ctx.keyring.hashToken('token-hash', `code:${form.code}`), now);
    if (!found) throw new InvalidGrantError('The code is not valid.');
    const { grant } = found;
    if (!found.first) {
      // A code used twice was stolen or replayed: whoever holds its tokens loses them (RFC 6749 §4.1.2).
      if (grant.code_used_at !== null) {
        await revokeGrantById(ctx.db, grant.id, now);
        ended(grant.id);
      }
      throw new InvalidGrantError('The code is not valid (expired, or used before: its grant is revoked).');
    }
    if (grant.client_id !== form.client_id)
      throw new InvalidGrantError('The code was issued to another client.');
    if (form.redirect_uri !== undefined && form.redirect_uri !== grant.redirect_uri) {
      throw new InvalidGrantError('redirect_uri differs from the authorization request.');
    }
    if (!pkceMatches(form.code_verifier, grant.code_challenge)) {
      throw new InvalidGrantError('code_verifier does not match the code_challenge.');
    }
    return issueTokens(ctx, grant.id, grant.scopes, now);
  }
  if (form.grant_type === 'refresh_token') {
    if (!form.refresh_token) throw new InvalidRequestError('refresh_token is required.');
    const found = await useRefreshToken(ctx.db, ctx.keyring.hashToken('token-hash', form.refresh_token), now);
    if (!found || found.grant.client_id !== form.client_id)
      throw new InvalidGrantError('The refresh token is not valid.');
    if (!found.first) {
      // Rotation's point: a refresh token used twice means two holders; end the grant (RFC 9700 §4.14.2).
      await revokeGrantById(ctx.db, found.grant.id, now);
      ended(found.grant.id);
      throw new InvalidGrantError('The refresh token was used before: its grant is revoked.');
    }
    if (found.grant.revoked_at !== null) throw new InvalidGrantError('The grant is revoked.');
    return issueTokens(ctx, found.grant.id, found.grant.scopes, now);
  }
  throw new UnsupportedGrantTypeError('grant_type: authorization_code or refresh_token.');
}

async function issueTokens(
  ctx: AppContext,
  grantId: string,
  scopes: string[],
  now: Date,
): Promise<TokenAnswer> {
  const access = generateToken('oat_');
  const refresh = generateToken('ort_');
  await insertTokens(ctx.db, grantId, [
    {
      hash: ctx.keyring.hashToken('token-hash', access),
      kind: 'access',
      expiresAt: new Date(now.getTime() + ACCESS_TOKEN_SECONDS * 1000),
    },
    {
      hash: ctx.keyring.hashToken('token-hash', refresh),
      kind: 'refresh',
      expiresAt: new Date(now.getTime() + REFRESH_TOKEN_SECONDS * 1000),
    },
  ]);
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    refresh_token: refresh,
    scope: scopes.join(' '),
  };
}

export interface GrantRecord {
  id: string;
  client: { id: string; name: string };
  scopes: string[];
  approvedBy: string;
  createdAt: string;
  lastUsedAt: string | null;
}

const recordOf = (g: GrantListing): GrantRecord => ({
  id: g.id,
  client: { id: g.client_id, name: g.client_name },
  scopes: g.scopes,
  approvedBy: g.user_email,
  createdAt: new Date(g.created_at).toISOString(),
  lastUsedAt: g.last_used_at ? new Date(g.last_used_at).toISOString() : null,
});

export async function tenantGrants(ctx: AppContext, scope: TenantScope): Promise<GrantRecord[]> {
  return (await listGrants(ctx.db, scope)).map(recordOf);
}

export async function endGrant(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  grantId: string,
  ended: GrantEnded,
): Promise<void> {
  const now = ctx.now();
  await ctx.db.transaction().execute(async (trx) => {
    const grant = await revokeGrant(trx, scope, grantId, now);
    if (!grant) throw notFound('grant');
    await recordAudit(trx, origin, {
      tenantId: scope.tenantId,
      action: 'mcp_grant.revoke',
      targetType: 'mcp_grant',
      targetId: grantId,
      metadata: { clientId: grant.client_id },
    });
  });
  ended(grantId);
}

/** Only the key-managing roles approve: a grant is a key by another name. */
export function assertMayApprove(role: Role): void {
  if (!KEY_MANAGING_ROLES.includes(role)) {
    throw new HttpProblem(
      'role_forbidden',
      `The role ${role} cannot give an application access (key-managing roles only).`,
    );
  }
}
