import { STATUS_CODES } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { PROBLEMS, statusesOf, type ProblemCode } from '../http/problem.js';
import { ProblemSchema } from '../http/schemas.js';
import { RFC3339_PATTERN } from '../http/time.js';
import { VERSION } from '../version.js';
import type { AccessRule } from './rules.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the document says about a route beyond its schema and access rule. */
    openapi?: {
      /**
       * Errors its domain code throws besides those every route of its kind can answer (409 …): a code
       * at its own status, or `[code, status]` for another status PROBLEMS allows it (`quota_exceeded` 409).
       */
      problems?: readonly (ProblemCode | readonly [ProblemCode, number])[];
      /** The body as checked at run time, when the route schema can only check its envelope. */
      body?: TSchema;
    };
  }
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const methodsOf = (route: RouteOptions): string[] =>
  (Array.isArray(route.method) ? route.method : [route.method]).map(String);
const carriesBody = (route: RouteOptions): boolean => methodsOf(route).some((m) => BODY_METHODS.has(m));

/**
 * The error codes a route can answer, derived from what it declares: its access rule (who may be
 * refused, and how), its schema (what can fail validation or lookup), its methods (what carries a
 * body), and the problems its domain declares. Answers every route can give (400 for a malformed
 * URL or an oversized or Host-less head, 408 for a request that did not arrive in time, 500, 503)
 * are in every operation.
 */
function problemsOf(route: RouteOptions): Array<readonly [ProblemCode, number]> {
  const rule = route.config?.access as AccessRule | undefined;
  const schema = (route.schema ?? {}) as FastifySchema;
  const unsafe = carriesBody(route);
  const codes = new Set<ProblemCode>(['validation_failed', 'request_timeout', 'internal', 'unavailable']);
  const add = (...more: ProblemCode[]) => more.forEach((code) => codes.add(code));

  if (rule && !(rule.class === 'public' && rule.unlimited)) add('rate_limited');
  if (rule && rule.class !== 'public') {
    add('unauthenticated');
    if (rule.class === 'platform') add('platform_key_required');
    else if (rule.class === 'portal') add('route_not_allowed');
    else {
      // A platform key is refused everywhere but platform routes; a session passes CSRF first.
      add('route_not_allowed');
      // A keys-only route refuses a session before its CSRF token is looked at.
      if (unsafe && !(rule.class === 'tenant' && rule.keysOnly)) add('csrf_failed');
    }
    if (rule.class === 'key_management') add('interactive_session_required', 'role_forbidden');
    if (rule.class === 'session' && rule.roles) add('role_forbidden');
    if (rule.class === 'tenant') {
      // A portal token reaches the entitlement check too (docs/api/portal.md).
      add('entitlement_missing');
      if (!rule.keysOnly) add('role_forbidden');
      if (rule.automation) add('insufficient_scope');
    }
  }
  if (unsafe) add('invalid_json', 'payload_too_large', 'unsupported_media_type');
  if (schema.params) add('not_found');
  const declared = route.config?.openapi?.problems ?? [];
  add(...declared.filter((p): p is ProblemCode => typeof p === 'string'));
  const others = declared.filter((p): p is readonly [ProblemCode, number] => typeof p !== 'string');
  return [...[...codes].map((code) => [code, PROBLEMS[code].status] as const), ...others];
}

/** A route a portal session's token may call (its rule names a portal access) lists it as a scheme too. */
const portalToo = (rule: AccessRule): Array<Record<string, string[]>> =>
  'portal' in rule && rule.portal ? [{ portalToken: [] }] : [];

function securityOf(rule: AccessRule | undefined, unsafe: boolean): Array<Record<string, string[]>> {
  // The cookie alone does not pass an unsafe method: the session's CSRF token goes with it.
  const session: Record<string, string[]> = unsafe ? { session: [], csrf: [] } : { session: [] };
  switch (rule?.class) {
    case undefined:
    case 'public':
      return [];
    case 'platform':
      return [{ platformKey: [] }];
    case 'portal':
      return [{ portalToken: [] }];
    case 'tenant':
      if (rule.keysOnly) return [{ tenantKey: [] }];
      return [...(rule.automation ? [{ tenantKey: [] }] : []), session, ...portalToo(rule)];
    default:
      return [session, ...(rule ? portalToo(rule) : [])];
  }
}

