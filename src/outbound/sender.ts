import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { Agent, request } from 'undici';
import { type Cidr, checkAddress, checkUrl, type DestinationPolicy } from './ssrf-policy.js';

/** How an attempt failed (contract §7 `error`). */
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
}

export interface OutboundRequest {
  method: 'POST' | 'PUT' | 'PATCH';
  url: string;
  headers: Record<string, string>;
  body: string;
  /**
   * Keep the start of the answer as text (Slack says what went wrong in its body). Off by default:
   * deliveries store nothing of an answer.
   */
  keepBody?: boolean;
}

/** Resolves a name to every address it has; tests inject one to play DNS rebinding. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const defaultResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

// Answers are read this far and thrown away: nothing of them is stored (a request that asks keeps
// its first KEPT_BODY_BYTES as text, for the caller to read, never to store).
const MAX_RESPONSE_BYTES = 64 * 1024;
/** How much of an answer `keepBody` keeps: enough for an error token, never a whole page. */
export const KEPT_BODY_BYTES = 4 * 1024;

class Refused extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

class DnsFailure extends Error {}

/** Walks the error and its causes: the first that says what happened decides; else the deepest code. */
export function classify(error: unknown): { error: SendError; detail: string } {
  let detail = 'the connection failed';
  let cause: unknown = error;
  for (let depth = 0; depth < 5 && cause; depth++) {
    if (cause instanceof Refused) return { error: 'destination_forbidden', detail: cause.detail };
    if (cause instanceof DnsFailure) return { error: 'dns_failure', detail: cause.message };
    const e = cause as { name?: string; code?: string; message?: string; cause?: unknown };
    const code = e.code ?? '';
    if (e.name === 'TimeoutError' || e.name === 'AbortError' || /TIMEOUT/.test(code)) {
      return { error: 'timeout', detail: 'no complete answer within DELIVERY_TIMEOUT_MS' };
    }
    if (
      /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO|DEPTH_ZERO|SELF_SIGNED)/.test(code) ||
      /SSL|TLS/.test(e.message ?? '')
    ) {
      return { error: 'tls_error', detail: code || 'TLS handshake failed' };
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { error: 'dns_failure', detail: code };
    // undici's generic code says nothing a cause does not say better.
    if (code && code !== 'UND_ERR') detail = code;
    cause = e.cause;
  }
  return { error: 'connection_error', detail };
}

/**
 * Resolves a name and checks every address it has; the first is where to connect (and nothing
 * else: a second answer cannot rebind). Throws what `classify` names dns_failure or
 * destination_forbidden.
 */
export async function resolveChecked(
  hostname: string,
  allowedCidrs: Cidr[],
  resolve: Resolver = defaultResolver,
): Promise<LookupAddress> {
  const addresses = await resolve(hostname).catch((error: { code?: string }) => {
    throw new DnsFailure(error.code ?? 'the name did not resolve');
  });
  const [chosen] = addresses;
  if (!chosen) throw new DnsFailure('the name has no address');
  for (const { address } of addresses) {
    const verdict = checkAddress(address, allowedCidrs);
    if (!verdict.allowed) {
      throw new Refused(`${hostname} resolves to ${address}, in a refused range: ${verdict.range}`);
    }
  }
  return chosen;
}

/**
 * Outbound HTTP for deliveries and alerts, under the SSRF policy at send time: the URL is checked
 * again, the name is resolved here, every address is checked, and the socket connects to a checked
 * address (the lookup answers only that), so a second DNS answer cannot rebind the request.
 * Redirects are never followed.
 */
export function createSender(options: { policy: DestinationPolicy; timeoutMs: number; resolve?: Resolver }) {
  const resolve = options.resolve ?? defaultResolver;
  const pinned = new Map<string, string>();

  const lookup = (
    hostname: string,
    lookupOptions: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    resolveChecked(hostname, options.policy.allowedCidrs, resolve)
      .then((chosen) => {
        pinned.set(hostname, chosen.address);
        if (lookupOptions.all) callback(null, [chosen]);
        else callback(null, chosen.address, chosen.family);
      })
      .catch((error: Error) => callback(error, ''));
  };

  const agent = new Agent({
    connect: { lookup: lookup as never, timeout: options.timeoutMs },
    keepAliveTimeout: 4_000,
    connections: 64,
  });

  async function send(outbound: OutboundRequest): Promise<SendResult> {
    const started = performance.now();
    const done = (result: Omit<SendResult, 'durationMs'>): SendResult => ({
      ...result,
      durationMs: Math.round(performance.now() - started),
    });
    const verdict = checkUrl(outbound.url, options.policy);
    if (!verdict.allowed) {
      return done({
        ok: false,
        status: null,
        remoteAddress: null,
        error: 'destination_forbidden',
        errorDetail: verdict.message,
        retryAfterSeconds: null,
      });
    }
    const host = verdict.url.hostname.replace(/^\[(.*)\]$/, '$1');
    try {
      const response = await request(verdict.url, {
        method: outbound.method,
        headers: outbound.headers,
        body: outbound.body,
        dispatcher: agent,
        maxRedirections: 0,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        signal: AbortSignal.timeout(options.timeoutMs),
      } as Parameters<typeof request>[1]);
      let read = 0;
      const kept: Buffer[] = [];
      let keptBytes = 0;
      for await (const chunk of response.body) {
        const buffer = chunk as Buffer;
        read += buffer.length;
        if (outbound.keepBody && keptBytes < KEPT_BODY_BYTES) {
          const part = buffer.subarray(0, KEPT_BODY_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        }
        if (read >= MAX_RESPONSE_BYTES) {
          response.body.destroy();
          break;
        }
      }
      const body = outbound.keepBody ? { body: Buffer.concat(kept).toString('utf8') } : {};
      const remoteAddress = verdict.address ?? pinned.get(host) ?? null;
      const status = response.statusCode;
      const retryAfter = Number(response.headers['retry-after']);
      const retryAfterSeconds = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : null;
      if (status >= 200 && status < 300) {
        return done({
          ok: true,
          status,
          remoteAddress,
          error: null,
          errorDetail: null,
          retryAfterSeconds: null,
          ...body,
        });
      }
      if (status >= 300 && status < 400) {
        return done({
          ok: false,
          status,
          remoteAddress,
          error: 'redirect_refused',
          errorDetail: `HTTP ${status}: redirects are not followed`,
          retryAfterSeconds: null,
          ...body,
        });
      }
      return done({
        ok: false,
        status,
        remoteAddress,
        error: 'http_status',
        errorDetail: `HTTP ${status}`,
        retryAfterSeconds,
        ...body,
      });
    } catch (error) {
      const { error: code, detail } = classify(error);
      return done({
        ok: false,
        status: null,
        remoteAddress: verdict.address ?? pinned.get(host) ?? null,
        error: code,
        errorDetail: detail,
        retryAfterSeconds: null,
      });
    }
  }

  return { send, close: () => agent.close() };
}

export type Sender = ReturnType<typeof createSender>;
