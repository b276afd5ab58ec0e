import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import { connectionOr404, type ConnectionRow } from '../connections/connections.js';
import type { InitialAuthorization } from '../connections/connector.js';
import { systemOrigin } from '../connections/state.js';
import type { AppContext } from '../context.js';
import type { DB } from '../db/schema.js';
import { HttpProblem } from '../http/problem.js';
import type { Sender } from '../outbound/sender.js';
import { setAuthorization } from './authorization.js';
import { clientSecretOf, CONNECTOR_PREFIX } from './providers.js';
import {
  findAuthorization,
  findProvider,
  releaseRefreshLease,
  updateAuthorization,
  type ProviderRow,
} from './store.js';
import { requestTokens, type TokenAnswer, type TokenClient, type Tokens } from './token-endpoint.js';

/** What token work needs: the database, the keyring, the clock, and the outbound sender. */
export interface TokenDeps {
  ctx: Pick<AppContext, 'db' | 'keyring' | 'now'>;
  sender: Sender;
  /**
   * How long one refresh may hold a connection's refresh lease: longer than a token call can last
   * (the sender's timeout), so a lease runs out only when its process died mid-refresh.
   */
  refreshLeaseMs?: number;
}

/** The tokens as a connection's credentials hold them (sealed; never shown). */
interface StoredTokens {
  accessToken: string;
  refreshToken: string | null;
  tokenType: string;
}

/** An access token handed to the credential proxy: for its Authorization header and nothing else. */
export interface AccessToken {
  accessToken: string;
  tokenType: string;
  expiresAt: Date | null;
}

/** The provider could not be asked, or answered something unusable: a 502 for the proxy. */
export class TokenEndpointError extends Error {
  override readonly name = 'TokenEndpointError';
}

// A token this close to its expiry is refreshed before use, so it does not expire in flight.
export const REFRESH_MARGIN_MS = 60_000;

const stored = (tokens: Tokens, previous: StoredTokens | null): StoredTokens => ({
  accessToken: tokens.accessToken,
  // A provider that does not rotate sends no new refresh token: the one held stays valid.
  refreshToken: tokens.refreshToken ?? previous?.refreshToken ?? null,
  tokenType: tokens.tokenType,
});

export const providerKeyOf = (connectorKey: string): string | null =>
  connectorKey.startsWith(CONNECTOR_PREFIX) ? connectorKey.slice(CONNECTOR_PREFIX.length) : null;

export async function providerOf(db: Kysely<DB>, row: Pick<ConnectionRow, 'connector_key'>) {
  const key = providerKeyOf(row.connector_key);
  const provider = key === null ? undefined : await findProvider(db, key);
  if (!provider) throw notOAuth2();
  return provider;
}

export const notOAuth2 = () => new HttpProblem('conflict', 'This connection is not an OAuth2 connection.');

export const tokenClientOf = (deps: TokenDeps, provider: ProviderRow): TokenClient => ({
  tokenUrl: provider.token_url,
  clientId: provider.client_id,
  clientSecret: clientSecretOf(deps.ctx, provider),
});

/** Client credentials (RFC 6749 §4.4): the connection's tokens, whenever it needs new ones. */
function clientCredentials(deps: TokenDeps, provider: ProviderRow): Promise<TokenAnswer> {
  const params: Record<string, string> = { grant_type: 'client_credentials' };
  if (provider.scopes.length > 0) params.scope = provider.scopes.join(' ');
  return requestTokens(deps.sender, tokenClientOf(deps, provider), params, deps.ctx.now);
}

/**
 * The first tokens of a client-credentials connection, fetched as it is created; a provider that
 * refuses them refuses the connection (409, saying why).
 */
