import type { LookupAddress } from 'node:dns';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress, createUnzip } from 'node:zlib';
import { Agent, request } from 'undici';
import { classify, resolveChecked, type Resolver } from './sender.js';
import { checkUrl, type DestinationPolicy } from './ssrf-policy.js';

// The credential proxy's outbound HTTP (docs/api/oauth.md): the same SSRF policy, pinning, timeout
// and "no redirects" as the delivery sender (sender.ts), but answers are kept whole (decoded, up to a
// limit) and the pool is its own, sized so that no call admitted by the proxy's counters waits for a
// connection behind another tenant's (docs/decisions/0065-proxy-pool-and-provider-words.md).

export interface ProxyRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** The answer's body, once decoded, may have at most this many bytes. */
  maxAnswerBytes: number;
}

/** Why no answer can be passed back; `detail` is in words or a system error code, never a body. */
export type ProxyFailure =
  | { failure: 'timeout' }
  | { failure: 'destination_forbidden'; detail: string }
  | { failure: 'unreachable'; detail: string }
  /** An upgrade (101) or bytes that are not an HTTP/1.1 answer. */
  | { failure: 'not_http'; detail: string }
  | { failure: 'too_large' }
  /** A Content-Encoding hubgate does not read, or a body that does not decode as it says. */
  | { failure: 'undecodable'; detail: string };

export type ProxySendResult =
  | { ok: true; status: number; contentType: string | null; body: Buffer }
  | ({ ok: false; status: number | null } & ProxyFailure);

/** Content codings read (RFC 9110 §8.4.1): `createUnzip` takes gzip and zlib-wrapped deflate alike. */
const DECODERS: Record<string, () => Transform> = {
  gzip: createUnzip,
  'x-gzip': createUnzip,
  deflate: createUnzip,
  br: createBrotliDecompress,
};
// More codings than this on one answer is no answer a provider sends in earnest.
const MAX_CODINGS = 2;

class TooLarge extends Error {}
class Undecodable extends Error {}

/** The decoders for a Content-Encoding header, outermost last (as applied); a coding not read throws. */
function decodersOf(header: string | string[] | undefined): Transform[] {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const codings = text
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length > MAX_CODINGS) {
    throw new Undecodable(`${codings.length} content codings on one answer`);
  }
  return codings.reverse().map((coding) => {
    const make = DECODERS[coding];
    if (!make)
      throw new Undecodable(`the content coding "${coding.replace(/[^\x21-\x7e]/g, '?').slice(0, 40)}"`);
    return make();
  });
}

/**
 * An error of a decoder (zlib's `Z_DATA_ERROR`, `Z_BUF_ERROR`, brotli's `ERR__ERROR_FORMAT_…`), not
 * one a decoder was destroyed with (a timeout, the socket closing), which the pipeline answers first.
 */
const isZlibError = (error: unknown): boolean => {
  const { code, errno } = error as { code?: unknown; errno?: unknown };
  return typeof errno === 'number' && typeof code === 'string' && /^(Z_|ERR__)/.test(code);
};

/**
 * The body, decoded as its Content-Encoding says, up to `limit` decoded bytes: the limit is on what
 * would be passed back, so a small compressed answer cannot grow past it. An empty body is empty
 * whatever its coding says (a 204 with `Content-Encoding: gzip`).
 */
async function decodedBody(
  body: Readable,
  encoding: string | string[] | undefined,
  limit: number,
): Promise<Buffer> {
  let decoders: Transform[];
  try {
    decoders = decodersOf(encoding);
  } catch (error) {
    // Not read: the connection is dropped (the body's abort error has no one else to go to).
    body.once('error', () => undefined);
    body.destroy();
    throw error;
  }
  let raw = 0;
  let decoded = 0;
  const chunks: Buffer[] = [];
  const counted = async function* (source: AsyncIterable<Buffer>) {
    for await (const chunk of source) {
      raw += chunk.length;
      yield chunk;
    }
  };
  const collect = async (source: AsyncIterable<Buffer>) => {
    for await (const chunk of source) {
      decoded += chunk.length;
      if (decoded > limit) throw new TooLarge();
      chunks.push(chunk);
    }
  };
  try {
    await (pipeline as (...streams: unknown[]) => Promise<void>)(body, counted, ...decoders, collect);
  } catch (error) {
    if (error instanceof TooLarge) throw error;
    if (isZlibError(error)) {
      if (raw === 0) return Buffer.alloc(0);
      throw new Undecodable(
        `a body that is not valid ${decoders.length > 1 ? 'for its codings' : 'as its coding says'}`,
      );
    }
    throw error;
  }
  return Buffer.concat(chunks);
}

