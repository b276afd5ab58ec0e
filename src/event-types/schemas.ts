import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { RE2JSException } from 're2js';
import { fieldProblem, HttpProblem, type FieldError } from '../http/problem.js';
import { addBoundedFormats, formatCost, KNOWN_FORMATS } from './formats.js';
import {
  compilePattern,
  estimatedStates,
  MAX_PATTERN_STATES,
  patternClock,
  PatternTimeout,
  threadCpuMicros,
} from './patterns.js';

/** A stored schema as serialized JSON is at most this (docs/api/limits.md). */
export const MAX_SCHEMA_BYTES = 64 * 1024;

/**
 * How much work checking one event's `data` may do before it is refused (docs/api/limits.md), in the
 * units `costOf` charges: about one per schema evaluation, key, array item or character scanned. A
 * count of work, not a clock: the same event and schema get the same verdict however busy the
 * process is (a clock refused valid events under load). The bound is set so that the costliest work
 * we could build per unit (test/event-types/hostile-schemas.test.ts, figures in docs/benchmarks.md)
 * stays within milliseconds, while an ordinary schema over the largest event (256 KiB) stays well
 * under it. One keyword whose work alone is over MAX_STEP_COST (`uniqueItems` over thousands of
 * objects) is refused before it starts.
 */
export const MAX_VALIDATION_WORK = 1_500_000;
const MAX_STEP_COST = 1_000_000;

/**
 * A clock behind the count (docs/decisions/0061-pattern-size-and-format-cost.md), for the work the
 * count cannot see in advance: how many states re2js's DFA builds for a string, which decides whether
 * a pattern at the size bound takes a millisecond or a second. Pattern matches share PATTERN_TIME_MS
 * of this thread's CPU time per event (a wall-clock share refused ordinary data on a loaded machine),
 * and every match stops when it is spent; the whole check stops at VALIDATION_DEADLINE_MS of wall time
 * whatever it was doing, should the count ever be wrong, and a match at it too. Ordinary schemas'
 * events stay far from both: the count, not the clock, decides their verdict.
 */
export const PATTERN_TIME_MS = 50;
export const VALIDATION_DEADLINE_MS = 250;
// The whole check looks at the clock after this much counted work (about 0.1 ms of it).
const LOOK_EVERY_WORK = 10_000;

/** Bounds on a schema's shape, so that compiling it takes tens of milliseconds at worst (docs/api/limits.md). */
export const MAX_SCHEMA_OBJECTS = 300;
export const MAX_SCHEMA_PATTERNS = 50;
export const MAX_SCHEMA_DEPTH = 32;
/**
 * A schema's patterns together compile to at most this many RE2 instructions: compiling costs about
 * 20 µs per instruction, so saving a schema stays within a few hundred milliseconds at worst.
 */
export const MAX_SCHEMA_PATTERN_STATES = 10_000;
/** A mismatch answers at most this many `errors` (docs/api/events.md). */
export const MAX_DATA_ERRORS = 20;

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

// The validation running now (validation is synchronous: one at a time per process): the work it
// did, when it next looks at the clock, its deadline, and the time its pattern matches have left.
let workDone = 0;
let nextLook = LOOK_EVERY_WORK;
let validationDeadline = Number.POSITIVE_INFINITY;
let patternTimeLeft = PATTERN_TIME_MS;

/**
 * `pattern` and `patternProperties` compiled by RE2: a tenant's schema is hostile input, and RE2's
 * time is linear in the string, where a backtracking RegExp can take seconds on `(a+)+$`. Searched
 * (not matched whole), as JSON Schema's ECMA-262 `pattern` is. RE2 syntax, close to ECMA-262's. Each
 * match runs under the pattern clock (patterns.ts): the event's pattern time left, or the check's
 * deadline if sooner.
 */
const re2Engine = Object.assign(
  (pattern: string): { test: (text: string) => boolean; toString: () => string } => {
    const compiled = compilePattern(pattern);
    return {
      test: (text) => {
        const cpuAt = threadCpuMicros();
        patternClock.deadline = validationDeadline;
        patternClock.cpuDeadline = cpuAt + patternTimeLeft * 1_000;
        try {
          return compiled.test(text);
        } finally {
          patternTimeLeft -= (threadCpuMicros() - cpuAt) / 1_000;
          patternClock.deadline = Number.POSITIVE_INFINITY;
          patternClock.cpuDeadline = Number.POSITIVE_INFINITY;
        }
      },
      // ajv shares one compiled pattern among the places with the same `toString()`.
      toString: () => pattern,
    };
  },
  { code: 're2' },
);

