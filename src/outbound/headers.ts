import { validateHeaderName, validateHeaderValue } from 'node:http';
import { VERSION } from '../version.js';

/** Headers of every JSON request hubgate sends. */
export const jsonHeaders = (): Record<string, string> => ({
  'content-type': 'application/json',
  'user-agent': `hubgate/${VERSION}`,
});

/** The W3C trace context every delivery carries (docs/operators/telemetry.md), set after the connector's headers. */
export const TRACEPARENT_HEADER = 'traceparent';

/**
 * Request headers a configuration may never set on an outbound request: the ones that frame or
 * route it (Host, Content-Length, Transfer-Encoding and the other hop-by-hop headers) belong to the
 * HTTP client, and Content-Type to the body hubgate writes.
 */
export const FRAMING_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);

/**
 * What Node's HTTP clients (node:http and undici alike) put in a header value: tab, visible ASCII
 * and the rest of Latin-1. Anything else (line breaks, NUL and the other control characters,
 * characters beyond U+00FF) makes them refuse the whole request, so a stored value with one would
 * fail every delivery. The same rule as a JSON-schema pattern, for request schemas and OpenAPI.
 */
export const HEADER_VALUE_PATTERN = '^[\\t\\u0020-\\u007e\\u0080-\\u00ff]*$';

/** An HTTP header name (RFC 9110 token), 1–100 characters: what Node's clients accept as a name. */
export const HEADER_NAME_PATTERN = "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$";

/**
 * Node's own checks, authoritative: true when the client would send the header as given. The
 * patterns above are what request schemas use; test/outbound/headers.test.ts holds them to these.
 */
export function isSendableHeaderName(name: string): boolean {
  return passes(() => validateHeaderName(name));
}

export function isSendableHeaderValue(value: string): boolean {
  return passes(() => validateHeaderValue('x', value));
}

function passes(check: () => void): boolean {
  try {
    check();
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') return false;
    throw error;
  }
}
