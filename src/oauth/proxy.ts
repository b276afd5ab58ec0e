import { Counter } from 'prom-client';
import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { isIdOf } from '../crypto/ids.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { TRACEPARENT_HEADER } from '../outbound/headers.js';
import type { ProxyRequest, ProxySender, ProxySendResult } from '../outbound/proxy-sender.js';
import { untracedTraceparent } from '../telemetry/start.js';
import { VERSION } from '../version.js';
import { CONNECTOR_PREFIX } from './providers.js';
import { findProxiedConnection } from './store.js';
import { accessTokenFor, notOAuth2, TokenEndpointError, type TokenDeps } from './tokens.js';

// The credential proxy (docs/api/oauth.md): a tenant's call to its provider's API, with the
// connection's access token added on the way and never shown.

/** A request body passed on: at most this many bytes (a larger one is 413 before it is read whole). */
export const MAX_PROXY_REQUEST_BYTES = 1024 * 1024;
/** A provider's answer passed back: at most this many bytes, else 502. */
export const MAX_PROXY_ANSWER_BYTES = 10 * 1024 * 1024;

export type ProxyMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * What the proxy needs; `takePermit` is the throttle's counter (delivery/throttle.ts), given by
 * buildApp; `sender` is the proxy's own (outbound/proxy-sender.ts), the token calls go through
 * `tokens.sender`.
 */
export interface ProxyDeps {
  ctx: Pick<AppContext, 'db' | 'keyring' | 'now' | 'metrics'>;
  tokens: TokenDeps;
  sender: Pick<ProxySender, 'send'>;
  takePermit(connectionId: string, max: number, now: Date): Promise<boolean>;
}

/** One call as the route hands it over. */
export interface ProxyCall {
  method: ProxyMethod;
  /** What follows `/proxy/` in the request, query string included, as the client sent it. */
  pathAndQuery: string;
  contentType: string | undefined;
  accept: string | undefined;
  body: Buffer | undefined;
  /** The W3C trace context to send: the request's span's (tracing on), else a new one. */
  traceparent: string | undefined;
}

/** What goes back to the client: the provider's status, content type and body, nothing else. */
export interface ProxyAnswer {
  status: number;
  contentType: string | null;
  body: Buffer;
}

/** The proxy's metric: calls to providers by provider and the class of their answer (or `error`). */
export function proxyMetrics(ctx: Pick<AppContext, 'metrics'>) {
  return new Counter({
    name: 'hubgate_oauth_proxy_requests_total',
    help: 'Calls through the credential proxy, by OAuth provider and the status class of its answer (2xx … 5xx; error: none usable).',
    labelNames: ['provider', 'status_class'] as const,
    registers: [ctx.metrics.registry],
  });
}

export type ProxyMetrics = ReturnType<typeof proxyMetrics>;

// Percent-decoding is undone this many times over when a path is checked: a provider (or a proxy
// in front of it) that decodes once more must still find nothing that climbs (`%252e%252e`).
const DECODINGS = 3;

/** A segment and what it becomes decoded once, twice …, until decoding changes nothing or fails. */
function decodingsOf(segment: string): string[] {
  const layers = [segment];
  let current = segment;
  for (let i = 0; i < DECODINGS && current.includes('%'); i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      break;
    }
    if (next === current) break;
    layers.push(next);
    current = next;
  }
  return layers;
}

/**
 * A segment that would move a request elsewhere under some reading of it: `.` or `..` (also with
 * path parameters, `..;x`, which Tomcat-style servers strip, and with spaces or NUL around), a
 * slash or a backslash that decoding produces (`%2f`, `%5c`, a raw `\` that WHATWG parsing turns
 * into `/`), each raw or percent-encoded once or more.
 */
function climbs(segment: string): boolean {
  return decodingsOf(segment).some((layer, depth) => {
    if (layer.includes('\\') || (depth > 0 && layer.includes('/'))) return true;
    return layer.split('/').some((part) => {
      // eslint-disable-next-line no-control-regex
      const bare = (part.split(';')[0] ?? '').replace(/^[\s\u0000]+|[\s\u0000]+$/g, '');
      return bare === '.' || bare === '..';
    });
  });
}

/**
 * Refuses a path (what follows `/proxy/`, query string excluded) that could leave the provider's API
 * base path at the provider (docs/api/oauth.md): `400 validation_failed`, checked before the
 * connection is looked up, as every validation is (contract §3).
 */
