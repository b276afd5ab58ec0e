import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { decide } from '../access/decide.js';
import type { DeclaredRoute } from '../access/gate.js';
import type { Principal } from '../access/principal.js';
import { tenantKeyRule } from '../access/rules.js';
import { HttpProblem } from '../http/problem.js';
import type { RoutePlugin } from '../services.js';
import { VERSION } from '../version.js';
import { runRouteTool, type Caller } from './call.js';
import { PROXY_TOOL, proxyRouteOf, runProxyTool } from './proxy-tool.js';
import { routeTools, type RouteTool } from './tools.js';

export const MCP_PATH = '/api/v1/mcp';

// Either module's READER opens the server itself; each tool is then its own route's rule.
const mcpRule = tenantKeyRule([
  { module: 'integrations', level: 'READER' },
  { module: 'integration_hub', level: 'READER' },
]);

const describe = (
  tool: Pick<RouteTool, 'name' | 'description' | 'inputSchema' | 'outputSchema' | 'annotations'>,
): Tool => ({
  name: tool.name,
  description: tool.description,
  inputSchema: tool.inputSchema,
  outputSchema: tool.outputSchema,
  annotations: tool.annotations,
});

/** The tools of the route table, and the routes whose rules decide who sees each. */
interface Catalog {
  byName: ReadonlyMap<string, RouteTool>;
  proxy: DeclaredRoute | undefined;
  /** Each tool as tools/list shows it, in order, with the routes the key must be allowed. */
  listing: ReadonlyArray<{ tool: Tool; routes: readonly DeclaredRoute[] }>;
  /**
   * The SDK server's JSON Schema validator, one for every request's server: left out, each `Server`
   * builds its own Ajv instance (a sixth of a tool call's CPU, issue 41's profile). The server uses
   * it only to check a client's elicitation answer, which this server never asks for.
   */
  validator: AjvJsonSchemaValidator;
}

/** The catalog of a route table: built once, every request reads it. */
function catalogFrom(declared: readonly DeclaredRoute[]): Catalog {
  const tools = routeTools(declared);
  const proxy = proxyRouteOf(declared);
  const listing = tools.map((tool) => ({ tool: describe(tool), routes: tool.routes.map((r) => r.route) }));
  if (proxy) listing.push({ tool: describe(PROXY_TOOL), routes: [proxy] });
  return {
    byName: new Map(tools.map((tool) => [tool.name, tool])),
    proxy,
    listing,
    validator: new AjvJsonSchemaValidator(),
  };
}

/** Whether the key may call every route of the tool now: the gate's own decision (access/decide.ts). */
const mayCall = (routes: readonly DeclaredRoute[], principal: Principal): boolean =>
  routes.every((route) => decide(route.access, principal).allowed);

/** An MCP server for one request (stateless: nothing is kept between requests). */
function serverFor(app: FastifyInstance, catalog: Catalog, principal: Principal, caller: Caller): Server {
  const server = new Server(
    { name: 'hubgate', version: VERSION },
    { capabilities: { tools: {} }, jsonSchemaValidator: catalog.validator },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: catalog.listing.filter(({ routes }) => mayCall(routes, principal)).map(({ tool }) => tool),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    // A tool the key may not call is still called: its route refuses it as the API would.
    if (name === PROXY_TOOL.name && catalog.proxy) return runProxyTool(app, args, caller);
    const tool = catalog.byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    return runRouteTool(app, tool, args, caller);
  });
  return server;
}

/**
 * The request headers the transport reads (the SDK's server/webStandardStreamableHttp.js: the media types,
 * the session and the protocol version). The others, the credential among them, stay out of the
 * SDK: its handlers here never read them, and copying each request's every header was measurable.
 */
const TRANSPORT_HEADERS = ['content-type', 'mcp-session-id', 'mcp-protocol-version'] as const;

/** The request's headers for the transport, which reads a Web API Request. */
function headersOf(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  // Every answer is JSON (no event stream is ever opened), so a client that accepts only JSON is
  // answered as the transport answers one that accepts both, rather than refused.
  headers.set('accept', 'application/json, text/event-stream');
  return headers;
}

