import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Harness } from '../helpers/harness.js';

export const MCP_PATH = '/api/v1/mcp';

/** An MCP client as a desktop agent configures one: the server's URL and the key in a header. */
export async function connectAgent(
  h: Harness,
  token: string,
  seen: string[] = [],
): Promise<Client & { tool(name: string, args?: Record<string, unknown>): Promise<CallToolResult> }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${h.baseUrl}${MCP_PATH}`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(transport);
  return Object.assign(client, {
    /** Calls a tool and keeps the whole result (to search it for secrets afterwards). */
    async tool(name: string, args: Record<string, unknown> = {}) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      seen.push(JSON.stringify(result));
      return result;
    },
  });
}

/** The problem document a refused tool call holds in its text, as the API answered it. */
export function problemIn(result: CallToolResult): { status: number; code: string; detail: string | null } {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('a tool result without text');
  return JSON.parse(first.text) as { status: number; code: string; detail: string | null };
}