const RESPONSE_HEADERS: Partial<Record<number, Record<string, { description: string; type: string }>>> = {
  401: { 'www-authenticate': { description: 'Bearer, on API routes', type: 'string' } },
  429: {
    'retry-after': { description: 'seconds until a request may succeed', type: 'integer' },
    'ratelimit-policy': {
      description:
        'the limits that applied: "<policy>";q=<quota>;w=<window seconds> (draft-ietf-httpapi-ratelimit-headers)',
      type: 'string',
    },
    ratelimit: {
      description: 'where the request stands: "<policy>";r=<remaining>;t=<seconds to reset>',
      type: 'string',
    },
  },
  503: { 'retry-after': { description: 'seconds before trying again', type: 'integer' } },
};

/** One response per status, listing its codes, each a problem details body. */
function problemResponses(codes: ReadonlyArray<readonly [ProblemCode, number]>): Record<string, unknown> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const [code, status] of codes) {
    if (!statusesOf(code).includes(status)) throw new Error(`${code} does not answer with ${status}`);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      status,
      {
        description: `${STATUS_CODES[status]}: ${list.map((c) => `\`${c}\``).join(', ')}`,
        content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
        ...(RESPONSE_HEADERS[status] ? { headers: RESPONSE_HEADERS[status] } : {}),
      },
    ]),
  );
}

/** `POST /api/v1/company/api-keys/:id/rotate` → `postCompanyApiKeysByIdRotate`: unique per route. */
function operationIdOf(method: string, url: string): string {
  const words = url
    .replace(/^\/api\/v1\//, '/')
    .split(/[/_-]/)
    .filter((word) => word !== '')
    .map((word) => (word.startsWith(':') ? `by-${word.slice(1)}` : word))
    .flatMap((word) => word.split('-'));
  return method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
}

/** The route's schema as the document shows it: security, every error, and the body checked at run time. */
/**
 * A route ending in a `*` wildcard (the credential proxy) is documented with a `{path}` parameter
 * instead: OpenAPI has no wildcard, and a parameter named `*` is not one a client can fill in. The
 * parameter's description says it may hold slashes.
 */
function wildcardAsPath(url: string, schema: FastifySchema): { url: string; schema: FastifySchema } {
  if (!url.endsWith('/*')) return { url, schema };
  const params = (schema.params ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
  const { '*': rest, ...named } = params.properties ?? {};
  const required = (params.required ?? []).filter((name) => name !== '*');
  return {
    url: `${url.slice(0, -1)}:path`,
    schema: {
      ...schema,
      params: { ...params, properties: { ...named, path: rest }, required: [...required, 'path'] },
    },
  };
}

function documentedSchema(route: RouteOptions): FastifySchema {
  const schema = (route.schema ?? {}) as FastifySchema & { response?: Record<string, unknown> };
  const body = route.config?.openapi?.body;
  return {
    operationId: operationIdOf(methodsOf(route)[0] ?? 'get', route.url),
    ...schema,
    ...(body ? { body } : {}),
    security: securityOf(route.config?.access, carriesBody(route)),
    response: { ...problemResponses(problemsOf(route)), ...schema.response },
  } as FastifySchema;
}

type Json = Record<string, unknown>;

/**
 * OpenAPI lets a discriminator map each value to a named schema; validation (ajv) refuses a
 * `mapping`, so it is added here, read from the `const` of each named branch.
 */
function mapDiscriminators(node: unknown, schemas: Record<string, Json>): void {
  if (Array.isArray(node)) {
    node.forEach((item) => mapDiscriminators(item, schemas));
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const object = node as Json;
  const discriminator = object.discriminator as { propertyName: string; mapping?: object } | undefined;
  if (discriminator && Array.isArray(object.oneOf) && !discriminator.mapping) {
    const mapping: Record<string, string> = {};
    for (const branch of object.oneOf as Json[]) {
      const ref = typeof branch.$ref === 'string' ? branch.$ref : undefined;
      const named = ref ? schemas[ref.replace('#/components/schemas/', '')] : undefined;
      const property = (named?.properties as Record<string, Json> | undefined)?.[discriminator.propertyName];
      const value = (property?.enum as unknown[] | undefined)?.[0] ?? property?.const;
      if (!ref || typeof value !== 'string') {
        throw new Error(
          `a discriminated oneOf branch is not a named schema with a constant ${discriminator.propertyName}`,
        );
      }
      mapping[value] = ref;
    }
    discriminator.mapping = mapping;
  }
  Object.values(object).forEach((value) => mapDiscriminators(value, schemas));
}

/**
 * Every `date-time` gets the pattern of the times the service reads (http/time.ts) beside its format:
 * the format alone, as validators read it, takes a leap second (`23:59:60`) and a space for the `T`,
 * which the service refuses, and the document must not call valid a request the service refuses.
 */
function patternDateTimes(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(patternDateTimes);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const object = node as Json;
  if (object.format === 'date-time' && object.pattern === undefined) object.pattern = RFC3339_PATTERN;
  Object.values(object).forEach(patternDateTimes);
}

/**
 * The document's tags, each once, in the order of the first route that has it (the order /docs
 * shows them in; listing only some would move those to the top), with the description a domain
 * gives for it, if any.
 */
function listTags(document: Json, descriptions: Readonly<Record<string, string>>): void {
  const names = new Set<string>();
  for (const operations of Object.values(document.paths as Record<string, Record<string, Json>>))
    for (const operation of Object.values(operations))
      for (const tag of (operation.tags as string[] | undefined) ?? []) names.add(tag);
  document.tags = [...names].map((name) =>
    descriptions[name] === undefined ? { name } : { name, description: descriptions[name] },
  );
}

function completeDocument(document: Json, tagDescriptions: Readonly<Record<string, string>>): Json {
  listTags(document, tagDescriptions);
  const components = document.components as { schemas?: Record<string, Json>; headers?: Json };
  mapDiscriminators(document, components.schemas ?? {});
  patternDateTimes(document);
  components.headers = {
    RequestId: {
      description: 'the request’s ID, also in the log line and any problem details (`requestId`)',
      required: true,
      schema: { type: 'string' },
    },
  };
  for (const operations of Object.values(document.paths as Record<string, Record<string, Json>>)) {
    for (const operation of Object.values(operations)) {
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        // Success answers read better with their reason phrase than with the generator's placeholder.
        if (response.description === 'Default Response')
          response.description = STATUS_CODES[status] ?? status;
        response.headers = {
          'X-Request-Id': { $ref: '#/components/headers/RequestId' },
          ...(response.headers as Json | undefined),
        };
      }
    }
  }
  return document;
}

/**
 * OpenAPI 3.1 generated from the same route schemas that validate requests, completed from the
 * access rules (security, 401/403/429) and what each route declares; served as JSON at
 * /api/v1/openapi.json and as a browsable page at /docs. Register before any route.
 * `tagDescriptions`: prose for /docs above a tag's routes (Markdown), by tag.
 */
export async function registerOpenApi(
  app: FastifyInstance,
  publicUrl: string,
  tagDescriptions: Readonly<Record<string, string>> = {},
): Promise<void> {
  app.addSchema(ProblemSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'hubgate',
        version: VERSION,
        description:
          'Integration hub and automation access. Errors are RFC 9457 problem details (application/problem+json) with a stable `code`.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          platformKey: { type: 'http', scheme: 'bearer', description: 'Platform operator key, `plt_…`' },
          tenantKey: { type: 'http', scheme: 'bearer', description: 'Tenant automation key, `tnt_…`' },
          portalToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'A portal session’s token, `ptl_…` (docs/api/portal.md)',
          },
          session: { type: 'apiKey', in: 'cookie', name: 'svc_access', description: 'Browser session' },
          csrf: {
            type: 'apiKey',
            in: 'header',
            name: 'X-CSRF-Token',
            description: 'The session’s CSRF token (`csrfToken` of the sign-in answer), on unsafe methods',
          },
        },
      },
    },
    hideUntagged: false,
    // Schemas with an $id are components under that name (Problem, the per-connector bodies …).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    transform: ({ route, url }) => wildcardAsPath(url, documentedSchema(route)),
    transformObject: (generated) =>
      'openapiObject' in generated
        ? completeDocument(generated.openapiObject as Json, tagDescriptions)
        : generated.swaggerObject,
  });
  // Generated once at start-up: a declaration the document cannot express fails there, not on a request.
  app.addHook('onReady', async () => {
    app.swagger();
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get(
    '/api/v1/openapi.json',
    { config: { access: { class: 'public', unlimited: true } }, schema: { hide: true } },
    async () => app.swagger(),
  );
}
