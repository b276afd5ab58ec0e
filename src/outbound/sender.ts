import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent, request, type Dispatcher } from 'undici';
import type { Budget } from '../deadline.js';
import { withClientCredentials } from './client-credentials.js';
import { lookaheadBytes, redactBody, redactText, spellingsOf } from './redact.js';
import type { AnswerRecord, OutboundRequest, SendError, SendResult, WholeAnswer } from './request.js';
import { checkAddress, checkUrl, type Cidr, type DestinationPolicy } from './ssrf-policy.js';

export type {
  AnswerRecord,
  ClientCredentialsGrant,
  OutboundRequest,
  SendError,
  SendResult,
  WholeAnswer,
} from './request.js';

/** Resolves a name to every address it has; tests inject one to play DNS rebinding. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const defaultResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

// Answers are read this far and thrown away, but for the start a request asks to keep (`keepBody`
// for the caller to read, `keepBodyBytes` for the event log).
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Headers of an answer the event log keeps, in the order they came. */
export const MAX_KEPT_HEADERS = 20;
/** How much of an answer `keepBody` keeps: enough for an error token, never a whole page. */
export const KEPT_BODY_BYTES = 4 * 1024;

class Refused extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

class DnsFailure extends Error {}

const NOT_HTTP =
  'the answer was 101 Switching Protocols (or something else that is not HTTP/1.1); only HTTP answers count';

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
    // undici refuses a 101 to a request that asked for no upgrade: with an Upgrade header as "bad
    // upgrade", without one by failing an assertion of its parser, whose code said nothing to a tenant.
    if (e.name === 'AssertionError' || code === 'ERR_ASSERTION' || /bad upgrade/i.test(e.message ?? '')) {
      return { error: 'connection_error', detail: NOT_HTTP };
    }
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

/** What an attempt came to, before its duration is known. */
interface Outcome {
  status: number | null;
  remoteAddress: string | null;
  /** null: taken (a 2xx answer). */
  error: SendError | null;
  errorDetail: string | null;
  retryAfterSeconds?: number | null;
  body?: string;
  response?: AnswerRecord | null;
  answer?: WholeAnswer;
}

/** The one place a SendResult is made: ok when nothing went wrong, timed from `started`. */
function resultOf(started: number, outcome: Outcome): SendResult {
  const { body, ...fields } = outcome;
  return {
    ok: fields.error === null,
    ...fields,
    retryAfterSeconds: fields.retryAfterSeconds ?? null,
    response: fields.response ?? null,
    ...(body === undefined ? {} : { body }),
    durationMs: Math.round(performance.now() - started),
  };
}

// Text a database column can hold: NUL (which PostgreSQL text refuses) becomes U+FFFD, like a bad byte.
const storable = (text: string): string => text.replaceAll('\u0000', '\uFFFD');

/**
 * An answer's first MAX_KEPT_HEADERS headers as text, repeated ones joined as HTTP joins them, with
 * every spelling of a secret the request carried replaced by [redacted] (redact.ts).
 */
export function keptHeaders(
  headers: Record<string, string | string[] | undefined>,
  spellings: readonly string[] = [],
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers).slice(0, MAX_KEPT_HEADERS)) {
    if (value === undefined) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    kept[storable(redactText(name, spellings))] = storable(redactText(text, spellings));
  }
  return kept;
}

/**
 * What an answer means: a 2xx is taken; a 3xx is a redirect, never followed; anything else failed,
 * and may say when to try again (Retry-After in seconds; an HTTP date is not read).
 */
export function judgeAnswer(
  status: number,
  retryAfter: string | string[] | undefined,
): Pick<Outcome, 'error' | 'errorDetail' | 'retryAfterSeconds'> {
  if (status >= 200 && status < 300) return { error: null, errorDetail: null, retryAfterSeconds: null };
  if (status >= 300 && status < 400) {
    return {
      error: 'redirect_refused',
      errorDetail: `HTTP ${status}: redirects are not followed`,
      retryAfterSeconds: null,
    };
  }
  const seconds = Number(retryAfter);
  const retryAfterSeconds = Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
  return { error: 'http_status', errorDetail: `HTTP ${status}`, retryAfterSeconds };
}

/**
 * Reads an answer's body up to MAX_RESPONSE_BYTES and throws it away, keeping its first `keepBytes`
 * (at most MAX_RESPONSE_BYTES). Returns what was kept, whether the body had more, and whether it
 * ended with the kept bytes (nothing of it unread or thrown away).
 */
async function readAnswer(
  body: Dispatcher.ResponseData<unknown>['body'],
  keepBytes: number,
): Promise<{ kept: Buffer; truncated: boolean; ended: boolean }> {
  let read = 0;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    read += buffer.length;
    if (keptBytes < keepBytes) {
      const part = buffer.subarray(0, keepBytes - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    }
    if (read >= MAX_RESPONSE_BYTES) {
      body.destroy();
      return { kept: Buffer.concat(kept), truncated: read > keptBytes, ended: false };
    }
  }
  return { kept: Buffer.concat(kept), truncated: read > keptBytes, ended: read === keptBytes };
}

/**
 * The answer as the caller asked to keep it: `body` for the caller, `response` for the event log.
 * The log's copy has the request's secrets taken out (`redact`, redact.ts): the body is read a
 * secret's length beyond the bytes kept, so that one across the cut is found and hidden whole.
 */
