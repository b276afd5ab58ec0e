import { createHash } from 'node:crypto';
import type { ClientCredentialsGrant, OutboundRequest, SendResult } from './request.js';
import {
  errorCodeOf,
  expiresAtOf,
  jsonObjectOf,
  MAX_TOKEN_ANSWER_BYTES,
  tokenRequest,
} from './token-request.js';

type Send = (outbound: OutboundRequest) => Promise<SendResult>;

interface Cached {
  accessToken: string;
  /** Epoch ms after which it is not used; null: until the receiver refuses it. */
  expiresAt: number | null;
}

type Fetched = { ok: true; token: Cached } | { ok: false; result: SendResult };

// A token this close to its expiry is fetched again rather than sent, so it does not expire in flight.
const EXPIRY_MARGIN_MS = 30_000;
// Tokens of this many credential sets at most are kept per process; the oldest goes first.
const MAX_CACHED = 1000;

/** The cache key: a digest of the whole grant, so a re-bound secret or another token URL never shares a token. */
const keyOf = (grant: ClientCredentialsGrant): string =>
  createHash('sha256')
    .update(JSON.stringify([grant.tokenUrl, grant.clientId, grant.clientSecret, grant.scope ?? '']))
    .digest('base64url');

/** The token request's failure as the attempt's: the receiver was never asked (status null). */
function failed(result: SendResult, why: string): Fetched {
  const error = result.status === null && result.error !== null ? result.error : 'http_status';
  return {
    ok: false,
    result: {
      ok: false,
      status: null,
      remoteAddress: null,
      error,
      errorDetail: `no OAuth2 token from the token URL: ${why}`,
      retryAfterSeconds: null,
      durationMs: result.durationMs,
      response: null,
    },
  };
}

async function fetchToken(send: Send, grant: ClientCredentialsGrant, now: () => number): Promise<Fetched> {
  const params: Record<string, string> = { grant_type: 'client_credentials' };
  if (grant.scope) params.scope = grant.scope;
  const result = await send({ ...tokenRequest(grant, params), keepAnswerBytes: MAX_TOKEN_ANSWER_BYTES });
  if (result.status === null) return failed(result, result.errorDetail ?? result.error ?? 'no answer');
  const answer = result.answer;
  if (!answer || answer.tooLarge) return failed(result, 'the token answer is larger than 64 KiB');
  const body = jsonObjectOf(answer.body.toString('utf8'));
  if (!result.ok) {
    const code = errorCodeOf(body);
    return failed(result, `HTTP ${result.status}${code ? ` (${code})` : ''}`);
  }
  const accessToken = body?.access_token;
  if (typeof accessToken !== 'string' || accessToken.length === 0) {
    return failed(result, 'the token answer has no access_token');
  }
  const expiresAt = body && expiresAtOf(body, now());
  return { ok: true, token: { accessToken, expiresAt: expiresAt ? expiresAt.getTime() : null } };
}

/**
 * Wraps a sender's `send`: a request with `clientCredentials` goes out with `Authorization: Bearer`
 * and a token from that token endpoint (through the same `send`, so the SSRF policy, the timeout and
 * "no redirects" hold for it too). Tokens are cached per credential set until they expire (less a
 * margin); concurrent requests share one fetch. A 401 from the receiver drops the token, fetches a
 * new one and sends once more. A token that cannot be had fails the attempt before the receiver is
 * asked, saying why in `errorDetail` (never the secret or a token).
 */
export function withClientCredentials(send: Send, now: () => number = Date.now): Send {
  const cache = new Map<string, Cached>();
  const inFlight = new Map<string, Promise<Fetched>>();

  function tokenFor(grant: ClientCredentialsGrant, key: string, stale?: string): Promise<Fetched> {
    const cached = cache.get(key);
    const usable =
      cached &&
      cached.accessToken !== stale &&
      (cached.expiresAt === null || cached.expiresAt - now() > EXPIRY_MARGIN_MS);
    if (usable) return Promise.resolve({ ok: true, token: cached });
    const pending = inFlight.get(key);
    if (pending) return pending;
    const fetching = fetchToken(send, grant, now)
      .then((fetched) => {
        if (fetched.ok) {
          cache.delete(key);
          cache.set(key, fetched.token);
          if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
        }
        return fetched;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, fetching);
    return fetching;
  }

  const withToken = (outbound: OutboundRequest, token: Cached): OutboundRequest => {
    const { clientCredentials: _grant, ...request } = outbound;
    return { ...request, headers: { ...request.headers, authorization: `Bearer ${token.accessToken}` } };
  };

  return async (outbound) => {
    const grant = outbound.clientCredentials;
    if (!grant) return send(outbound);
    const key = keyOf(grant);
    const first = await tokenFor(grant, key);
    if (!first.ok) return first.result;
    const result = await send(withToken(outbound, first.token));
    if (result.status !== 401) return result;
    // The receiver refused the token (revoked, rotated keys): one new token, one more try.
    const second = await tokenFor(grant, key, first.token.accessToken);
    if (!second.ok) return second.result;
    return send(withToken(outbound, second.token));
  };
}