/** Thrown from inside a validator when checking `data` has done more work than allowed. */
class OverBudget extends Error {}

/** `burst`: the part of `cost` that one keyword does at once, which cannot be cut short. */
function spend([cost, burst]: [number, number]): void {
  if (burst > MAX_STEP_COST) throw new OverBudget();
  workDone += cost;
  if (workDone > MAX_VALIDATION_WORK) throw new OverBudget();
  if (workDone >= nextLook) {
    nextLook = workDone + LOOK_EVERY_WORK;
    if (performance.now() > validationDeadline) throw new OverBudget();
  }
}

/** The work the last `validateData` did, in `costOf`'s units (for benchmarks and tests' figures). */
export const lastValidationWork = (): number => workDone;

/** The subschemas' data type scalars: `uniqueItems` over them is a hash lookup in ajv, else pairwise. */
const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

// The units `costOf` charges, each about 10 ns of this machine's work at worst (measured per kind of work
// with the cases of test/event-types/hostile-schemas.test.ts and docs/benchmarks.md): an evaluation of a
// schema object (a failing `anyOf` branch reached through `$ref`s, which builds an error, is the
// costliest), a pair compared by `uniqueItems` or a key tried against a `patternProperties` pattern, a
// `format`'s own regular expression (JavaScript's), a deep comparison with a non-scalar `enum` entry.
const EVALUATION = 10;
const PAIR = 12;
const FORMAT = 50;
const OBJECT_KEY = 3;
// A pattern match costs its string's length times its program's states, at this many state-characters
// per unit: what re2js's DFA does per character once its states are built (it builds them on the way,
// which the pattern clock bounds). `ok$` (5 states) scans 200,000 characters for 300,000 units; a
// pattern at the size bound (1,000 states) scans about 15,000 within the whole budget.
const STATES_PER_UNIT = 10;

/** The units matching one `pattern` of `states` states against `length` characters costs. */
const patternCost = (states: number, length: number) =>
  EVALUATION + length + Math.ceil((length * states) / STATES_PER_UNIT);

/** What the cost keyword holds for one schema object, worked out when it is compiled. */
type FixedCost = [
  cost: number,
  burst: number,
  /** Its `pattern`'s states (0 without one). */
  patternStates: number,
  /** Its `patternProperties`' states, all together, and how many patterns there are. */
  propertyPatternStates: number,
  propertyPatterns: number,
];

/**
 * What a schema object costs on every evaluation whatever the data, worked out once when it is compiled:
 * the evaluation, its branches' errors, and its `enum` and `const` (compared with the data in one go, so their part is also
 * the burst).
 */
function fixedCostOf(schema: Record<string, unknown>): FixedCost {
  const compared = (value: unknown) =>
    typeof value === 'object' && value !== null ? 4 + Math.ceil(JSON.stringify(value).length / 100) : 1;
  let burst = 0;
  // A branch that fails builds its errors, kept until the `anyOf` or `oneOf` ends: each try costs twice.
  let branches = 0;
  for (const key of ['anyOf', 'oneOf']) if (Array.isArray(schema[key])) branches += schema[key].length;
  if (schema.not !== undefined) branches += 1;
  if (Array.isArray(schema.enum)) for (const entry of schema.enum as unknown[]) burst += compared(entry);
  if (schema.const !== undefined) burst += compared(schema.const);
  const patternStates = typeof schema.pattern === 'string' ? statesOf(schema.pattern) : 0;
  const map = schema.patternProperties;
  const keys = typeof map === 'object' && map !== null ? Object.keys(map) : [];
  const propertyStates = keys.reduce((sum, key) => sum + statesOf(key), 0);
  return [EVALUATION * (1 + branches) + burst, burst, patternStates, propertyStates, keys.length];
}

/** A pattern's states; one RE2 refuses counts none (ajv's compile then says why). */
function statesOf(pattern: string): number {
  try {
    return compilePattern(pattern).states;
  } catch {
    return 0;
  }
}

/**
 * What one evaluation of a schema object costs, charged before its keywords run: its fixed cost, plus
 * the keywords whose work grows with the data (a string scanned by a `pattern`, a `format` or a length
 * bound, an array's items, an object's keys, `uniqueItems`' pairwise comparison, every key against
 * every pattern). The subschemas charge their own evaluations, so an `anyOf` that tries every branch,
 * or `$ref`s that fan out, pay for each try: the budget bounds the whole validation, whatever its shape.
 * The second figure is what one keyword does in one go (its time cannot be cut short): a string's
 * `format` (at its own cost per character, formats.ts), `uniqueItems`, keys × patterns, `enum`. A
 * `pattern` costs its length × its program's states, and is not counted there: a match is cut short
 * by the pattern clock, and a long string may match a small pattern.
 */
