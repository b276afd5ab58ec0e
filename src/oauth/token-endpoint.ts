import { redactText, spellingsOf } from '../outbound/redact.js';
import type { Sender, SendResult } from '../outbound/sender.js';
import {
  errorCodeOf,
  expiresAtOf,
  jsonObjectOf,
  MAX_TOKEN_ANSWER_BYTES,
  tokenRequest,
  type TokenClient,
} from '../outbound/token-request.js';

export type { TokenClient } from '../outbound/token-request.js';

/** A token answer (RFC 6749 §5.1) as hubgate keeps it. */
export interface Tokens {
  accessToken: string;
  refreshToken: string | null;
  tokenType: string;
  expiresAt: Date | null;
  /** The scopes granted, when the answer says (else those asked for apply). */
  scopes: string[] | null;
}

/**
 * The token endpoint's answer: the tokens, or why not. `error` is the provider's OAuth error code
 * (`invalid_grant` …) or one of hubgate's own (`unreachable`, `invalid_answer`); `message` says it in
 * words and never holds a token or a secret.
 */
export type TokenAnswer = { ok: true; tokens: Tokens } | { ok: false; error: string; message: string };

const invalid = (message: string): TokenAnswer => ({ ok: false, error: 'invalid_answer', message });

// What a token request sends that no one may read back: a provider's error words can repeat them
// (issue 37; docs/decisions/0065-proxy-pool-and-provider-words.md).
const SECRET_PARAMS = ['code', 'code_verifier', 'refresh_token', 'client_secret'] as const;

/**
 * Every spelling in which what this request sent in confidence could come back in the provider's
 * words: the client secret, the code, the PKCE verifier and the refresh token, as sent, JSON-escaped,
 * form- and percent-encoded (outbound/redact.ts), in base64, and the HTTP Basic credentials.
 */
function secretSpellingsOf(client: TokenClient, params: Record<string, string>): string[] {
  const values = [client.clientSecret, ...SECRET_PARAMS.map((name) => params[name] ?? '')].filter(
    (value) => value.length > 0,
  );
  const basic = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
  const base64 = [basic, ...values].map((value) => Buffer.from(value).toString('base64'));
  return [...new Set([...spellingsOf(values), ...base64])].sort((a, b) => b.length - a.length);
}

/**
 * The provider's refusal (RFC 6749 §5.2) in words: its code and, shortened, its description, with
 * whatever this request sent in confidence redacted before anything is cut (a secret cut in two
 * would no longer be found).
 */
function refusal(status: number, body: Record<string, unknown> | undefined, secrets: string[]): TokenAnswer {
  const raw = errorCodeOf(body);
  if (raw === null) {
    return invalid(`the token endpoint answered HTTP ${status} without an OAuth error`);
  }
  const code = redactText(raw, secrets);
  const description = body?.error_description;
  const words =
    typeof description === 'string' && description.length > 0
      ? `: ${redactText(redactText(description, secrets).replace(/[^\x20-\x7e]/g, ' '), secrets).slice(0, 200)}`
      : '';
  return { ok: false, error: code, message: `the provider refused (${code})${words}` };
}

function tokensOf(body: Record<string, unknown>, now: Date): TokenAnswer {
  const { access_token: accessToken, refresh_token: refreshToken } = body;
  if (typeof accessToken !== 'string' || accessToken.length === 0) {
    return invalid('the token answer has no access_token');
  }
  return {
    ok: true,
    tokens: {
      accessToken,
      refreshToken: typeof refreshToken === 'string' && refreshToken.length > 0 ? refreshToken : null,
      tokenType: typeof body.token_type === 'string' ? body.token_type : 'Bearer',
      expiresAt: expiresAtOf(body, now.getTime()),
      scopes: typeof body.scope === 'string' ? body.scope.split(' ').filter(Boolean) : null,
    },
  };
}

/**
 * A token call that got no answer, in words: the SSRF verdict, a timeout, a system error code
 * (ECONNREFUSED …); never a code of the HTTP client's own (undici fails an assertion on a 101).
 */
function unreachable(result: Pick<SendResult, 'error' | 'errorDetail'>): string {
  const why = result.errorDetail ?? result.error ?? 'no answer';
  if (result.error === 'connection_error' && /^(ERR_|UND_ERR)/.test(why)) {
    return 'the token endpoint answered 101 Switching Protocols or something else that is not HTTP/1.1';
  }
  return `the token endpoint could not be reached (${why})`;
}

/**
 * One request to the token endpoint (RFC 6749 §4.1.3, §4.4, §6): the client authenticated with
 * HTTP Basic, through the outbound sender, so the SSRF policy, the timeout and "no redirects" hold.
 */
export async function requestTokens(
  sender: Sender,
  client: TokenClient,
  params: Record<string, string>,
  now: () => Date,
): Promise<TokenAnswer> {
  const result = await sender.send({
    ...tokenRequest(client, params),
    keepBodyBytes: MAX_TOKEN_ANSWER_BYTES,
  });
  if (result.status === null) return { ok: false, error: 'unreachable', message: unreachable(result) };
  if (result.status >= 300 && result.status < 400) {
    return invalid(`the token endpoint answered a redirect (HTTP ${result.status}), which is not followed`);
  }
  const answer = result.response;
  if (!answer || answer.body === null) return invalid('the token endpoint answered no body');
  if (answer.bodyTruncated) {
    return invalid(`the token answer is larger than ${MAX_TOKEN_ANSWER_BYTES / 1024} KiB`);
  }
  const body = jsonObjectOf(answer.body);
  if (!result.ok) return refusal(result.status, body, secretSpellingsOf(client, params));
  if (!body) return invalid('the token endpoint answered something other than a JSON object');
  return tokensOf(body, now());
}
