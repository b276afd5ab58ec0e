import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const BASE: Options = {
  // Unknown fields are an error (contract §3), never silently dropped.
  removeAdditional: false,
  useDefaults: true,
  allErrors: false,
  strict: false,
};

/**
 * Two validators: bodies and paths are checked as sent (a number where a string belongs is a 400,
 * not coerced), while query strings, which are text by nature, are coerced to their declared types.
 */
export function registerValidation(app: FastifyInstance): void {
  const exact = addFormats(new Ajv({ ...BASE, coerceTypes: false }));
  const coercing = addFormats(new Ajv({ ...BASE, coerceTypes: 'array' }));
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) => {
    const ajv = httpPart === 'querystring' ? coercing : exact;
    return ajv.compile(schema as object);
  });
}