/** One request, no redirects, every phase bounded by the timeout. */
function requestOptions(outbound: ProxyRequest, agent: Agent, timeoutMs: number) {
  return {
    method: outbound.method,
    headers: outbound.headers,
    body: outbound.body,
    dispatcher: agent,
    maxRedirections: 0,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  } as Parameters<typeof request>[1];
}

// A system error's code (ECONNREFUSED, ECONNRESET …); the HTTP client's own codes say nothing to a caller.
const SYSTEM_CODE = /^E[A-Z]{2,20}$/;

/**
 * A failed call in words for a tenant: the SSRF verdict, a timeout, a system error code (ECONNREFUSED
 * …), or what the provider answered instead of HTTP; never an assertion or an internal code of the
 * HTTP client (a provider's 101 made undici assert, and that text reached the caller).
 */
function failureOf(error: unknown): ProxyFailure {
  if (error instanceof TooLarge) return { failure: 'too_large' };
  if (error instanceof Undecodable) return { failure: 'undecodable', detail: error.message };
  const { error: kind, detail } = classify(error);
  if (kind === 'timeout') return { failure: 'timeout' };
  if (kind === 'destination_forbidden') return { failure: 'destination_forbidden', detail };
  if (kind === 'dns_failure')
    return { failure: 'unreachable', detail: `the name did not resolve: ${detail}` };
  if (kind === 'tls_error') return { failure: 'unreachable', detail: 'the TLS handshake failed' };
  if (SYSTEM_CODE.test(detail)) return { failure: 'unreachable', detail };
  const messages = messagesOf(error);
  if (/other side closed|socket hang up/i.test(messages)) {
    return { failure: 'unreachable', detail: 'the connection closed before a whole answer came' };
  }
  // undici refuses a 101 to a request that asked for no upgrade: with an Upgrade header as "bad
  // upgrade", without one by failing an assertion in its parser (the only way it is known to).
  return /bad upgrade/i.test(messages) || isAssertion(error)
    ? {
        failure: 'not_http',
        detail:
          'it answered 101 Switching Protocols (or something else that is not HTTP/1.1), and only HTTP answers are passed on',
      }
    : { failure: 'not_http', detail: 'its answer is not valid HTTP/1.1' };
}

const causesOf = (error: unknown): Array<{ name?: unknown; code?: unknown; message?: unknown }> => {
  const causes = [];
  let cause = error as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; depth < 5 && cause; depth++) {
    causes.push(cause);
    cause = cause.cause as typeof cause;
  }
  return causes;
};
const messagesOf = (error: unknown): string =>
  causesOf(error)
    .map((c) => String(c.message ?? ''))
    .join(' ');
const isAssertion = (error: unknown): boolean =>
  causesOf(error).some((c) => c.name === 'AssertionError' || c.code === 'ERR_ASSERTION');

/**
 * The credential proxy's sender: the URL checked again, the name resolved here, every address
 * checked, the socket connected to a checked address; redirects never followed; the answer read
 * whole and decoded, up to `maxAnswerBytes` decoded. `connections` per origin is the number of calls
 * the proxy lets in flight in the process, so an admitted call never queues behind others for a socket.
 */
export function createProxySender(options: {
  policy: DestinationPolicy;
  timeoutMs: number;
  connections: number;
  resolve?: Resolver;
}) {
  const lookup = (
    hostname: string,
    lookupOptions: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    resolveChecked(hostname, options.policy.allowedCidrs, options.resolve)
      .then((chosen) => {
        if (lookupOptions.all) callback(null, [chosen]);
        else callback(null, chosen.address, chosen.family);
      })
      .catch((error: Error) => callback(error, ''));
  };
  const agent = new Agent({
    connect: { lookup: lookup as never, timeout: options.timeoutMs },
    keepAliveTimeout: 4_000,
    connections: options.connections,
  });

  async function send(outbound: ProxyRequest): Promise<ProxySendResult> {
    const verdict = checkUrl(outbound.url, options.policy);
    if (!verdict.allowed) {
      return { ok: false, status: null, failure: 'destination_forbidden', detail: verdict.message };
    }
    let status: number | null = null;
    try {
      const response = await request(verdict.url, requestOptions(outbound, agent, options.timeoutMs));
      status = response.statusCode;
      const type = response.headers['content-type'];
      const contentType = (Array.isArray(type) ? type[0] : type) ?? null;
      const encoding = response.headers['content-encoding'];
      const body = await decodedBody(response.body, encoding, outbound.maxAnswerBytes);
      return { ok: true, status, contentType, body };
    } catch (error) {
      return { ok: false, status, ...failureOf(error) };
    }
  }

  return { send, close: () => agent.close() };
}

export type ProxySender = ReturnType<typeof createProxySender>;
