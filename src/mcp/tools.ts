import type { DeclaredRoute } from '../access/gate.js';
import type { McpToolDeclaration } from './declaration.js';

/** A JSON Schema as plain data (no TypeBox markers), as MCP sends it. */
export type JsonSchema = Record<string, unknown>;

/** Where each of a tool's arguments goes in its route's request. */
export type ArgumentPlace =
  | { in: 'params'; name: string }
  | { in: 'query'; name: string }
  | { in: 'body'; name: string }
  | { in: 'header'; name: string };

/** One route a tool calls, and where its arguments go. */
export interface ToolRoute {
  route: DeclaredRoute;
  declaration: McpToolDeclaration;
  places: ReadonlyMap<string, ArgumentPlace>;
  /** True when the route takes a body (sent as `{}` when no argument of it is given and it is required). */
  body: 'none' | 'optional' | 'required';
}

/** A tool as tools/list shows it, with the route (or routes, one per part) it stands for. */
export interface RouteTool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: McpToolDeclaration['annotations'];
  routes: readonly ToolRoute[];
}

interface ObjectSchema {
  properties?: Record<string, unknown>;
  required?: readonly string[];
  '~optional'?: boolean;
}

/** A TypeBox schema as plain JSON Schema: its markers are not enumerable, so JSON drops them. */
const plain = (schema: unknown): JsonSchema => JSON.parse(JSON.stringify(schema)) as JsonSchema;

const objectOf = (schema: unknown, what: string): ObjectSchema => {
  const object = schema as ObjectSchema | undefined;
  if (object !== undefined && object.properties === undefined) {
    throw new Error(`an MCP tool's ${what} must be an object schema with properties`);
  }
  return object ?? {};
};

interface RouteSchema {
  params?: unknown;
  querystring?: unknown;
  body?: unknown;
  headers?: unknown;
  response?: Record<string, unknown>;
}

/** The route's one 2xx answer schema: a tool's output. */
function successSchema(route: DeclaredRoute): JsonSchema {
  const responses = (route.schema as RouteSchema | undefined)?.response ?? {};
  const status = Object.keys(responses).find((code) => /^2\d\d$/.test(code));
  const schema = status === undefined ? undefined : responses[status];
  if (!schema) throw new Error(`${route.method} ${route.url} is an MCP tool without a 2xx answer schema`);
  return plain(schema);
}

/** The route's params, querystring, body and declared headers as one object of arguments. */
function argumentsOf(route: DeclaredRoute, declaration: McpToolDeclaration) {
  const schema = (route.schema ?? {}) as RouteSchema;
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const places = new Map<string, ArgumentPlace>();
  const add = (argument: string, place: ArgumentPlace, property: unknown, isRequired: boolean) => {
    if (places.has(argument)) {
      throw new Error(`${route.method} ${route.url}: the MCP argument ${argument} is named twice`);
    }
    places.set(argument, place);
    properties[argument] = plain(property);
    if (isRequired) required.push(argument);
  };
  const params = objectOf(schema.params, 'params');
  for (const [name, property] of Object.entries(params.properties ?? {})) {
    add(declaration.params?.[name] ?? name, { in: 'params', name }, property, true);
  }
  const query = objectOf(schema.querystring, 'querystring');
  for (const [name, property] of Object.entries(query.properties ?? {})) {
    add(name, { in: 'query', name }, property, query.required?.includes(name) === true);
  }
  const body = objectOf(schema.body, 'body');
  const bodyOptional = body['~optional'] === true;
  for (const [name, property] of Object.entries(body.properties ?? {})) {
    add(name, { in: 'body', name }, property, !bodyOptional && body.required?.includes(name) === true);
  }
  const headers = objectOf(schema.headers, 'headers');
  for (const [argument, header] of Object.entries(declaration.headers ?? {})) {
    const property = headers.properties?.[header];
    if (property === undefined) throw new Error(`${route.url} declares no header ${header}`);
    add(argument, { in: 'header', name: header }, property, headers.required?.includes(header) === true);
  }
  const bodyKind: ToolRoute['body'] =
    schema.body === undefined ? 'none' : bodyOptional ? 'optional' : 'required';
  return { properties, required, places, body: bodyKind };
}

const objectSchema = (properties: Record<string, JsonSchema>, required: readonly string[]) => ({
  type: 'object' as const,
  properties,
  ...(required.length > 0 ? { required: [...required] } : {}),
  additionalProperties: false,
});

const summaryOf = (route: DeclaredRoute): string =>
  ((route.schema as { summary?: string } | undefined)?.summary ?? '').trim();

/** One tool from the route(s) declaring it: one route, or several each answering one part. */
function toolOf(name: string, routes: readonly DeclaredRoute[]): RouteTool {
  const declared = routes.map((route) => ({ route, declaration: route.config?.mcp as McpToolDeclaration }));
  const first = declared[0];
  if (!first) throw new Error(`MCP tool ${name} has no route`);
  const parts = declared.length > 1;
  if (parts && declared.some(({ declaration }) => declaration.part === undefined)) {
    throw new Error(`MCP tool ${name} is declared on several routes: each must name its part`);
  }
  const properties: Record<string, JsonSchema> = {};
  const required = new Set<string>();
  const outputs: Record<string, JsonSchema> = {};
  const toolRoutes = declared.map(({ route, declaration }) => {
    const args = argumentsOf(route, declaration);
    Object.assign(properties, args.properties);
    args.required.forEach((argument) => required.add(argument));
    if (declaration.part !== undefined) outputs[declaration.part] = successSchema(route);
    return { route, declaration, places: args.places, body: args.body };
  });
  const output = parts ? objectSchema(outputs, Object.keys(outputs)) : successSchema(first.route);
  if (output.type !== 'object') throw new Error(`MCP tool ${name}: its route answers no JSON object`);
  return {
    name,
    description: first.declaration.description ?? declared.map(({ route }) => summaryOf(route)).join('; '),
    inputSchema: objectSchema(properties, [...required]),
    outputSchema: output as JsonSchema & { type: 'object' },
    annotations: first.declaration.annotations,
    routes: toolRoutes,
  };
}

/**
 * Every tool the route table declares (`config.mcp`), in registration order. Read once the app is
 * ready: a route added later would be missed, and none is.
 */
export function routeTools(declared: readonly DeclaredRoute[]): RouteTool[] {
  const byName = new Map<string, DeclaredRoute[]>();
  for (const route of declared) {
    const declaration = route.config?.mcp;
    // Fastify adds a HEAD route for each GET, with the same config: the GET is the tool.
    if (!declaration || route.method === 'HEAD') continue;
    if (route.access.class !== 'tenant' || !route.access.automation) {
      throw new Error(`${route.method} ${route.url} is an MCP tool but not on the automation allowlist`);
    }
    byName.set(declaration.tool, [...(byName.get(declaration.tool) ?? []), route]);
  }
  return [...byName].map(([name, routes]) => toolOf(name, routes));
}
