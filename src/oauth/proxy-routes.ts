import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { tenantRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { StrictObject } from '../http/schemas.js';
import { createProxySender } from '../outbound/proxy-sender.js';
import type { RoutePlugin } from '../services.js';
import {
  createCallLimit,
  MAX_PROXY_ANSWER_BYTES,
  MAX_PROXY_REQUEST_BYTES,
  PROXY_CALLS_AT_ONCE,
  proxyCall,
  proxyMetrics,
  tooManyAtOnce,
  type ProxyDeps,
  type ProxyMethod,
} from './proxy.js';

// On the automation allowlist (docs/api/authentication.md): a server-side integration calls its
// provider through hubgate with a tnt_ key of integrations:OPERATOR.
const operator = tenantRule('integrations', 'OPERATOR');
const METHODS: readonly ProxyMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
export const PROXY_PATH = '/api/v1/integrations/connections/:id/proxy/*';
/**
 * The Content-Security-Policy of a provider's answer passed back, and of nothing else hubgate
 * answers: also how the MCP tool tells the provider's answer from hubgate's own refusal (mcp/proxy-tool.ts).
 */
export const PROXIED_ANSWER_CSP = "sandbox; default-src 'none'";
const ROUTE_SEGMENTS = PROXY_PATH.split('/').length - 1;

const ProxyParams = StrictObject({
  id: Type.String({ description: 'Opaque ID' }),
  '*': Type.String({
    description: "the path under the provider's apiBaseUrl, slashes and all (documented as `path`)",
  }),
});

const decoded = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/**
 * What follows `/proxy/` as the client sent it (still percent-encoded), query string included: the
 * raw path's segments after the route's seven (`''/api/v1/integrations/connections/:id/proxy`),
 * counted rather than searched for, since the router also takes `prox%79` for `proxy`.
 */
function pathAndQueryOf(request: FastifyRequest): string {
  const url = request.raw.url ?? '';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const segments = path.split('/');
  if (segments.length < ROUTE_SEGMENTS || decoded(segments[ROUTE_SEGMENTS - 1] ?? '') !== 'proxy') {
    throw new HttpProblem('validation_failed', 'path: not a credential proxy path');
  }
  return segments.slice(ROUTE_SEGMENTS).join('/') + (queryAt === -1 ? '' : url.slice(queryAt));
}

const headerOf = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(', ') : value;

/** One method's route schema: the path's params, and the provider's answer of any status and type. */
const schemaOf = (method: ProxyMethod) => ({
  tags: ['connections'],
  operationId: `${method.toLowerCase()}IntegrationsConnectionsByIdProxyPath`,
  summary: `${method} through an OAuth2 connection to its provider's API, with its access token`,
  description:
    "Sent to the provider's apiBaseUrl + /<path> with the query string, the body (≤ 1 MiB) and the " +
    'content-type and accept headers, plus Authorization: Bearer <access token>; the answer is the ' +
    `provider's status, content-type and body (≤ ${MAX_PROXY_ANSWER_BYTES / 1024 / 1024} MiB once decoded, ` +
    'sent back without Content-Encoding; else 502). A path that climbs (dot segments, ..;, backslashes, ' +
    'encoded slashes, percent-encoded once or more) is 400. 409 when the connection is not active and authorized; 429 with Retry-After over its ' +
    'maxPerSecond; a provider 401 refreshes the token once and tries once more.',
  params: ProxyParams,
  response: {
    '2xx': {
      description: "The provider's answer: its status, content type and body, as they came",
      content: { '*/*': { schema: {} } },
    },
    default: {
      description:
        "The provider's answer of any other status, as it came (errors of hubgate's own: problem details)",
      content: { '*/*': { schema: {} } },
    },
  },
});

type GivenDeps = Omit<ProxyDeps, 'sender' | 'ctx'> & { ctx: ProxyDeps['ctx'] & Pick<AppContext, 'config'> };

/**
 * The proxy's own pool, a connection per origin for every call `createCallLimit` lets in flight in
 * the process: an admitted call never waits for a socket behind other tenants' slow calls (the
 * token calls' and deliveries' pools are others). Issue 37; docs/decisions/0065-proxy-pool-and-provider-words.md.
 */
function proxySenderOf({ ctx }: GivenDeps) {
  const { delivery } = ctx.config;
  return createProxySender({
    policy: delivery,
    timeoutMs: delivery.timeoutMs,
    connections: PROXY_CALLS_AT_ONCE,
  });
}

/**
 * The credential proxy's routes (docs/api/oauth.md): one per method, each passing on any body of
 * up to 1 MiB as bytes (this plugin's own content-type parser; the rest of the API takes JSON only).
 */
export const proxyRoutes: RoutePlugin = async (app, services) => {
  const given: GivenDeps = {
    ctx: services.ctx,
    tokens: services.oauth.tokens,
    takePermit: services.takePermit,
  };
  const { tracing } = services.ctx;
  const sender = proxySenderOf(given);
  const deps: ProxyDeps = { ...given, sender };
  const metrics = proxyMetrics(deps.ctx);
  const limit = createCallLimit();
  app.addHook('onClose', () => sender.close());
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    '*',
    { parseAs: 'buffer', bodyLimit: MAX_PROXY_REQUEST_BYTES },
    (_r, body, done) => {
      done(null, body);
    },
  );
  for (const method of METHODS) {
    app.route({
      method,
      url: PROXY_PATH,
      bodyLimit: MAX_PROXY_REQUEST_BYTES,
      config: { ...operator, openapi: { problems: ['conflict', 'bad_gateway'] } },
      schema: schemaOf(method),
      handler: async (request, reply) => {
        const ids = tracing?.traceIdsOf(request);
        const scope = requestScope(request);
        const leave = limit.enter(scope.tenantId);
        if (!leave) throw tooManyAtOnce();
        let answer: Awaited<ReturnType<typeof proxyCall>>;
        try {
          answer = await proxyCall(deps, metrics, scope, request.params.id, {
            method,
            pathAndQuery: pathAndQueryOf(request),
            contentType: headerOf(request.headers['content-type']),
            accept: headerOf(request.headers.accept),
            body: Buffer.isBuffer(request.body) ? request.body : undefined,
            traceparent: ids ? `00-${ids.trace_id}-${ids.span_id}-01` : undefined,
          });
        } finally {
          leave();
        }
        // A call the provider answered counts in the tenant's usage (docs/api/usage.md).
        services.ctx.usage.count(scope.tenantId, 'proxyCalls', 1, services.ctx.now());
        reply.code(answer.status);
        if (answer.contentType) reply.header('content-type', answer.contentType);
        // The provider's bytes come from hubgate's origin: a browser must never run them as a page
        // of it (a provider's HTML with a script would read the session's CSRF cookie).
        reply.header('content-security-policy', PROXIED_ANSWER_CSP);
        reply.header('x-content-type-options', 'nosniff');
        return reply.send(answer.body);
      },
    });
  }
};
