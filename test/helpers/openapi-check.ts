import { AssertionError } from 'node:assert';
import addFormatsModule from 'ajv-formats';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Header {
  $ref?: string;
  required?: boolean;
}
interface Operation {
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, Header> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { headers?: Record<string, Header> };
}

export interface ObservedResponse {
  method: string;
  /** The path as requested, query string included. */
  path: string;
  status: number;
  headers: Headers;
  text: string;
  body: unknown;
}

/** Checks one response against the document; throws an AssertionError naming what does not match. */
export type ResponseCheck = (response: ObservedResponse) => void;

const COMPONENTS_ID = 'openapi-components.json';

/** Most specific first: a literal segment beats a parameter (`api-keys/allowed-scopes` over `api-keys/{id}`). */
function templatesOf(document: Document): Array<{ template: string; pattern: RegExp }> {
  return Object.keys(document.paths)
    .map((template) => ({
      template,
      pattern: new RegExp(
        `^${template
          .split(/\{[^}]+\}/)
          .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('[^/]+')}$`
          // A trailing {path} stands for a wildcard (the credential proxy, src/access/openapi.ts): slashes too.
          .replace(/\[\^\/\]\+\$$/, template.endsWith('/{path}') ? '.+$' : '[^/]+$'),
      ),
      params: (template.match(/\{/g) ?? []).length,
    }))
    .sort((a, b) => a.params - b.params);
}

function build(document: Document): ResponseCheck {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateSchema: false }));
  // Only the components are a shared schema: compiling against the whole document costs far more.
  ajv.addSchema({ components: document.components }, COMPONENTS_ID);
  const templates = templatesOf(document);
  const validators = new Map<string, ValidateFunction>();

  return (response) => {
    const method = response.method.toLowerCase();
    const path = response.path.split('?')[0] ?? '';
    const match = templates.find((t) => t.pattern.test(path) && document.paths[t.template]?.[method]);
    // Routes the document does not describe (the docs UI, unknown paths, HEAD) have nothing to match.
    if (!match) return;
    const operation = document.paths[match.template]![method]!;
    const where = `${response.method} ${match.template} → ${response.status}`;
    const fail = (message: string) => {
      throw new AssertionError({
        message: `response does not match the OpenAPI document: ${where}: ${message}\n${response.text.slice(0, 2000)}`,
      });
    };
    const documented = operation.responses[String(response.status)] ?? operation.responses.default;
    const media = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
    // A pass-through (the credential proxy): an answer that is not one of hubgate's own is the provider's, as it came.
    const passedThrough = operation.responses.default?.content?.['*/*'] !== undefined;
    if (passedThrough && !(documented?.content && media in documented.content)) return;
    if (!documented) return fail(`status not documented (${Object.keys(operation.responses).join(', ')})`);
    for (const [name, declared] of Object.entries(documented.headers ?? {})) {
      const header = declared.$ref
        ? document.components?.headers?.[declared.$ref.replace('#/components/headers/', '')]
        : declared;
      if (header?.required && !response.headers.has(name)) fail(`header ${name} missing`);
    }
    if (!documented.content) {
      if (response.text !== '') fail('a body where the document says none');
      return;
    }
    if (!(media in documented.content)) {
      return fail(`content type ${media || '(none)'} not in ${Object.keys(documented.content).join(', ')}`);
    }
    if (!media.endsWith('json')) return;
    const schema = (documented.content[media] as { schema?: unknown }).schema;
    // Keyed by the schema itself: every problem response ($ref Problem) shares one compiled check.
    const key = JSON.stringify(schema);
    let validate = validators.get(key);
    if (!validate) {
      validate = ajv.compile(JSON.parse(key.replaceAll('"#/components/', `"${COMPONENTS_ID}#/components/`)));
      validators.set(key, validate);
    }
    if (!validate(response.body)) fail(ajv.errorsText(validate.errors, { separator: '\n  ' }));
  };
}

// Compiled once per distinct document: every harness of a test file shares it.
const checks = new Map<string, ResponseCheck>();

export function responseCheck(document: unknown): ResponseCheck {
  const text = JSON.stringify(document);
  let check = checks.get(text);
  if (!check) {
    check = build(JSON.parse(text) as Document);
    checks.set(text, check);
  }
  return check;
}

/**
 * What the document says of a request body: `undefined` when it validates against the operation's
 * `requestBody` schema, else the validator's findings. Throws when the document has no such operation.
 */
export type RequestCheck = (method: string, path: string, body: unknown) => string | undefined;

const requestChecks = new Map<string, RequestCheck>();

export function requestCheck(document: unknown): RequestCheck {
  const text = JSON.stringify(document);
  let check = requestChecks.get(text);
  if (!check) {
    const parsed = JSON.parse(text) as Document;
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateSchema: false }));
    ajv.addSchema({ components: parsed.components }, COMPONENTS_ID);
    const templates = templatesOf(parsed);
    const validators = new Map<string, ValidateFunction>();
    check = (method, path, body) => {
      const lower = method.toLowerCase();
      const bare = path.split('?')[0] ?? '';
      const match = templates.find((t) => t.pattern.test(bare) && parsed.paths[t.template]?.[lower]);
      if (!match) throw new AssertionError({ message: `the document has no operation ${method} ${bare}` });
      const schema = parsed.paths[match.template]![lower]!.requestBody?.content?.['application/json']?.schema;
      if (schema === undefined)
        throw new AssertionError({ message: `${method} ${match.template} takes no body` });
      const key = JSON.stringify(schema);
      let validate = validators.get(key);
      if (!validate) {
        validate = ajv.compile(
          JSON.parse(key.replaceAll('"#/components/', `"${COMPONENTS_ID}#/components/`)),
        );
        validators.set(key, validate);
      }
      return validate(body) ? undefined : ajv.errorsText(validate.errors, { separator: '; ' });
    };
    requestChecks.set(text, check);
  }
  return check;
}
