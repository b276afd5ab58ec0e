import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import { HttpProblem, type FieldError } from './problem.js';
import { dateTimeFormat } from './time.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormatsModuleTyped = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * ajv-formats' formats, with `date-time` read by the service's one RFC 3339 parser (http/time.ts):
 * theirs takes a leap second and a space for the `T`, which the service cannot represent.
 */
const addFormats = (ajv: Ajv): Ajv => addFormatsModuleTyped(ajv).addFormat('date-time', dateTimeFormat);

const BASE: Options = {
  // Unknown fields are an error (docs/api/errors.md), never silently dropped.
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
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) =>
    httpPart === 'querystring'
      ? decimalIntegers(schema, coercing.compile(schema as object))
      : exact.compile(schema as object),
  );
}

const DECIMAL = /^-?[0-9]+$/;

/**
 * ajv's coercion reads a query integer as JavaScript's Number() does: `0x10`, `1e1`, ` 5` and
 * `+5` all pass. A query integer is decimal digits only, checked on the text before coercion.
 */
function decimalIntegers(schema: FastifySchema, check: ValidateFunction): ValidateFunction {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((name) => properties[name]?.type === 'integer');
  if (integers.length === 0) return check;
  const validate = ((data: Record<string, unknown> | null) => {
    const name = integers.find((field) => {
      const raw = data?.[field];
      return typeof raw === 'string' && !DECIMAL.test(raw);
    });
    if (name === undefined) {
      const valid = check(data);
      validate.errors = check.errors;
      return valid;
    }
    validate.errors = [
      {
        instancePath: `/${name}`,
        schemaPath: '',
        keyword: 'type',
        params: {},
        message: 'must be decimal digits',
      },
    ];
    return false;
  }) as ValidateFunction;
  return validate;
}

/** ajv's findings as the one 400 of docs/api/errors.md, each naming the field (`url`, `scopes.0`, `query.limit`). */
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