function costOf(
  schema: Record<string, unknown>,
  [fixed, fixedBurst, patternStates, propertyStates, propertyPatterns]: FixedCost,
  data: unknown,
): [number, number] {
  let cost = fixed;
  let burst = fixedBurst;
  if (Array.isArray(schema.required)) cost += schema.required.length;
  if (typeof data === 'string') {
    if (schema.pattern !== undefined) cost += patternCost(patternStates, data.length);
    if (typeof schema.format === 'string') burst += FORMAT + formatCost(schema.format, data.length);
    if (schema.maxLength !== undefined || schema.minLength !== undefined) cost += data.length;
  } else if (Array.isArray(data)) {
    cost += data.length;
    if (schema.uniqueItems === true) {
      const items = schema.items as { type?: unknown } | undefined;
      const scalar = typeof items?.type === 'string' && SCALAR_TYPES.has(items.type);
      burst += scalar ? data.length : PAIR * ((data.length * (data.length - 1)) / 2);
    }
  } else if (typeof data === 'object' && data !== null) {
    const names = Object.keys(data);
    const keys = names.length;
    cost += OBJECT_KEY * keys;
    if (propertyPatterns > 0) {
      // Every key is tried against every pattern: each try a pattern match of the key.
      const keyChars = names.reduce((sum, name) => sum + name.length, 0);
      burst +=
        PAIR * keys * propertyPatterns +
        keyChars * propertyPatterns +
        Math.ceil((keyChars * propertyStates) / STATES_PER_UNIT);
    }
  }
  return [cost + burst - fixedBurst, burst];
}

const COST_KEYWORD = 'x-hubgate-cost';

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    // A referenced schema stays one function, so nothing a schema names twice is compiled twice.
    inlineRefs: false,
    // ajv's optimizer passes cost more than they save on schemas compiled once and run on small data.
    code: { regExp: re2Engine, optimize: false },
    // ajv logs a failed compile's whole generated code: megabytes from a hostile schema, and its text.
    logger: false,
    // Remote `$ref`s are refused before compiling (checkSchema); this refuses anything ajv would fetch.
    loadSchema: () => Promise.reject(new Error('remote $ref')),
  });
  ajv.addKeyword({
    keyword: COST_KEYWORD,
    schemaType: 'array',
    errors: false,
    before: '$dynamicAnchor',
    validate: (fixed: FixedCost, data: unknown, parent?: Record<string, unknown>) => {
      spend(costOf(parent ?? {}, fixed, data));
      return true;
    },
  });
  return addBoundedFormats(ajv);
}

// Keywords that hold one subschema, an array of them, or a map of them (JSON Schema 2020-12 core and
// applicator vocabularies, and the pre-2020 spellings ajv still reads).
const ONE = [
  'additionalProperties',
  'items',
  'additionalItems',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
];
const MANY = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const MAP = ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'];

/** Each schema object in `schema` (itself included) with its JSON Pointer and depth, depth first. */
function* schemaObjects(
  schema: unknown,
  pointer: string,
  depth = 1,
): Generator<[Record<string, unknown>, string, number]> {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return;
  const node = schema as Record<string, unknown>;
  yield [node, pointer, depth];
  // A schema deeper than the bound is refused (checkSchema) when its first node that deep is seen.
  if (depth > MAX_SCHEMA_DEPTH) return;
  const inner = depth + 1;
  const escape = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');
  for (const key of ONE) {
    const value = node[key];
    // `items` as an array (draft 7's tuples), which ajv may still read: each entry is a schema.
    if (Array.isArray(value)) {
      for (const [i, sub] of value.entries()) yield* schemaObjects(sub, `${pointer}/${key}/${i}`, inner);
    } else if (key in node) yield* schemaObjects(value, `${pointer}/${key}`, inner);
  }
  for (const key of MANY) {
    const list = node[key];
    if (!Array.isArray(list)) continue;
    for (const [i, sub] of list.entries()) yield* schemaObjects(sub, `${pointer}/${key}/${i}`, inner);
  }
  for (const key of MAP) {
    const map = node[key];
    if (typeof map !== 'object' || map === null || Array.isArray(map)) continue;
    for (const [name, sub] of Object.entries(map)) {
      yield* schemaObjects(sub, `${pointer}/${key}/${escape(name)}`, inner);
    }
  }
}

