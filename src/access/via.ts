import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/**
 * How a request that hubgate makes into its own routes for an MCP tool call (mcp/call.ts) is told
 * apart from one off the network: a header whose value is random per process. A network client
 * cannot forge it without the value, which never leaves the process (no answer or log holds request
 * headers), and the header is taken off the request as soon as it is read.
 */
export const VIA_HEADER = 'x-hubgate-via';
const VIA_MCP = `mcp.${randomBytes(24).toString('base64url')}`;

/** The header an in-process MCP tool call sends with its request. */
export const viaMcpHeader = (): Record<string, string> => ({ [VIA_HEADER]: VIA_MCP });

const marked = new WeakSet<FastifyRequest>();

/**
 * Reads the mark once, at the request's start, and removes the header so that no later reader (a
 * log line, a handler passing headers on) sees it. A wrong value is simply no mark.
 */
export function takeViaMark(request: FastifyRequest): void {
  const value = request.headers[VIA_HEADER];
  if (value === undefined) return;
  delete request.headers[VIA_HEADER];
  if (value === VIA_MCP) marked.add(request);
}

/** `'mcp'` for a request an MCP tool call made, else undefined. */
export const viaOf = (request: FastifyRequest): 'mcp' | undefined =>
  marked.has(request) ? 'mcp' : undefined;
