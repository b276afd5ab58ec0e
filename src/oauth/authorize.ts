import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { SessionPrincipal } from '../access/principal.js';
import { tenantRule } from '../access/rules.js';
import { authorizationReturnScopeOf, type TenantScope } from '../access/scope.js';
import { connectionOr404 } from '../connections/connections.js';
import type { AppContext } from '../context.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import { errorFields } from '../logger.js';
import { redactText, spellingsOf } from '../outbound/redact.js';
import { getTenant } from '../tenants/tenants.js';
import { setAuthorization } from './authorization.js';
import { clientSecretOf } from './providers.js';
import { deleteExpiredStates, findStateByHash, insertState, takeState, type StateRow } from './store.js';
import { requestTokens } from './token-endpoint.js';
import { providerOf, tokenClientOf, type TokenDeps } from './tokens.js';

/** What the connect flow needs beyond tokens: PUBLIC_URL (the redirect URI, the pages), the log, the tenants. */
export interface AuthorizeDeps extends TokenDeps {
  ctx: TokenDeps['ctx'] & AppContext;
}

// An authorization started must come back within this; a state is single use either way.
export const STATE_TTL_MS = 10 * 60 * 1000;
export const CALLBACK_PATH = '/api/v1/oauth/callback';

/**
 * Who may start an authorization: a person with integrations:ADMIN (no automation key), or a portal
 * session of `manage` access. Checked again at the callback, for whoever started it.
 */
export const AUTHORIZE_RULE = tenantRule('integrations', 'ADMIN', { automation: false, portal: 'manage' });

/** Who started an authorization, and gets it back at the callback: exactly one of them. */
export type StateOwner = { userId: string } | { portalSessionId: string } | { connectSessionId: string };

export const redirectUriOf = (deps: AuthorizeDeps) => new URL(CALLBACK_PATH, deps.ctx.config.publicUrl).href;
const stateHashOf = (deps: AuthorizeDeps, state: string) => deps.ctx.keyring.hashToken('oauth', state);
const verifierContext = (stateHash: string) => `state:${stateHash}`;

/**
 * Starts the authorization-code flow for a connection (RFC 6749 §4.1 with PKCE S256, RFC 7636): a
 * single-use `state`, bound to its owner (a user, a portal session or a connect link) and the
 * connection for STATE_TTL_MS and stored as a keyed hash, and a code verifier stored sealed.
 * Answers the provider's URL for the browser.
 */
export async function startAuthorization(
  deps: AuthorizeDeps,
  scope: TenantScope,
  owner: StateOwner,
  connectionId: string,
): Promise<{ authorizationUrl: string }> {
  const { db, keyring } = deps.ctx;
  const row = await connectionOr404(db, scope, connectionId);
  const provider = await providerOf(db, row);
  if (row.status === 'disabled') {
    throw new HttpProblem('conflict', 'The connection is disabled; create a new one instead.');
  }
  if (provider.grant_type !== 'authorization_code' || !provider.authorization_url) {
    throw new HttpProblem(
      'conflict',
      'This provider uses client credentials: its connections are bound when created, without a browser.',
    );
  }
  const now = deps.ctx.now();
  const state = randomBytes(32).toString('base64url');
  const verifier = randomBytes(32).toString('base64url');
  const stateHash = stateHashOf(deps, state);
  await deleteExpiredStates(db, now);
  await insertState(db, scope, {
    state_hash: stateHash,
    tenant_id: scope.tenantId,
    connection_id: row.id,
    user_id: 'userId' in owner ? owner.userId : null,
    portal_session_id: 'portalSessionId' in owner ? owner.portalSessionId : null,
    connect_session_id: 'connectSessionId' in owner ? owner.connectSessionId : null,
    verifier_sealed: keyring.seal('oauth', verifier, verifierContext(stateHash)),
    created_at: now,
    expires_at: new Date(now.getTime() + STATE_TTL_MS),
  });
  const url = new URL(provider.authorization_url);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', provider.client_id);
  url.searchParams.set('redirect_uri', redirectUriOf(deps));
  if (provider.scopes.length > 0) url.searchParams.set('scope', provider.scopes.join(' '));
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', createHash('sha256').update(verifier).digest('base64url'));
  url.searchParams.set('code_challenge_method', 'S256');
  return { authorizationUrl: url.href };
}

export interface CallbackQuery {
  code?: string;
  state?: string;
  error?: string;
  error_description?: string;
}

/** A signed-in person's page after the callback: the connection's, or the list when none is known. */
function userPageOf(deps: AuthorizeDeps, connectionId: string | null, error: string | undefined): string {
  const path = connectionId ? `/connections/${encodeURIComponent(connectionId)}` : '/connections';
  const url = new URL(path, deps.ctx.config.publicUrl);
  if (error === undefined) url.searchParams.set('authorized', 'true');
  else url.searchParams.set('authorizationError', error);
  return url.href;
}