const at = (pointer: string) => `schema${pointer.replaceAll('/', '.')}`;

/**
 * The checks of docs/api/events.md on a schema being saved, each a 400 naming the field: an object of
 * at most 64 KiB, `$schema` absent or 2020-12, no `$id` (the catalog names the schema, and a tenant's
 * `$id` must not be resolvable by another's), every `$ref` local (`#…`), every `pattern` and
 * `patternProperties` key one RE2 compiles, and the whole compiling. Returns the validator made.
 */
export function checkSchema(schema: Record<string, unknown>): ValidateFunction {
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_SCHEMA_BYTES) {
    throw fieldProblem('schema', 'is larger than 64 KiB as JSON');
  }
  if (schema.$schema !== undefined && schema.$schema !== DRAFT_2020) {
    throw fieldProblem('schema.$schema', `must be absent or ${DRAFT_2020}`);
  }
  let objects = 0;
  const patterns = { count: 0, states: 0 };
  // What a `$ref` may point at: a schema object walked here (so it is counted, bounded and charged for
  // when it runs), by JSON Pointer or by an anchor one of them declares. Anything else — a subschema
  // under a keyword ajv ignores, a value inside `enum` — would run uncharged.
  const walked = new Set<string>();
  const anchors = new Set<string>();
  const refs: Array<[string, string]> = [];
  for (const [node, pointer, depth] of schemaObjects(schema, '')) {
    walked.add(pointer);
    for (const keyword of ['$anchor', '$dynamicAnchor']) {
      if (typeof node[keyword] === 'string') anchors.add(node[keyword]);
    }
    if (node.format !== undefined && (typeof node.format !== 'string' || !KNOWN_FORMATS.has(node.format))) {
      throw fieldProblem(
        at(`${pointer}/format`),
        `is not a format hubgate checks (${[...KNOWN_FORMATS].join(', ')})`,
      );
    }
    if (depth > MAX_SCHEMA_DEPTH)
      throw fieldProblem(at(pointer), `nests deeper than ${MAX_SCHEMA_DEPTH} schemas`);
    if (++objects > MAX_SCHEMA_OBJECTS) {
      throw fieldProblem('schema', `has more than ${MAX_SCHEMA_OBJECTS} schema objects`);
    }
    checkPatterns(node, pointer, patterns);
    if (node.$id !== undefined)
      throw fieldProblem(at(`${pointer}/$id`), 'is not supported: the type’s name names it');
    if (pointer !== '' && node.$schema !== undefined) {
      throw fieldProblem(at(`${pointer}/$schema`), 'is allowed only at the top');
    }
    for (const keyword of ['$ref', '$dynamicRef']) {
      const ref = node[keyword];
      if (ref !== undefined && (typeof ref !== 'string' || !ref.startsWith('#'))) {
        throw fieldProblem(at(`${pointer}/${keyword}`), 'must be a local reference starting with #');
      }
      if (typeof ref === 'string') refs.push([ref, `${pointer}/${keyword}`]);
    }
  }
  checkRefTargets(refs, walked, anchors);
  try {
    return compile(schema);
  } catch (error) {
    if (error instanceof HttpProblem) throw error;
    // ajv's message names the keyword and where; it holds nothing but the schema the caller sent.
    throw fieldProblem('schema', `does not compile: ${(error as Error).message}`);
  }
}

/** Each `$ref` (at `where`) points at a walked schema object, by JSON Pointer or a declared anchor. */
function checkRefTargets(
  refs: ReadonlyArray<[string, string]>,
  walked: ReadonlySet<string>,
  anchors: ReadonlySet<string>,
): void {
  for (const [ref, where] of refs) {
    const fragment = ref.slice(1);
    let target: string | undefined;
    try {
      target = decodeURIComponent(fragment);
    } catch {
      target = undefined;
    }
    const known =
      target !== undefined &&
      (target.startsWith('/') || target === '' ? walked.has(target) : anchors.has(target));
    if (!known) {
      throw fieldProblem(
        at(where),
        'must point at a schema of this schema (under properties, items, $defs and the other schema keywords)',
      );
    }
  }
}

/**
 * Compiles the node's `pattern` and `patternProperties` keys by RE2, each at most MAX_PATTERN_STATES
 * instructions (bounded repeats count once per repetition: `.{1,1000}` is 2,000), adding them to the
 * schema's `seen` so far (MAX_SCHEMA_PATTERNS, MAX_SCHEMA_PATTERN_STATES). A pattern is measured from
 * its text before it is compiled, so that a huge program is refused without the time compiling it.
 */