export async function bindClientCredentials(
  deps: TokenDeps,
  providerKey: string,
): Promise<InitialAuthorization> {
  const provider = await findProvider(deps.ctx.db, providerKey);
  if (!provider) throw new HttpProblem('conflict', 'The OAuth provider no longer exists.');
  const answer = await clientCredentials(deps, provider);
  if (!answer.ok) {
    throw new HttpProblem('conflict', `No token could be obtained from ${provider.name}: ${answer.message}.`);
  }
  return {
    credentials: { ...stored(answer.tokens, null) },
    scopes: answer.tokens.scopes ?? provider.scopes,
    expiresAt: answer.tokens.expiresAt,
  };
}

function openTokens(deps: TokenDeps, row: ConnectionRow): StoredTokens {
  if (row.credentials_sealed === null) throw notAuthorized(row);
  return JSON.parse(
    deps.ctx.keyring.open('connection-credentials', row.credentials_sealed, row.id),
  ) as StoredTokens;
}

function notAuthorized(row: ConnectionRow): HttpProblem {
  if (row.authorization_status === 'expired') {
    return new HttpProblem(
      'conflict',
      'The provider refused to refresh this connection’s authorization: authorize it again.',
    );
  }
  return new HttpProblem('conflict', 'The connection is not authorized yet: authorize it first.');
}

/** The connection can call its provider now: an OAuth2 connection, active, authorized. */
const stoppedProblem = (row: ConnectionRow) =>
  new HttpProblem('conflict', `The connection is ${row.status}.`);

function usable(row: ConnectionRow): void {
  if (providerKeyOf(row.connector_key) === null) {
    throw notOAuth2();
  }
  if (row.status !== 'active') throw stoppedProblem(row);
  if (row.authorization_status !== 'authorized' || row.credentials_sealed === null) throw notAuthorized(row);
}

const fresh = (row: ConnectionRow, now: Date) =>
  row.authorization_expires_at === null ||
  new Date(row.authorization_expires_at).getTime() - now.getTime() > REFRESH_MARGIN_MS;

const accessOf = (row: ConnectionRow, tokens: StoredTokens): AccessToken => ({
  accessToken: tokens.accessToken,
  tokenType: tokens.tokenType,
  expiresAt: row.authorization_expires_at === null ? null : new Date(row.authorization_expires_at),
});

/**
 * The access token of an OAuth2 connection for a call to its provider (the credential proxy's, docs/api/oauth.md).
 * A token near its expiry is refreshed first; `forceRefresh` refreshes it anyway, once, after the
 * provider answered 401 to it. One refresh at a time per connection, in every process, under a
 * lease (`refresh` below): a caller that finds one under way waits and uses the token it left, so
 * one refresh token is never spent twice and a rotated one is never lost. A refresh the provider refuses
 * with `invalid_grant` marks the authorization `expired` (the ConnectionAuthorizationExpired alert
 * fires while it is) and is audited; the answer is then 409.
 */
export async function accessTokenFor(
  deps: TokenDeps,
  scope: TenantScope,
  connectionId: string,
  options: { forceRefresh?: boolean; row?: ConnectionRow } = {},
): Promise<AccessToken> {
  // A caller that has just read the row (the proxy) saves a round trip; a refresh reads it again.
  const row = options.row ?? (await connectionOr404(deps.ctx.db, scope, connectionId));
  usable(row);
  const seen = openTokens(deps, row);
  if (!options.forceRefresh && fresh(row, deps.ctx.now())) return accessOf(row, seen);
  return refresh(deps, scope, connectionId, seen.accessToken, options.forceRefresh === true);
}

/** New tokens: by client credentials again, or with the refresh token (RFC 6749 §6). */
function renew(deps: TokenDeps, provider: ProviderRow, current: StoredTokens): Promise<TokenAnswer> {
  if (provider.grant_type === 'client_credentials') return clientCredentials(deps, provider);
  if (current.refreshToken === null) {
    return Promise.resolve({
      ok: false,
      error: 'invalid_grant',
      message: 'the provider gave no refresh token',
    });
  }
  return requestTokens(
    deps.sender,
    tokenClientOf(deps, provider),
    { grant_type: 'refresh_token', refresh_token: current.refreshToken },
    deps.ctx.now,
  );
}