// Printable ASCII only, shortened: the provider's words are shown to the person, never as markup.
const printable = (text: string) => text.replace(/[^\x20-\x7e]/g, ' ').slice(0, 200);

/** What the callback knows of its request: no credential, only where it came from and when. */
export interface CallbackRequest {
  ip: string | null;
  requestId: string | null;
  at: Date;
}

/**
 * The owner of a state, checked again at the callback, as it binds: its audit origin, where the
 * browser goes (`error` in words when something failed), and what else it changes in the binding's
 * transaction (an HttpProblem thrown there binds nothing and its words are shown).
 */
export interface AuthorizationReturn {
  origin: AuditOrigin;
  /** How the words end when the person can try again: "start again with Authorize". */
  again: string;
  page(error?: string): Promise<string> | string;
  bound?(trx: Kysely<DB>, connectionId: string): Promise<void>;
}

/** The owner's check at the callback: how to bind, or where the browser goes with nothing bound. */
export type ReturnCheck = AuthorizationReturn | { refused: string };

/** The check of a portal session's or a connect link's state, in `scope`, the state's tenant's. */
export type OwnerReturn = (
  state: StateRow,
  scope: TenantScope,
  request: CallbackRequest,
) => Promise<ReturnCheck>;

/** The owners that are not a signed-in user: portal/ checks both, and the composition root hands them in. */
export interface StateOwners {
  portalSession: OwnerReturn;
  connectSession: OwnerReturn;
}

/**
 * The signed-in person coming back with a user's state, authenticated only then (a stale cookie must
 * not stop a portal's or a link's return): throws 401 without a session and 403 for a key, as a
 * session route does; `mayAuthorize` is AUTHORIZE_RULE decided for them now.
 */
export type SignedInCaller = () => Promise<{ principal: SessionPrincipal; mayAuthorize: boolean }>;

const AGAIN = 'start again with Authorize';
const noState = (again: string) => `The provider sent no state back: ${again}.`;
const unknownState = (again: string) =>
  `This authorization was already used, or was not started here: ${again}.`;

/**
 * The provider sends the browser back here (RFC 6749 §4.1.2). The state names its tenant and owner;
 * it is taken (deleted) before anything is bound, so it works once, and must be unexpired. A user's
 * state needs that user's session (another tenant's neither binds nor spends it); a portal
 * session's or a connect link's is checked by its owner. The code is exchanged with the PKCE
 * verifier, the client authenticated with HTTP Basic, and the tokens bound to the connection.
 * Answers where to send the browser, saying in words what failed when something did.
 */
export async function finishAuthorization(
  deps: AuthorizeDeps,
  owners: StateOwners,
  request: CallbackRequest & { signedIn: SignedInCaller },
  query: CallbackQuery,
): Promise<string> {
  const { db } = deps.ctx;
  // Nothing says whose it was: the person is sent to hubgate's own connections, as before.
  if (!query.state) return userPageOf(deps, null, noState(AGAIN));
  const stateHash = stateHashOf(deps, query.state);
  const found = await findStateByHash(db, stateHash);
  if (!found) return userPageOf(deps, null, unknownState(AGAIN));
  if (found.user_id !== null) return finishForUser(deps, request, found, stateHash, query);

  // The state's row goes with its tenant (on delete cascade): a tenant gone since found it just before.
  const tenant = await getTenant(deps.ctx, found.tenant_id).catch((error: unknown) => {
    if (error instanceof HttpProblem && error.code === 'not_found') return undefined;
    throw error;
  });
  if (!tenant) return userPageOf(deps, null, unknownState(AGAIN));
  const scope = authorizationReturnScopeOf({ tenantId: tenant.id, entitlements: tenant.entitlements });
  const state = await takeState(db, scope, stateHash);
  if (!state) return userPageOf(deps, null, unknownState(AGAIN));
  const owner = state.portal_session_id !== null ? owners.portalSession : owners.connectSession;
  const check = await owner(state, scope, request);
  if ('refused' in check) return check.refused;
  if (new Date(state.expires_at).getTime() <= request.at.getTime()) {
    return check.page(`This authorization took longer than 10 minutes: ${check.again}.`);
  }
  return bindReturned(deps, scope, check, state, stateHash, query);
}

/** A user's state: today's rules exactly (that user's session, the role checked again). */
async function finishForUser(
  deps: AuthorizeDeps,
  request: CallbackRequest & { signedIn: SignedInCaller },
  found: StateRow,
  stateHash: string,
  query: CallbackQuery,
): Promise<string> {
  const { principal, mayAuthorize } = await request.signedIn();
  // Another tenant's person neither binds nor spends it, nor learns which connection it was for.
  if (principal.tenantId !== found.tenant_id) return userPageOf(deps, null, unknownState(AGAIN));
  const scope = authorizationReturnScopeOf(principal);
  const state = await takeState(deps.ctx.db, scope, stateHash);
  if (!state) return userPageOf(deps, null, unknownState(AGAIN));
  const back = (error?: string) => userPageOf(deps, state.connection_id, error);
  if (state.user_id !== principal.userId) {
    return back(`This authorization was started by someone else: ${AGAIN}.`);
  }
  if (new Date(state.expires_at).getTime() <= request.at.getTime()) {
    return back(`This authorization took longer than 10 minutes: ${AGAIN}.`);
  }
  // Checked now, not only when it started: a role or module lost meanwhile binds nothing.
  if (!mayAuthorize) {
    return back('You may no longer authorize connections here (integrations:ADMIN); nothing was bound.');
  }
  const origin: AuditOrigin = {
    actorType: 'user',
    actorId: principal.userId,
    ip: request.ip,
    requestId: request.requestId,
    at: request.at,
  };
  return bindReturned(deps, scope, { origin, again: AGAIN, page: back }, state, stateHash, query);
}