function checkPatterns(
  node: Record<string, unknown>,
  pointer: string,
  seen: { count: number; states: number },
): void {
  const patterns: Array<[string, string]> = [];
  if (typeof node.pattern === 'string') patterns.push([node.pattern, `${pointer}/pattern`]);
  const map = node.patternProperties;
  if (typeof map === 'object' && map !== null) {
    for (const key of Object.keys(map)) patterns.push([key, `${pointer}/patternProperties`]);
  }
  for (const [pattern, where] of patterns) {
    if (++seen.count > MAX_SCHEMA_PATTERNS) {
      throw fieldProblem('schema', `has more than ${MAX_SCHEMA_PATTERNS} patterns`);
    }
    const which = where.endsWith('/pattern')
      ? 'compiles'
      : `has a key (${pattern.slice(0, 100)}) that compiles`;
    const overBound = (states: number, about = '') =>
      fieldProblem(
        at(where),
        `${which} to ${about}${states} RE2 instructions, over ${MAX_PATTERN_STATES} (each bounded repeat ` +
          'counts once per repetition: write `.{1,1000}` as `.*` with a maxLength)',
      );
    const estimate = estimatedStates(pattern);
    if (estimate > MAX_PATTERN_STATES) throw overBound(estimate, 'about ');
    if (seen.states + estimate > MAX_SCHEMA_PATTERN_STATES) {
      throw fieldProblem(
        at(where),
        `brings the schema's patterns to over ${MAX_SCHEMA_PATTERN_STATES} RE2 instructions together`,
      );
    }
    let states: number;
    try {
      states = compilePattern(pattern).states;
    } catch (error) {
      if (!(error instanceof RE2JSException)) throw error;
      throw fieldProblem(at(where), `is not a regular expression RE2 accepts (${error.message})`);
    }
    if (states > MAX_PATTERN_STATES) throw overBound(states);
    seen.states += states;
  }
}

/** A copy of `schema` with the cost keyword on every schema object, compiled by an ajv of its own. */
function compile(schema: Record<string, unknown>): ValidateFunction {
  const costed = structuredClone(schema);
  for (const [node] of schemaObjects(costed, '')) node[COST_KEYWORD] = fixedCostOf(node);
  // One ajv per schema: its cache and any names it learns belong to this schema alone.
  return newAjv().compile(costed);
}

/**
 * Checks `data` against a compiled schema (docs/api/events.md): nothing, or the 400 whose `errors`
 * paths are JSON Pointers starting at `/data`. Data that needs more than MAX_VALIDATION_WORK, or a
 * schema whose `$ref`s recurse without end, is refused the same way rather than holding the process.
 */
export function validateData(validate: ValidateFunction, data: unknown): HttpProblem | undefined {
  workDone = 0;
  nextLook = LOOK_EVERY_WORK;
  patternTimeLeft = PATTERN_TIME_MS;
  validationDeadline = performance.now() + VALIDATION_DEADLINE_MS;
  try {
    if (validate(data)) return undefined;
  } catch (error) {
    const tooCostly =
      error instanceof OverBudget || error instanceof PatternTimeout || error instanceof RangeError;
    if (!tooCostly) throw error;
    return dataProblem([
      { path: '/data', message: 'is too costly to check against the event type’s schema' },
    ]);
  } finally {
    validationDeadline = Number.POSITIVE_INFINITY;
  }
  // The first few say what is wrong; an `anyOf` over many branches could otherwise answer thousands.
  return dataProblem((validate.errors ?? []).slice(0, MAX_DATA_ERRORS).map(fieldErrorOf));
}

function fieldErrorOf(issue: ErrorObject): FieldError {
  const params = issue.params as Record<string, unknown>;
  let path = `/data${issue.instancePath}`;
  const extra = params.additionalProperty ?? params.missingProperty ?? params.unevaluatedProperty;
  if (typeof extra === 'string') path += `/${extra.replaceAll('~', '~0').replaceAll('/', '~1')}`;
  let message = issue.message ?? 'is invalid';
  if (typeof params.additionalProperty === 'string' || typeof params.unevaluatedProperty === 'string') {
    message = 'is not a known field';
  } else if (typeof params.missingProperty === 'string') message = 'is required';
  return { path, message };
}

function dataProblem(errors: FieldError[]): HttpProblem {
  const first = errors[0];
  return new HttpProblem('validation_failed', first ? `${first.path}: ${first.message}` : undefined, {
    errors,
  });
}
