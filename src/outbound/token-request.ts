import { VERSION } from '../version.js';
import type { OutboundRequest } from './request.js';

// What every call to an OAuth2 token endpoint shares (RFC 6749 §2.3.1, §5): the request hubgate
// sends and how it reads the answer. Two flows use it: the OAuth2 connectors' tokens
// (src/oauth/token-endpoint.ts) and the bearer tokens of webhook and http receivers behind OAuth2
// (client-credentials.ts), which fail a delivery attempt instead of answering a problem.

/** What a client of a token endpoint is: where it is, and who asks. */
export interface TokenClient {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
}

// A token answer is a small JSON object; a larger one is refused, not read (docs/api/oauth.md).
export const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

// A token said to last longer than a year is refreshed after one (a provider's absurd expires_in
// would otherwise be a date past what a Date holds).
const MAX_EXPIRES_IN_SECONDS = 365 * 24 * 60 * 60;

/**
 * The token request: a form POST with the client authenticated by HTTP Basic (its ID and secret
 * each form-encoded first), asking for JSON. Sent through the outbound sender by the caller, so the
 * SSRF policy, the timeout and "no redirects" hold for it.
 */
export function tokenRequest(client: TokenClient, params: Record<string, string>): OutboundRequest {
  const pair = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
  return {
    method: 'POST',
    url: client.tokenUrl,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
      authorization: `Basic ${Buffer.from(pair).toString('base64')}`,
      'user-agent': `hubgate/${VERSION}`,
    },
    body: new URLSearchParams(params).toString(),
  };
}

/** The answer's body when it is a JSON object; anything else is undefined. */
export function jsonObjectOf(text: string): Record<string, unknown> | undefined {
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
export function errorCodeOf(body: Record<string, unknown> | undefined): string | null {
  const code = body?.error;
  return typeof code === 'string' && /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/.test(code) ? code : null;
}

/** When a token of this answer's `expires_in` (seconds, a number or a numeric string) expires; null: not said. */
export function expiresAtOf(body: Record<string, unknown>, nowMs: number): Date | null {
  const raw = body.expires_in;
  const seconds = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return null;
  return new Date(nowMs + Math.min(seconds, MAX_EXPIRES_IN_SECONDS) * 1000);
}