/** The provider's answer, once the state and its owner have been checked: its refusal, or the code bound. */
async function bindReturned(
  deps: AuthorizeDeps,
  scope: TenantScope,
  owner: AuthorizationReturn,
  state: StateRow,
  stateHash: string,
  query: CallbackQuery,
): Promise<string> {
  if (query.error !== undefined) {
    // The provider's words may repeat its client secret: hidden before they are cut (decision 0065).
    const secret = spellingsOf(await clientSecretsOf(deps, scope, state.connection_id));
    const shown = (text: string) => printable(redactText(text, secret));
    const words = query.error_description ? `: ${shown(query.error_description)}` : '';
    return owner.page(`The provider did not authorize hubgate (${shown(query.error)})${words}.`);
  }
  if (!query.code) return owner.page(`The provider sent no authorization code back: ${owner.again}.`);
  const verifier = deps.ctx.keyring.open('oauth', state.verifier_sealed, verifierContext(stateHash));
  try {
    return await owner.page(
      await exchangeAndBind(deps, scope, owner, state.connection_id, query.code, verifier),
    );
  } catch (error) {
    // The page must say something even then; the log has the rest (never a token: none is in the error).
    if (error instanceof HttpProblem) return owner.page(error.detail ?? error.message);
    deps.ctx.log.error(errorFields(error), 'binding OAuth tokens failed');
    return owner.page('Something went wrong on hubgate’s side; nothing was bound. Try again.');
  }
}

/** The client secret of the connection's provider, to hide; none when it is no OAuth2 connection now. */
async function clientSecretsOf(deps: AuthorizeDeps, scope: TenantScope, connectionId: string) {
  try {
    const provider = await providerOf(deps.ctx.db, await connectionOr404(deps.ctx.db, scope, connectionId));
    return [clientSecretOf(deps.ctx, provider)];
  } catch (error) {
    // Not found, or its provider deleted since: there is no secret the words could hold.
    if (error instanceof HttpProblem) return [];
    throw error;
  }
}

/**
 * The code for tokens (RFC 6749 §4.1.3), with the PKCE verifier, bound to the connection with its row
 * locked, and audited. Answers what failed, in words, or undefined when it is bound.
 */
async function exchangeAndBind(
  deps: AuthorizeDeps,
  scope: TenantScope,
  owner: Pick<AuthorizationReturn, 'origin' | 'bound'>,
  connectionId: string,
  code: string,
  verifier: string,
): Promise<string | undefined> {
  const { db, keyring } = deps.ctx;
  const { origin } = owner;
  const revoked = 'The connection was revoked meanwhile; nothing was bound.';
  // The token call holds no lock: on the embedded database, whose one connection serializes
  // transactions, a row locked across a slow provider would stop every write for as long.
  const seen = await connectionOr404(db, scope, connectionId);
  if (seen.status === 'disabled') return revoked;
  const provider = await providerOf(db, seen);
  const params = {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUriOf(deps),
    code_verifier: verifier,
  };
  const answer = await requestTokens(deps.sender, tokenClientOf(deps, provider), params, deps.ctx.now);
  if (!answer.ok) return `The code could not be exchanged for tokens: ${answer.message}.`;
  return db.transaction().execute(async (trx) => {
    // Revoked while the code was exchanged: a revoked connection is never bound again.
    const row = await connectionOr404(trx, scope, connectionId, { forUpdate: true });
    if (row.status === 'disabled') return revoked;
    const { accessToken, refreshToken, tokenType, expiresAt } = answer.tokens;
    const scopes = answer.tokens.scopes ?? provider.scopes;
    const credentials = { accessToken, refreshToken, tokenType };
    const change = { status: 'authorized' as const, scopes, expiresAt, credentials };
    await setAuthorization(trx, scope, row.id, origin.at, change, keyring);
    await recordAudit(trx, origin, {
      action: 'connection.authorize',
      tenantId: scope.tenantId,
      targetType: 'connection',
      targetId: row.id,
      metadata: {
        connectorKey: row.connector_key,
        scopes,
        expiresAt: expiresAt?.toISOString() ?? null,
        refreshToken: refreshToken !== null,
      },
    });
    await owner.bound?.(trx, row.id);
    return undefined;
  });
}
