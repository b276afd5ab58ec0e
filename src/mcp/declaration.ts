/**
 * What an API route declares to stand for an MCP tool (docs/api/mcp.md, decision 0086): the tool is
 * the route. Its input is the route's params, query and body; its output the route's 2xx answer;
 * whether a key may see or call it, the route's access rule. mcp/tools.ts reads these declarations
 * from the route table, so that no tool has a second definition to drift from its route.
 */
export interface McpToolDeclaration {
  /** The tool's name, e.g. `list_connections`. */
  tool: string;
  /** What the tool does, for the agent choosing one (the route's summary when left out). */
  description?: string;
  /** Whether the tool changes nothing, may undo something, and may be called again to no new effect. */
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint: boolean };
  /** A path parameter's name in the tool's arguments when it differs (`id` → `connectionId`). */
  params?: Readonly<Record<string, string>>;
  /** Arguments sent as request headers, name → header (`idempotencyKey` → `idempotency-key`). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Several routes make one tool when each names its `part`: the tool calls each and answers
   * `{ [part]: answer }` (hub_overview: the overview and the credential readiness).
   */
  part?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The MCP tool this route stands for, if any (src/mcp/declaration.ts). */
    mcp?: McpToolDeclaration;
  }
}
