import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type { DeclaredRoute } from '../access/gate.js';
import { viaMcpHeader } from '../access/via.js';
import { HttpProblem } from '../http/problem.js';
import { PROXIED_ANSWER_CSP, PROXY_PATH } from '../oauth/proxy-routes.js';
import { checkProxyPath, MAX_PROXY_REQUEST_BYTES } from '../oauth/proxy.js';
import { callRoute, failureOf, type Caller } from './call.js';
import type { JsonSchema } from './tools.js';

/** The most of a provider's answer a tool result holds, as text (an agent reads text, not bytes). */
export const MAX_TOOL_ANSWER_BYTES = 1024 * 1024;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const PROXY_TOOL = {
  name: 'call_connection_api',
  description:
    "Call a connection's provider API through hubgate's credential proxy: hubgate adds the access token " +
    '(never shown). `path` is under the provider\'s API base URL (no "..", no "?" — put the query in ' +
    "`query`); `body` is text of at most 1 MiB. The answer is the provider's status, content type and " +
    'body as text (at most 1 MiB, `truncated` when cut).',
  inputSchema: {
    type: 'object' as const,
    properties: {
      connectionId: { type: 'string', description: 'an OAuth2 connection of the tenant' },
      method: { type: 'string', enum: [...METHODS] },
      path: { type: 'string', description: "under the provider's API base URL, e.g. `v1/users/me`" },
      query: { type: 'object', additionalProperties: { type: 'string' } },
      body: { type: 'string', description: 'the request body, at most 1 MiB' },
      contentType: { type: 'string', description: "the body's media type; `application/json` unless given" },
    },
    required: ['connectionId', 'method', 'path'],
    additionalProperties: false,
  } satisfies JsonSchema,
  outputSchema: {
    type: 'object' as const,
    properties: {
      status: { type: 'integer' },
      contentType: { type: ['string', 'null'] },
      body: { type: 'string' },
      truncated: { type: 'boolean' },
    },
    required: ['status', 'contentType', 'body', 'truncated'],
    additionalProperties: false,
  } satisfies JsonSchema,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
};

/** The proxy route a tool call of this method is: the one whose access rule decides. */
export const proxyRouteOf = (declared: readonly DeclaredRoute[], method = 'GET'): DeclaredRoute | undefined =>
  declared.find((route) => route.url === PROXY_PATH && route.method === method);

const bad = (message: string): McpError => new McpError(ErrorCode.InvalidParams, message);

interface ProxyArguments {
  connectionId: string;
  method: (typeof METHODS)[number];
  path: string;
  query?: Record<string, string>;
  body?: string;
  contentType?: string;
}

/** The arguments, checked for what the schema says; the path's climbing the proxy route checks itself. */
function checked(args: Record<string, unknown>): ProxyArguments {
  const known = Object.keys(PROXY_TOOL.inputSchema.properties);
  const unknown = Object.keys(args).find((name) => !known.includes(name));
  if (unknown !== undefined) throw bad(`${unknown}: not an argument of call_connection_api`);
  const { connectionId, method, path, query, body, contentType } = args;
  if (typeof connectionId !== 'string' || connectionId === '') throw bad('connectionId: required');
  if (typeof method !== 'string' || !(METHODS as readonly string[]).includes(method)) {
    throw bad(`method: one of ${METHODS.join(', ')}`);
  }
  if (typeof path !== 'string') throw bad('path: required');
  // The request URL is parsed before routing: a "?" or "#" would move the rest of the path out of it.
  if (/[?#]/.test(path)) throw bad('path: no "?" or "#" (put the query in `query`)');
  // The proxy route's own check, here too: the request URL is resolved before it reaches the route,
  // which would take a climbing path out of the proxy to another route instead of refusing it.
  try {
    checkProxyPath(path);
  } catch (error) {
    if (error instanceof HttpProblem) throw bad(error.detail ?? error.message);
    throw error;
  }
  if (/^(\.|%2e){1,2}$/i.test(connectionId)) throw bad('connectionId: not an ID');
  if (query !== undefined) {
    if (typeof query !== 'object' || query === null || Array.isArray(query)) throw bad('query: an object');
    if (Object.values(query).some((v) => typeof v !== 'string')) throw bad('query: string values only');
  }
  if (body !== undefined && typeof body !== 'string') throw bad('body: a string');
  if (body !== undefined && Buffer.byteLength(body) > MAX_PROXY_REQUEST_BYTES)
    throw bad('body: at most 1 MiB');
  if (contentType !== undefined && typeof contentType !== 'string') throw bad('contentType: a string');
  return args as unknown as ProxyArguments;
}

/** The provider's answer as text, cut at 1 MiB (on a character boundary). */
function asText(text: string): { body: string; truncated: boolean } {
  const bytes = Buffer.from(text);
  if (bytes.length <= MAX_TOOL_ANSWER_BYTES) return { body: text, truncated: false };
  return {
    body: bytes
      .subarray(0, MAX_TOOL_ANSWER_BYTES)
      .toString('utf8')
      .replace(/\uFFFD$/, ''),
    truncated: true,
  };
}

/**
 * call_connection_api: a request into the credential proxy's own route (docs/api/oauth.md), so the
 * path checks, the gate, the per-connection limits and the token handling are the route's. The
 * path goes on as the client wrote it, each segment still percent-encoded as given.
 */
export async function runProxyTool(
  app: FastifyInstance,
  args: Record<string, unknown>,
  caller: Caller,
): Promise<CallToolResult> {
  const call = checked(args);
  const path = call.path.replace(/^\/+/, '');
  const url = PROXY_PATH.replace(':id', encodeURIComponent(call.connectionId)).replace('*', path);
  const headers: Record<string, string> = { authorization: caller.authorization, ...viaMcpHeader() };
  if (call.body !== undefined) headers['content-type'] = call.contentType ?? 'application/json';
  const answer = await callRoute(app, {
    method: call.method,
    url,
    query: call.query ?? {},
    headers,
    remoteAddress: caller.remoteAddress,
    ...(call.body !== undefined ? { payload: call.body } : {}),
  });
  // Only a provider's answer passed back carries this policy; anything else is hubgate's own refusal.
  if (answer.headers['content-security-policy'] !== PROXIED_ANSWER_CSP) return failureOf(answer);
  const structured = {
    status: answer.status,
    contentType: answer.contentType ?? null,
    ...asText(answer.text),
  };
  return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }] };
}
