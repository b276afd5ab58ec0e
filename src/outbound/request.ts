// What an outbound request is and what came of it: the sender's vocabulary, shared with what sends
// through it (client-credentials.ts fetches a token with the same request), kept apart so neither
// imports the other.

import type { Budget } from '../deadline.js';

/**
 * OAuth2 client credentials (RFC 6749 §4.4) of a receiver behind OAuth2: the `webhook` and `http`
 * connectors' `oauth2ClientCredentials` (docs/api/connections.md). Secret: never logged or shown.
 */
export interface ClientCredentialsGrant {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
}

/** How an attempt failed (docs/api/events.md `error`). */
export type SendError =
  | 'timeout'
  | 'connection_error'
  | 'dns_failure'
  | 'tls_error'
  | 'destination_forbidden'
  | 'redirect_refused'
  | 'http_status';

export interface SendResult {
  ok: boolean;
  status: number | null;
  remoteAddress: string | null;
  error: SendError | null;
  errorDetail: string | null;
  /** Seconds from a Retry-After answer, when there was one. */
  retryAfterSeconds: number | null;
  durationMs: number;
  /** The answer's first KEPT_BODY_BYTES as UTF-8 text, when the request asked for it (`keepBody`). */
  body?: string;
  /** What the answer said, for the event log (docs/api/events.md); null or absent when no answer came. */
  response?: AnswerRecord | null;
  /** The whole answer, when the request asked for it (`keepAnswerBytes`): the credential proxy's. */
  answer?: WholeAnswer;
}

/** An answer kept whole, up to a limit: its bytes and content type, or only that it was too large. */
export interface WholeAnswer {
  contentType: string | null;
  body: Buffer;
  /** The body had more bytes than the limit: `body` is empty, the answer is not to be passed on. */
  tooLarge: boolean;
}

/** An answer as the event log keeps it: at most MAX_KEPT_HEADERS headers and the start of the body. */
export interface AnswerRecord {
  headers: Record<string, string>;
  /** The first `keepBodyBytes` of the body as UTF-8 (bad bytes replaced); null when none are kept. */
  body: string | null;
  /** True when the body had more bytes than were kept. */
  bodyTruncated: boolean;
}

export interface OutboundRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /**
   * Keep the start of the answer as text (Slack says what went wrong in its body). Off by default.
   */
  keepBody?: boolean;
  /** Bytes of the answer's body to keep in `response` for the event log (0 or absent: none). */
  keepBodyBytes?: number;
  /** Keep the whole answer, up to this many bytes, in `answer` (the credential proxy). */
  keepAnswerBytes?: number;
  /**
   * A bearer token from this token endpoint goes in `Authorization` (an OAuth2-protected receiver,
   * docs/api/connections.md): fetched, cached, and fetched again once on a 401 (client-credentials.ts).
   */
  clientCredentials?: ClientCredentialsGrant;
  /**
   * Secrets the request carries (bound credentials): wherever an answer echoes one, in any spelling
   * redact.ts knows, the kept `response` shows [redacted] instead (docs/api/events.md, Inspection).
   * A bearer token the sender fetches for `clientCredentials` is added to them.
   */
  redact?: readonly string[];
  /**
   * The time left to the work this request is part of (a delivery attempt: every token request and
   * send of it share one budget): the request is aborted when it runs out, and none starts after.
   */
  budget?: Budget;
}