async function keptAnswer(
  response: Dispatcher.ResponseData<unknown>,
  outbound: OutboundRequest,
): Promise<{ body?: string; response: AnswerRecord }> {
  const logBytes = outbound.keepBodyBytes ?? 0;
  const callerBytes = outbound.keepBody === true ? KEPT_BODY_BYTES : 0;
  const spellings = spellingsOf(outbound.redact ?? []);
  const lookahead = logBytes > 0 ? lookaheadBytes(spellings) : 0;
  const { kept, truncated, ended } = await readAnswer(
    response.body,
    Math.max(logBytes + lookahead, callerBytes),
  );
  const record: AnswerRecord = {
    headers: keptHeaders(response.headers, spellings),
    body: logBytes > 0 ? storable(redactBody(kept, logBytes, ended, spellings)) : null,
    bodyTruncated: truncated || kept.length > logBytes,
  };
  if (callerBytes === 0) return { response: record };
  return { body: kept.subarray(0, callerBytes).toString('utf8'), response: record };
}

/** Reads an answer's whole body up to `limit` bytes; a larger one is cut off and only said to be so. */
async function wholeAnswer(response: Dispatcher.ResponseData<unknown>, limit: number): Promise<WholeAnswer> {
  const type = response.headers['content-type'];
  const contentType = (Array.isArray(type) ? type[0] : type) ?? null;
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of response.body) {
    const buffer = chunk as Buffer;
    read += buffer.length;
    if (read > limit) {
      response.body.destroy();
      return { contentType, body: Buffer.alloc(0), tooLarge: true };
    }
    chunks.push(buffer);
  }
  return { contentType, body: Buffer.concat(chunks), tooLarge: false };
}

/**
 * One request, no redirects, every phase bounded by the timeout, and by the budget of the work it
 * is part of (a delivery attempt's): the request is aborted when either runs out.
 */
function requestOptions(outbound: OutboundRequest, agent: Agent, timeoutMs: number) {
  const { budget } = outbound;
  // undici reads a timeout of 0 as none; a spent budget never gets here (see `send`).
  const ms = Math.max(1, Math.ceil(Math.min(timeoutMs, budget?.remainingMs() ?? timeoutMs)));
  const timeout = AbortSignal.timeout(timeoutMs);
  return {
    method: outbound.method,
    headers: outbound.headers,
    body: outbound.body,
    dispatcher: agent,
    maxRedirections: 0,
    headersTimeout: ms,
    bodyTimeout: ms,
    signal: budget ? AbortSignal.any([timeout, budget.signal]) : timeout,
  } as Parameters<typeof request>[1];
}

/** The answer as the request asked to keep it: for the log and the caller, or whole (the proxy). */
async function answerOf(
  response: Dispatcher.ResponseData<unknown>,
  outbound: OutboundRequest,
): Promise<Pick<Outcome, 'body' | 'response' | 'answer'>> {
  if (outbound.keepAnswerBytes === undefined) return keptAnswer(response, outbound);
  const headers = keptHeaders(response.headers, spellingsOf(outbound.redact ?? []));
  const answer = await wholeAnswer(response, outbound.keepAnswerBytes);
  return { response: { headers, body: null, bodyTruncated: false }, answer };
}

/** What a call comes to when the work it is part of has no time left: it is not made. */
const OUT_OF_TIME: Outcome = {
  status: null,
  remoteAddress: null,
  error: 'timeout',
  errorDetail: 'DELIVERY_TIMEOUT_MS ran out before this request could start',
};

const spent = (budget: Budget | undefined): boolean => budget !== undefined && budget.remainingMs() <= 0;

/**
 * Outbound HTTP for deliveries and alerts, under the SSRF policy at send time: the URL is checked
 * again, the name is resolved here, every address is checked, and the socket connects to a checked
 * address (the lookup answers only that), so a second DNS answer cannot rebind the request.
 * Redirects are never followed.
 */
export function createSender(options: { policy: DestinationPolicy; timeoutMs: number; resolve?: Resolver }) {
  const resolve = options.resolve ?? defaultResolver;
  // The address each name was last connected to: where an answer (or a failure) came from.
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
    const verdict = checkUrl(outbound.url, options.policy);
    if (!verdict.allowed) {
      const error = 'destination_forbidden';
      return resultOf(started, { status: null, remoteAddress: null, error, errorDetail: verdict.message });
    }
    if (spent(outbound.budget)) return resultOf(started, OUT_OF_TIME);
    const host = verdict.url.hostname.replace(/^\[(.*)\]$/, '$1');
    const remoteAddress = () => verdict.address ?? pinned.get(host) ?? null;
    try {
      const response = await request(verdict.url, requestOptions(outbound, agent, options.timeoutMs));
      const answer = await answerOf(response, outbound);
      const status = response.statusCode;
      const judged = judgeAnswer(status, response.headers['retry-after']);
      return resultOf(started, { status, remoteAddress: remoteAddress(), ...judged, ...answer });
    } catch (error) {
      const { error: code, detail } = classify(error);
      return resultOf(started, {
        status: null,
        remoteAddress: remoteAddress(),
        error: code,
        errorDetail: detail,
      });
    }
  }

  return { send: withClientCredentials(send), close: () => agent.close() };
}

export type Sender = ReturnType<typeof createSender>;
