import { createHash } from 'node:crypto';
import { budgetUntil, type Budget } from '../deadline.js';
import { redactText, spellingsOf } from './redact.js';
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

/**
 * A token request under way, shared by the requests that wait for it. It runs while one of them
 * still has time: when the last one's budget runs out it is aborted, so that no token request of an
 * attempt outlives the attempt (docs/decisions/0063).
 */
interface Pending {
  fetched: Promise<Fetched>;
  waiting: number;
  stop: AbortController;
}

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

/** The token request's end for a request whose budget ran out while it waited (or before it began). */
const outOfTime = (started: number): Fetched =>
  failed(
    {
      ok: false,
      status: null,
      remoteAddress: null,
      error: 'timeout',
      errorDetail: null,
      retryAfterSeconds: null,
      durationMs: Math.round(performance.now() - started),
    },
    'no complete answer within DELIVERY_TIMEOUT_MS',
  );

async function fetchToken(
  send: Send,
  grant: ClientCredentialsGrant,
  now: () => number,
  budget: Budget,
): Promise<Fetched> {
  const params: Record<string, string> = { grant_type: 'client_credentials' };
  if (grant.scope) params.scope = grant.scope;
  const result = await send({
    ...tokenRequest(grant, params),
    keepAnswerBytes: MAX_TOKEN_ANSWER_BYTES,
    budget,
  });
  if (result.status === null) return failed(result, result.errorDetail ?? result.error ?? 'no answer');
  const answer = result.answer;
  if (!answer || answer.tooLarge) return failed(result, 'the token answer is larger than 64 KiB');
  const body = jsonObjectOf(answer.body.toString('utf8'));
  if (!result.ok) {
    // The error code is shown to whoever reads the event log: never the client secret, if a token
    // endpoint put it there.
    const code = errorCodeOf(body);
    const shown = code && redactText(code, spellingsOf([grant.clientSecret]));
    return failed(result, `HTTP ${result.status}${shown ? ` (${shown})` : ''}`);
  }
  const accessToken = body?.access_token;
  if (typeof accessToken !== 'string' || accessToken.length === 0) {
    return failed(result, 'the token answer has no access_token');
  }
  const expiresAt = body && expiresAtOf(body, now());
  return { ok: true, token: { accessToken, expiresAt: expiresAt ? expiresAt.getTime() : null } };
}

/**
 * Waits for a shared token request as long as `budget` lasts (no budget: until it ends). The last
 * waiter to run out of time calls `abandon`, which aborts it: nobody is left to use its token.
 */
function waitFor(
  pending: Pending,
  budget: Budget | undefined,
  started: number,
  abandon: () => void,
): Promise<Fetched> {
  pending.waiting++;
  if (!budget) return pending.fetched.finally(() => pending.waiting--);
  return new Promise<Fetched>((resolve) => {
    const onAbort = () => {
      pending.waiting--;
      if (pending.waiting === 0) abandon();
      resolve(outOfTime(started));
    };
    budget.signal.addEventListener('abort', onAbort, { once: true });
    void pending.fetched.then((fetched) => {
      if (budget.signal.aborted) return;
      budget.signal.removeEventListener('abort', onAbort);
      pending.waiting--;
      resolve(fetched);
    });
  });
}

/**
 * Tokens per credential set: cached until they expire (less a margin), fetched by one request at a
 * time per set that every request needing one shares, for as long as one of them has time left.
 */
function createTokens(send: Send, now: () => number) {
  const cache = new Map<string, Cached>();
  const inFlight = new Map<string, Pending>();

  function start(grant: ClientCredentialsGrant, key: string): Pending {
    const stop = new AbortController();
    const fetched = fetchToken(send, grant, now, budgetUntil(stop.signal)).then((result) => {
      if (inFlight.get(key) === pending) inFlight.delete(key);
      if (result.ok) {
        cache.delete(key);
        cache.set(key, result.token);
        if (cache.size > MAX_CACHED) cache.delete(cache.keys().next().value as string);
      }
      return result;
    });
    const pending: Pending = { fetched, waiting: 0, stop };
    inFlight.set(key, pending);
    return pending;
  }

  /** A token for `grant` (not `stale`, one the receiver refused), within `budget`. */
  return (grant: ClientCredentialsGrant, budget: Budget | undefined, stale?: string): Promise<Fetched> => {
    const started = performance.now();
    const key = keyOf(grant);
    const cached = cache.get(key);
    const usable =
      cached &&
      cached.accessToken !== stale &&
      (cached.expiresAt === null || cached.expiresAt - now() > EXPIRY_MARGIN_MS);
    if (usable) return Promise.resolve({ ok: true, token: cached });
    if (budget && budget.remainingMs() <= 0) return Promise.resolve(outOfTime(started));
    const pending = inFlight.get(key) ?? start(grant, key);
    return waitFor(pending, budget, started, () => {
      if (inFlight.get(key) === pending) inFlight.delete(key);
      pending.stop.abort();
    });
  };
}

// The token goes to the receiver, which may echo it: the answer the log keeps must not show it.
function withToken(outbound: OutboundRequest, token: Cached): OutboundRequest {
  const { clientCredentials: _grant, ...request } = outbound;
  return {
    ...request,
    headers: { ...request.headers, authorization: `Bearer ${token.accessToken}` },
    redact: [...(request.redact ?? []), token.accessToken],
  };
}

/**
 * Wraps a sender's `send`: a request with `clientCredentials` goes out with `Authorization: Bearer`
 * and a token from that token endpoint (through the same `send`, so the SSRF policy, the timeout and
 * "no redirects" hold for it too). Tokens are cached per credential set until they expire (less a
 * margin); concurrent requests share one fetch. A 401 from the receiver drops the token, fetches a
 * new one and sends once more. A token that cannot be had fails the attempt before the receiver is
 * asked, saying why in `errorDetail` (never the secret or a token). The request's `budget` bounds
 * all of it: no token request or send starts once it is spent, and those under way are aborted.
 */
export function withClientCredentials(send: Send, now: () => number = Date.now): Send {
  const tokenFor = createTokens(send, now);
  return async (outbound) => {
    const grant = outbound.clientCredentials;
    if (!grant) return send(outbound);
    const first = await tokenFor(grant, outbound.budget);
    if (!first.ok) return first.result;
    const result = await send(withToken(outbound, first.token));
    if (result.status !== 401) return result;
    // The receiver refused the token (revoked, rotated keys): one new token, one more try, if the
    // attempt has time left for it; else the refusal is what the attempt came to.
    if (outbound.budget && outbound.budget.remainingMs() <= 0) return result;
    const second = await tokenFor(grant, outbound.budget, first.token.accessToken);
    if (!second.ok) return second.result;
    return send(withToken(outbound, second.token));
  };
}