type Refreshed =
  | { kind: 'ok'; token: AccessToken }
  | { kind: 'expired' }
  | { kind: 'failed'; message: string }
  | { kind: 'stopped'; problem: HttpProblem };

/** What a refresh found with the row locked: a token to use, another refresh under way, or its turn. */
type RefreshStep =
  | { kind: 'ok'; token: AccessToken }
  | { kind: 'wait' }
  | { kind: 'mine'; row: ConnectionRow; current: StoredTokens; lease: Date };

// Waiting for another process's refresh: the row is read again this often.
const LEASE_POLL_MS = 100;

/**
 * One refresh per connection at a time, in every process, without holding a transaction across the
 * call to the provider: a short transaction with the connection's row locked takes a lease on it
 * (`oauth_authorizations.refreshing_until`), the token call runs outside any transaction, and a
 * second short transaction writes the new tokens if the lease is still this refresh's and gives it
 * back. A caller that finds a lease held waits for it and then uses the token it left. (Holding the
 * row lock across the call would stop every write on the embedded database, whose one connection
 * serializes transactions, for as long as a slow provider takes: docs/decisions/0060-oauth2-connections.md.)
 */
async function refresh(
  deps: TokenDeps,
  scope: TenantScope,
  connectionId: string,
  seenToken: string,
  forced: boolean,
): Promise<AccessToken> {
  const leaseMs = deps.refreshLeaseMs ?? DEFAULT_LEASE_MS;
  const giveUpAt = Date.now() + leaseMs + LEASE_POLL_MS;
  for (;;) {
    const step = await takeLease(deps, scope, connectionId, seenToken, forced, leaseMs);
    if (step.kind === 'ok') return step.token;
    if (step.kind === 'wait') {
      if (Date.now() > giveUpAt) {
        throw new TokenEndpointError('another refresh of this connection’s token is taking too long');
      }
      await new Promise((resolve) => setTimeout(resolve, LEASE_POLL_MS));
      continue;
    }
    const outcome = await renewUnderLease(deps, scope, connectionId, step);
    if (outcome === 'lost') continue;
    if (outcome.kind === 'ok') return outcome.token;
    if (outcome.kind === 'stopped') throw outcome.problem;
    if (outcome.kind === 'expired') {
      throw new HttpProblem(
        'conflict',
        'The provider refused to refresh this connection’s authorization: authorize it again.',
      );
    }
    throw new TokenEndpointError(`The access token could not be refreshed: ${outcome.message}.`);
  }
}

const DEFAULT_LEASE_MS = 30_000;

/**
 * The connection's row locked for update, then until when its refresh lease is held, read by a
 * statement after the lock (one that waited for the lock would read the other table as it was
 * before). The lock stays the connection's row, not the authorization's: a pause and a revoke lock
 * it too, so a refresh's result meets them there (a connection revoked meanwhile gets no tokens),
 * and every write of the authorization takes it first (the callback's binding, a refresh, an
 * expiry). The one write without it, releaseRefreshLease, clears only the lease of a refresh whose
 * token call threw, found by its exact time (decision 0070).
 */
async function lockedWithLease(
  trx: Kysely<DB>,
  scope: TenantScope,
  connectionId: string,
): Promise<{ row: ConnectionRow; leaseUntil: Date | null }> {
  const row = await connectionOr404(trx, scope, connectionId, { forUpdate: true });
  const authorization = await findAuthorization(trx, scope, connectionId);
  return { row, leaseUntil: authorization?.refreshing_until ?? null };
}

