import { createHash, randomBytes } from 'node:crypto';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import { connectionOr404 } from '../connections/connections.js';
import type { AppContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { errorFields } from '../logger.js';
import { redactText, spellingsOf } from '../outbound/redact.js';
import { setAuthorization } from './authorization.js';
import { clientSecretOf } from './providers.js';
import { deleteExpiredStates, insertState, takeState } from './store.js';
import { requestTokens } from './token-endpoint.js';
import { providerOf, tokenClientOf, type TokenDeps } from './tokens.js';

/** What the connect flow needs beyond tokens: PUBLIC_URL (the redirect URI, the pages) and the log. */
export interface AuthorizeDeps extends TokenDeps {
  ctx: TokenDeps['ctx'] & Pick<AppContext, 'config' | 'log'>;
}

// An authorization started must come back within this; a state is single use either way.
export const STATE_TTL_MS = 10 * 60 * 1000;
export const CALLBACK_PATH = '/api/v1/oauth/callback';

export const redirectUriOf = (deps: AuthorizeDeps) => new URL(CALLBACK_PATH, deps.ctx.config.publicUrl).href;
const stateHashOf = (deps: AuthorizeDeps, state: string) => deps.ctx.keyring.hashToken('oauth', state);
const verifierContext = (stateHash: string) => `state:${stateHash}`;

/**
 * Starts the authorization-code flow for a connection (RFC 6749 §4.1 with PKCE S256, RFC 7636): a
 * single-use `state`, bound to this user and connection for STATE_TTL_MS and stored as a keyed hash,
 * and a code verifier stored sealed. Answers the provider's URL for the browser.
 */
export async function startAuthorization(
  deps: AuthorizeDeps,
  scope: TenantScope,
  userId: string,
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
    user_id: userId,
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

/** Where the browser goes after the callback: the connection's page, or the list when none is known. */
function pageOf(deps: AuthorizeDeps, connectionId: string | null, outcome: { error?: string }): string {
  const path = connectionId ? `/connections/${encodeURIComponent(connectionId)}` : '/connections';
  const url = new URL(path, deps.ctx.config.publicUrl);
  if (outcome.error === undefined) url.searchParams.set('authorized', 'true');
  else url.searchParams.set('authorizationError', outcome.error);
  return url.href;
}

// Printable ASCII only, shortened: the provider's words are shown to the person, never as markup.
const printable = (text: string) => text.replace(/[^\x20-\x7e]/g, ' ').slice(0, 200);

/**
 * The provider sends the browser back here (RFC 6749 §4.1.2). The state is taken (deleted) first,
 * so it works once; it must belong to this tenant and user and be unexpired. The code is exchanged
 * with the PKCE verifier, the client authenticated with HTTP Basic, and the tokens bound to the
 * connection. Answers where to send the browser, saying in words what failed when something did.
 */
export async function finishAuthorization(
  deps: AuthorizeDeps,
  scope: TenantScope,
  origin: AuditOrigin,
  caller: { userId: string; mayAuthorize: boolean },
  query: CallbackQuery,
): Promise<string> {
  const { db, keyring } = deps.ctx;
  const { userId } = caller;
  if (!query.state) {
    return pageOf(deps, null, { error: 'The provider sent no state back: start again with Authorize.' });
  }
  const stateHash = stateHashOf(deps, query.state);
  const state = await takeState(db, scope, stateHash);
  if (!state) {
    return pageOf(deps, null, {
      error: 'This authorization was already used, or was not started here: start again with Authorize.',
    });
  }
  const back = (error?: string) => pageOf(deps, state.connection_id, { error });
  if (state.user_id !== userId) {
    return back('This authorization was started by someone else: start again with Authorize.');
  }
  if (new Date(state.expires_at).getTime() <= origin.at.getTime()) {
    return back('This authorization took longer than 10 minutes: start again with Authorize.');
  }
  // Checked now, not only when it started: a role or module lost meanwhile binds nothing.
  if (!caller.mayAuthorize) {
    return back('You may no longer authorize connections here (integrations:ADMIN); nothing was bound.');
  }
  if (query.error !== undefined) {
    // The provider's words may repeat its client secret: hidden before they are cut (decision 0065).
    const secret = spellingsOf(await clientSecretsOf(deps, scope, state.connection_id));
    const shown = (text: string) => printable(redactText(text, secret));
    const words = query.error_description ? `: ${shown(query.error_description)}` : '';
    return back(`The provider did not authorize hubgate (${shown(query.error)})${words}.`);
  }
  if (!query.code) return back('The provider sent no authorization code back: start again with Authorize.');
  const verifier = keyring.open('oauth', state.verifier_sealed, verifierContext(stateHash));
  try {
    return back(await exchangeAndBind(deps, scope, origin, state.connection_id, query.code, verifier));
  } catch (error) {
    // The page must say something even then; the log has the rest (never a token: none is in the error).
    if (error instanceof HttpProblem) return back(error.detail ?? error.message);
    deps.ctx.log.error(errorFields(error), 'binding OAuth tokens failed');
    return back('Something went wrong on hubgate’s side; nothing was bound. Try again.');
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
  origin: AuditOrigin,
  connectionId: string,
  code: string,
  verifier: string,
): Promise<string | undefined> {
  const { db, keyring } = deps.ctx;
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
    return undefined;
  });
}
