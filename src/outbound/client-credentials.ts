import { createHash } from 'node:crypto';
import { VERSION } from '../version.js';
import type { ClientCredentialsGrant, OutboundRequest, SendResult } from './request.js';

type Send = (outbound: OutboundRequest) => Promise<SendResult>;

interface Cached {
  accessToken: string;
  /** Epoch ms after which it is not used; null: until the receiver refuses it. */
  expiresAt: number | null;
}

type Fetched = { ok: true; token: Cached } | { ok: false; result: SendResult };

// A token this close to its expiry is fetched again rather than sent, so it does not expire in flight.
const EXPIRY_MARGIN_MS = 30_000;
// A token answer is a small JSON object; a larger one is refused, not read.
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;
// Tokens of this many credential sets at most are kept per process; the oldest goes first.
const MAX_CACHED = 1000;

/** The cache key: a digest of the whole grant, so a re-bound secret or another token URL never shares a token. */
const keyOf = (grant: ClientCredentialsGrant): string =>
  createHash('sha256')
    .update(JSON.stringify([grant.tokenUrl, grant.clientId, grant.clientSecret, grant.scope ?? '']))
    .digest('base64url');

/** HTTP Basic with the client's ID and secret, each form-encoded first (RFC 6749 §2.3.1). */
const basic = (grant: ClientCredentialsGrant): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(grant.clientId)}:${encodeURIComponent(grant.clientSecret)}`).toString('base64')}`;

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

function parse(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The OAuth error code of a refusal (RFC 6749 §5.2), when it is a plain token; never anything else of the body. */
const errorCodeOf = (body: Record<string, unknown> | undefined): string | null => {
  const code = body?.error;
  return typeof code === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/.test(code) ? code : null;
};

async function fetchToken(send: Send, grant: ClientCredentialsGrant, now: () => number): Promise<Fetched> {
  const params: Record<string, string> = { grant_type: 'client_credentials' };
  if (grant.scope) params.scope = grant.scope;
  const result = await send({
    method: 'POST',
    url: grant.tokenUrl,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      authorization: basic(grant),
      'user-agent': `hubgate/${VERSION}`,
    },
    body: new URLSearchParams(params).toString(),
    keepAnswerBytes: MAX_TOKEN_ANSWER_BYTES,
  });
  if (result.status === null) return failed(result, result.errorDetail ?? result.error ?? 'no answer');
  const answer = result.answer;
  if (!answer || answer.tooLarge) return failed(result, 'the token answer is larger than 64 KiB');
  const body = parse(answer.body.toString('utf8'));
  if (!result.ok) {
    const code = errorCodeOf(body);
    return failed(result, `HTTP ${result.status}${code ? ` (${code})` : ''}`);
  }
  const accessToken = body?.access_token;
  if (typeof accessToken !== 'string' || accessToken.length === 0) {
    return failed(result, 'the token answer has no access_token');
  }
  const raw = body?.expires_in;
  const seconds = typeof raw === 'string' ? Number(raw) : raw;
  const expiresAt =
    typeof seconds === 'number' && Number.isFinite(seconds) && seconds > 0 ? now() + seconds * 1000 : null;
  return { ok: true, token: { accessToken, expiresAt } };
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