/** The row locked for a moment: its token if fresh (or refreshed by another meanwhile), or the lease. */
function takeLease(
  deps: TokenDeps,
  scope: TenantScope,
  connectionId: string,
  seenToken: string,
  forced: boolean,
  leaseMs: number,
): Promise<RefreshStep> {
  return deps.ctx.db.transaction().execute(async (trx): Promise<RefreshStep> => {
    const { row, leaseUntil: held } = await lockedWithLease(trx, scope, connectionId);
    usable(row);
    const current = openTokens(deps, row);
    const now = deps.ctx.now();
    // Another process refreshed while this one waited: its token is the one to use.
    if (fresh(row, now) && (!forced || current.accessToken !== seenToken)) {
      return { kind: 'ok', token: accessOf(row, current) };
    }
    if (held !== null && new Date(held).getTime() > now.getTime()) return { kind: 'wait' };
    const lease = new Date(now.getTime() + leaseMs);
    await updateAuthorization(trx, scope, connectionId, { refreshing_until: lease });
    return { kind: 'mine', row, current, lease };
  });
}

/**
 * The token call, outside any transaction, then its result written with the row locked if the lease
 * is still this refresh's ('lost' otherwise: a lease runs out only after its holder died, and the
 * caller starts over). The lease is given back whatever the provider answered.
 */
async function renewUnderLease(
  deps: TokenDeps,
  scope: TenantScope,
  connectionId: string,
  { row, current, lease }: Extract<RefreshStep, { kind: 'mine' }>,
): Promise<Refreshed | 'lost'> {
  const { db, keyring } = deps.ctx;
  let answer: TokenAnswer | undefined;
  let provider: ProviderRow | undefined;
  try {
    provider = await providerOf(db, row);
    answer = await renew(deps, provider, current);
  } finally {
    // The token call threw (the provider unreachable under the policy): the lease is given back.
    if (answer === undefined) await releaseRefreshLease(db, scope, connectionId, lease);
  }
  return db.transaction().execute(async (trx): Promise<Refreshed | 'lost'> => {
    const { row: locked, leaseUntil } = await lockedWithLease(trx, scope, connectionId);
    const mine = new Date(leaseUntil ?? 0).getTime() === lease.getTime();
    if (!mine) return 'lost';
    await updateAuthorization(trx, scope, connectionId, { refreshing_until: null });
    // Revoked while the provider answered: nothing is bound to a revoked connection again.
    if (locked.status === 'disabled') return { kind: 'stopped', problem: stoppedProblem(locked) };
    const at = deps.ctx.now();
    if (answer.ok) {
      // Bound even when paused meanwhile: a provider that rotates refresh tokens has spent the old one.
      const { tokens } = answer;
      const scopes = tokens.scopes ?? locked.authorization_scopes ?? provider.scopes;
      const credentials = { ...stored(tokens, current) };
      const change = { status: 'authorized' as const, scopes, expiresAt: tokens.expiresAt, credentials };
      await setAuthorization(trx, scope, connectionId, at, change, keyring);
      // Paused meanwhile: nothing is sent (the problem is thrown once this is committed).
      if (locked.status !== 'active') return { kind: 'stopped', problem: stoppedProblem(locked) };
      const token = {
        accessToken: tokens.accessToken,
        tokenType: tokens.tokenType,
        expiresAt: tokens.expiresAt,
      };
      return { kind: 'ok', token };
    }
    if (answer.error === 'invalid_grant' || answer.error === 'invalid_client') {
      await expire(trx, scope, locked, systemOrigin(at), answer.error, keyring);
      return { kind: 'expired' };
    }
    return { kind: 'failed', message: answer.message };
  });
}

/** The provider will not refresh any more: `expired` until someone authorizes again; audited. */
async function expire(
  trx: Kysely<DB>,
  scope: TenantScope,
  row: ConnectionRow,
  origin: AuditOrigin,
  error: string,
  keyring: AppContext['keyring'],
): Promise<void> {
  await setAuthorization(trx, scope, row.id, origin.at, { status: 'expired' }, keyring);
  await recordAudit(trx, origin, {
    action: 'connection.authorization.expire',
    tenantId: scope.tenantId,
    targetType: 'connection',
    targetId: row.id,
    metadata: { connectorKey: row.connector_key, displayName: row.display_name, error },
  });
}
