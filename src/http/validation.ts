import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { type FieldError, HttpProblem } from './problem.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const BASE: Options = {
  // Unknown fields are an error (contract §3), never silently dropped.
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
  strict: false,
  // Connection bodies are a oneOf keyed by connectorKey: errors then speak of the chosen connector.
  discriminator: true,
};

/**
 * Two validators: bodies and paths are checked as sent (a number where a string belongs is a 400,
 * not coerced), while query strings, which are text by nature, are coerced to their declared types.
 */
export function registerValidation(app: FastifyInstance): void {
  // Per app: schemas with an $id may be compiled once per ajv instance only.
  const exact = addFormats(new Ajv({ ...BASE, coerceTypes: false }));
  const coercing = addFormats(new Ajv({ ...BASE, coerceTypes: 'array' }));
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) => {
    const ajv = httpPart === 'querystring' ? coercing : exact;
    return ajv.compile(schema as object);
  });
}

/** ajv's findings as the one 400 of contract §3, each naming the field (`url`, `scopes.0`, `query.limit`). */
export function validationProblem(issues: Partial<ErrorObject>[], context: string): HttpProblem {
  const errors: FieldError[] = issues.map((issue) => {
    const params = (issue.params ?? {}) as Record<string, unknown>;
    let path = (issue.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
    const extra = params.additionalProperty ?? params.missingProperty ?? params.tag;
    if (typeof extra === 'string') path = path ? `${path}.${extra}` : extra;
    const where = context === 'body' ? path : `${context}.${path}`;
    let message = issue.message ?? 'is invalid';
    if (typeof params.additionalProperty === 'string') message = 'is not a known field';
    else if (issue.keyword === 'discriminator' && params.error === 'mapping')
      message = 'is not a known value';
    else if (issue.keyword === 'enum' && Array.isArray(params.allowedValues))
      message = `must be one of ${params.allowedValues.map(String).join(', ')}`;
    return { path: where.replace(/\.$/, '') || context, message };
  });
  const first = errors[0];
  return new HttpProblem('validation_failed', first ? `${first.path}: ${first.message}` : undefined, {
    errors,
  });
}

/**
 * A body check for a schema chosen at run time (a connector's credential fields), with the same
 * validator and the same 400 as route schemas. Returns the value typed by the caller.
 */
const forBodies = addFormats(new Ajv({ ...BASE, coerceTypes: false }));

export function bodyValidator<T>(schema: object): (value: unknown) => T {
  const check = forBodies.compile(schema);
  return (value) => {
    if (!check(value)) throw validationProblem(check.errors ?? [], 'body');
    return value as T;
  };
}