export function checkProxyPath(pathAndQuery: string): void {
  const queryAt = pathAndQuery.indexOf('?');
  const path = queryAt === -1 ? pathAndQuery : pathAndQuery.slice(0, queryAt);
  if (path.split('/').some(climbs)) {
    throw new HttpProblem(
      'validation_failed',
      'path: no "." or ".." segments (with or without ";" parameters), encoded slashes or backslashes, raw or percent-encoded',
      {
        errors: [{ path: 'path', message: 'must not climb out of the provider’s API base URL' }],
      },
    );
  }
}

/**
 * The provider's URL for a path: `apiBaseUrl` + `/` + path, query string kept. A path that would
 * leave the base (dot segments, another origin) is refused.
 */
export function targetUrl(apiBaseUrl: string, pathAndQuery: string): string {
  checkProxyPath(pathAndQuery);
  const base = new URL(apiBaseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const target = new URL(`${base.origin}${basePath}/${pathAndQuery}`);
  if (target.origin !== base.origin || !target.pathname.startsWith(`${basePath}/`)) {
    throw new HttpProblem('validation_failed', 'path: must stay under the provider’s API base URL');
  }
  return target.href;
}

const statusClass = (status: number | null): string =>
  status === null ? 'error' : `${Math.floor(status / 100)}xx`;

/** Why there is no answer to pass back, in words (never a header, a token or the provider's body). */
function noAnswer(result: Extract<ProxySendResult, { ok: false }>): HttpProblem {
  const limit = `${MAX_PROXY_ANSWER_BYTES / 1024 / 1024} MiB`;
  switch (result.failure) {
    case 'timeout':
      return new HttpProblem('bad_gateway', 'The provider’s API did not answer within DELIVERY_TIMEOUT_MS.');
    case 'destination_forbidden':
      return new HttpProblem(
        'bad_gateway',
        `The provider’s API is a refused destination (${result.detail}).`,
      );
    case 'unreachable':
      return new HttpProblem('bad_gateway', `The provider’s API could not be reached (${result.detail}).`);
    case 'not_http':
      return new HttpProblem(
        'bad_gateway',
        `The provider’s API gave no answer to pass on: ${result.detail}.`,
      );
    case 'too_large':
      return new HttpProblem('bad_gateway', `The provider’s answer is larger than ${limit} (decoded).`);
    case 'undecodable':
      return new HttpProblem(
        'bad_gateway',
        `The provider’s answer could not be decoded (${result.detail}): gzip, deflate and br are read.`,
      );
  }
}

/** The provider's answer as the client gets it, or the 502 of one that cannot be passed back. */
function answerOf(result: ProxySendResult): ProxyAnswer {
  if (!result.ok) throw noAnswer(result);
  // HTTP has no such status: nothing a client could be handed (Node parses any three digits).
  if (result.status < 200 || result.status > 599) {
    throw new HttpProblem(
      'bad_gateway',
      `The provider’s API answered HTTP ${result.status}, which is not a status.`,
    );
  }
  if (result.status >= 300 && result.status < 400) {
    throw new HttpProblem(
      'bad_gateway',
      `The provider’s API answered a redirect (HTTP ${result.status}), which is not followed.`,
    );
  }
  return { status: result.status, contentType: result.contentType, body: result.body };
}

const maxPerSecondOf = (config: Record<string, unknown>): number | null => {
  const max = config.maxPerSecond;
  return typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : null;
};

/**
 * Proxied calls in flight per process, per tenant and in all (docs/api/oauth.md): each may hold up
 * to 10 MiB of its provider's answer, and a slow provider keeps calls waiting for as long as
 * DELIVERY_TIMEOUT_MS, so without a bound a few keys could fill the memory; per tenant, so that one
 * tenant's slow provider does not take every call's place.
 */
export const PROXY_CALLS_AT_ONCE_PER_TENANT = 32;
export const PROXY_CALLS_AT_ONCE = 128;

/** Counts calls in flight; `enter` answers how to leave, or null when the call must wait its turn (429). */
export function createCallLimit(perTenant = PROXY_CALLS_AT_ONCE_PER_TENANT, total = PROXY_CALLS_AT_ONCE) {
  const ofTenant = new Map<string, number>();
  let all = 0;
  return {
    enter(tenantId: string): (() => void) | null {
      const mine = ofTenant.get(tenantId) ?? 0;
      if (mine >= perTenant || all >= total) return null;
      ofTenant.set(tenantId, mine + 1);
      all++;
      let left = false;
      return () => {
        if (left) return;
        left = true;
        all--;
        const now = (ofTenant.get(tenantId) ?? 1) - 1;
        if (now === 0) ofTenant.delete(tenantId);
        else ofTenant.set(tenantId, now);
      };
    },
  };
}

/** The 429 of a call made while too many of this tenant's (or this server's) are in flight. */
export const tooManyAtOnce = (): HttpProblem =>
  new HttpProblem(
    'rate_limited',
    'Too many calls through the credential proxy are waiting for providers at once: try again in a moment.',
    { headers: { 'retry-after': '1' } },
  );

/** The 429 of a call over `maxPerSecond`: Retry-After is the start of the next second, rounded up. */
function throttled(now: Date, maxPerSecond: number): HttpProblem {
  const seconds = Math.max(1, Math.ceil((1000 - (now.getTime() % 1000)) / 1000));
  return new HttpProblem('rate_limited', 'Over this connection’s maxPerSecond: try again in a moment.', {
    headers: { 'retry-after': String(seconds) },
    // RateLimit-Policy names the connection's limit (http/rate-limit-fields.ts).
    limit: { policy: 'connection', quota: maxPerSecond, windowSeconds: 1 },
  });
}

/**
 * One proxied call: the connection must be an OAuth2 connection, active and authorized (else 409),
 * within its `maxPerSecond` (else 429); the request goes to the provider through the outbound
 * sender (SSRF policy at every call, no redirects, DELIVERY_TIMEOUT_MS) with `Authorization: Bearer`;
 * a 401 from the provider refreshes the token once and sends once more. Counted per provider.
 */
export async function proxyCall(
  deps: ProxyDeps,
  metrics: ProxyMetrics,
  scope: TenantScope,
  connectionId: string,
  call: ProxyCall,
): Promise<ProxyAnswer> {
  const { ctx } = deps;
  checkProxyPath(call.pathAndQuery);
  const found = isIdOf('con', connectionId)
    ? await findProxiedConnection(ctx.db, scope, connectionId, CONNECTOR_PREFIX)
    : undefined;
  if (!found) throw notFound('connection');
  const { provider_key: providerKey, provider_api_base_url: apiBaseUrl, ...row } = found;
  if (providerKey === null || apiBaseUrl === null) throw notOAuth2();
  const url = targetUrl(apiBaseUrl, call.pathAndQuery);
  let token = await tokenOrBadGateway(deps, scope, connectionId, { row });
  const max = maxPerSecondOf(row.config);
  if (max !== null) {
    const now = ctx.now();
    if (!(await deps.takePermit(connectionId, max, now))) throw throttled(now, max);
  }
  const request = (accessToken: string): ProxyRequest => ({
    method: call.method,
    url,
    headers: {
      'user-agent': `hubgate/${VERSION}`,
      ...(call.contentType ? { 'content-type': call.contentType } : {}),
      ...(call.accept ? { accept: call.accept } : {}),
      [TRACEPARENT_HEADER]: call.traceparent ?? untracedTraceparent(),
      authorization: `Bearer ${accessToken}`,
    },
    ...(call.body && call.body.length > 0 ? { body: call.body } : {}),
    maxAnswerBytes: MAX_PROXY_ANSWER_BYTES,
  });
  let result = await deps.sender.send(request(token));
  if (result.status === 401) {
    // The provider refused the token (revoked, rotated, expired early): refresh once, try once more.
    token = await tokenOrBadGateway(deps, scope, connectionId, { forceRefresh: true });
    result = await deps.sender.send(request(token));
  }
  metrics.inc({ provider: providerKey, status_class: result.ok ? statusClass(result.status) : 'error' });
  return answerOf(result);
}

/** The access token; a token endpoint that cannot be asked is the proxy's 502 (saying so in words). */
async function tokenOrBadGateway(
  deps: ProxyDeps,
  scope: TenantScope,
  connectionId: string,
  options: Parameters<typeof accessTokenFor>[3],
): Promise<string> {
  try {
    const token = await accessTokenFor(deps.tokens, scope, connectionId, options);
    return token.accessToken;
  } catch (error) {
    if (error instanceof TokenEndpointError) throw new HttpProblem('bad_gateway', error.message);
    throw error;
  }
}