/** One JSON-RPC message (or notification) through the SDK's transport, answered as JSON. */
async function answer(app: FastifyInstance, catalog: Catalog, request: FastifyRequest, reply: FastifyReply) {
  const principal = request.principal;
  const authorization = request.headers.authorization;
  if (principal?.kind !== 'tenant_key' || authorization === undefined) {
    throw new Error('gate let a caller without a tenant key through');
  }
  const caller: Caller = { authorization, remoteAddress: request.ip };
  const server = serverFor(app, catalog, principal, caller);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  try {
    const response = await transport.handleRequest(
      new Request(`http://hubgate${MCP_PATH}`, { method: 'POST', headers: headersOf(request) }),
      { parsedBody: request.body },
    );
    // The answer's bytes as the transport encoded them: read as text, they would be decoded here
    // only to be encoded again for the socket.
    const body = Buffer.from(await response.arrayBuffer());
    if (response.status >= 400) throw transportRefusal(body.toString('utf8'));
    reply.code(response.status);
    const type = response.headers.get('content-type');
    if (type) reply.header('content-type', type);
    return reply.send(body);
  } finally {
    await server.close();
  }
}

/**
 * What the transport refuses before any JSON-RPC method runs (a body that is no JSON-RPC message):
 * problem details, as every refusal of the API, with the transport's own words.
 */
function transportRefusal(text: string): HttpProblem {
  let message = 'not a JSON-RPC message';
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } };
    message = parsed.error?.message ?? message;
  } catch {
    // The transport's answer was not JSON: the default words stand.
  }
  return new HttpProblem('validation_failed', `body: ${message}`);
}

const MCP_BODY_LIMIT = 3 * 1024 * 1024;

/**
 * The tenant's MCP server (docs/api/mcp.md, decision 0086): the Streamable HTTP transport of the
 * official SDK, stateless, answering JSON. Its tools are the routes that declare one (`config.mcp`),
 * each call a request into that route with the caller's own key.
 */
export const mcpRoutes: RoutePlugin = async (app, services) => {
  const metadataUrl = new URL(
    '/.well-known/oauth-protected-resource/api/v1/mcp',
    services.ctx.config.publicUrl,
  );
  let catalog: Catalog | undefined;
  // Read once every route is declared: the first request comes after the app is ready.
  const catalogOf = (): Catalog => (catalog ??= catalogFrom(app.declaredRoutes));
  app.addHook('onReady', async () => {
    catalogOf();
  });
  // MCP's authorization spec: a 401 names the protected resource's metadata (RFC 9728).
  app.addHook('onSend', async (_request, reply, payload) => {
    if (reply.statusCode === 401) {
      reply.header('www-authenticate', `Bearer resource_metadata="${metadataUrl.href}"`);
    }
    return payload;
  });
  const tags = ['mcp'];
  const jsonRpc = {
    description: 'A JSON-RPC answer (MCP Streamable HTTP, protocol 2025-06-18)',
    content: { 'application/json': { schema: {} } },
  };
  app.post(
    MCP_PATH,
    {
      bodyLimit: MCP_BODY_LIMIT,
      config: mcpRule,
      schema: {
        tags,
        summary: 'The MCP server: tools over connections and deliveries, with the reach of the key',
        description:
          'MCP Streamable HTTP (protocol 2025-06-18), stateless, JSON answers. `tools/list` lists the ' +
          "tools the key may call now; each tool call is the API route it stands for, with the key's own " +
          'access, validation, rate limit and audit. Tenant keys (`tnt_`) only.',
        response: { 200: jsonRpc, 202: Type.Null({ description: 'A notification taken: no body' }) },
      },
    },
    async (request, reply) => answer(app, catalogOf(), request, reply),
  );
  app.get(
    MCP_PATH,
    {
      config: { ...mcpRule, openapi: { problems: ['method_not_allowed'] } },
      schema: { tags, summary: 'No event stream: always 405 (MCP Streamable HTTP lets a server answer so)' },
    },
    () => {
      throw new HttpProblem('method_not_allowed', 'This MCP server answers POST only.', {
        headers: { allow: 'POST' },
      });
    },
  );
};
