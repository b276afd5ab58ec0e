import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { viaMcpHeader } from '../access/via.js';
import type { RouteTool, ToolRoute } from './tools.js';

/** Who a tool call is made for: the MCP request's own credential and client address. */
export interface Caller {
  authorization: string;
  remoteAddress: string;
}

/** An answer of a route, as a tool reads it. */
export interface RouteAnswer {
  status: number;
  contentType: string | undefined;
  headers: Readonly<Record<string, unknown>>;
  text: string;
}

const badArguments = (message: string): McpError => new McpError(ErrorCode.InvalidParams, message);

/**
 * A path segment from an argument, percent-encoded. `.` and `..` are refused: the request URL is
 * parsed as a URL before routing, which would resolve them into another route's path.
 */
function segment(argument: string, value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number')
    throw badArguments(`${argument}: must be a string`);
  const text = String(value);
  if (/^(\.|%2e){1,2}$/i.test(text)) throw badArguments(`${argument}: not an ID`);
  return encodeURIComponent(text);
}

const queryValue = (value: unknown): string | string[] =>
  Array.isArray(value)
    ? value.map(String)
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);

/** The request a route takes for these arguments (already checked against the tool's input schema). */
export function requestOf(
  toolRoute: ToolRoute,
  args: Record<string, unknown>,
  caller: Caller,
): InjectOptions {
  const { route, places } = toolRoute;
  const query: Record<string, string | string[]> = {};
  const headers: Record<string, string> = { authorization: caller.authorization, ...viaMcpHeader() };
  const body: Record<string, unknown> = {};
  let url = route.url;
  for (const [argument, place] of places) {
    const value = args[argument];
    if (place.in === 'params') {
      url = url.replace(`:${place.name}`, segment(argument, value));
      continue;
    }
    if (value === undefined) continue;
    if (place.in === 'query') query[place.name] = queryValue(value);
    else if (place.in === 'body') body[place.name] = value;
    else headers[place.name] = String(value);
  }
  const sendBody =
    toolRoute.body === 'required' || (toolRoute.body === 'optional' && Object.keys(body).length > 0);
  if (sendBody) headers['content-type'] = 'application/json';
  return {
    method: route.method as InjectOptions['method'],
    url,
    query,
    headers,
    remoteAddress: caller.remoteAddress,
    ...(sendBody ? { payload: JSON.stringify(body) } : {}),
  };
}

/** Makes the request into the app: the route's own gate, validation, rate limit, audit and errors. */
export async function callRoute(app: FastifyInstance, request: InjectOptions): Promise<RouteAnswer> {
  const response = await app.inject(request);
  const contentType = response.headers['content-type'];
  return {
    status: response.statusCode,
    contentType: typeof contentType === 'string' ? contentType : undefined,
    headers: response.headers,
    text: response.body,
  };
}

interface Problem {
  code?: string;
  detail?: string | null;
  errors?: Array<{ path: string; message: string }>;
}

const problemOf = (answer: RouteAnswer): Problem => {
  try {
    return JSON.parse(answer.text) as Problem;
  } catch {
    return {};
  }
};

/**
 * An answer that is not a success: arguments the route's validation refused are a JSON-RPC error
 * (`-32602`, as MCP asks for bad arguments); any other refusal or error is a tool result marked
 * `isError`, holding the problem document as the API answered it.
 */
export function failureOf(answer: RouteAnswer): CallToolResult {
  const problem = problemOf(answer);
  if (answer.status === 400 && problem.code === 'validation_failed') {
    const findings = (problem.errors ?? []).map((e) => `${e.path}: ${e.message}`).join('; ');
    throw badArguments(findings || problem.detail || 'invalid arguments');
  }
  return { isError: true, content: [{ type: 'text', text: answer.text }] };
}

/** A result: the structured content, and as text the same JSON (the route's own, when one answered). */
const success = (structured: Record<string, unknown>, text = JSON.stringify(structured)): CallToolResult => ({
  structuredContent: structured,
  content: [{ type: 'text', text }],
});

/** Checks the arguments' names against the tool's input schema (their values the route checks). */
function checkNames(tool: RouteTool, args: Record<string, unknown>): void {
  const known = tool.inputSchema.properties as Record<string, unknown>;
  const unknown = Object.keys(args).find((name) => !(name in known));
  if (unknown !== undefined) throw badArguments(`${unknown}: not an argument of ${tool.name}`);
  const required = (tool.inputSchema.required as string[] | undefined) ?? [];
  const missing = required.find((name) => args[name] === undefined);
  if (missing !== undefined) throw badArguments(`${missing}: required`);
}

/** Runs a tool: its route (or each route of its parts, in order), for the caller. */
export async function runRouteTool(
  app: FastifyInstance,
  tool: RouteTool,
  args: Record<string, unknown>,
  caller: Caller,
): Promise<CallToolResult> {
  checkNames(tool, args);
  const parts: Record<string, unknown> = {};
  for (const toolRoute of tool.routes) {
    const answer = await callRoute(app, requestOf(toolRoute, args, caller));
    if (answer.status < 200 || answer.status >= 300) return failureOf(answer);
    const body = JSON.parse(answer.text) as Record<string, unknown>;
    // The route's text is this JSON already: serializing the parsed body again would only repeat it.
    if (tool.routes.length === 1) return success(body, answer.text);
    parts[toolRoute.declaration.part ?? ''] = body;
  }
  return success(parts);
}
