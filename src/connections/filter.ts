import { Type } from 'typebox';
import { HttpProblem, type FieldError } from '../http/problem.js';

// A connection's payload filter (docs/api/connections.md, docs/decisions/0058-payload-filters.md):
// its shape for the create and edit bodies and the OpenAPI document, and the checks a schema cannot
// make (depth, condition count, size, operands), run before anything is saved.

/** Bounds of a filter (docs/api/limits.md): each publish evaluates it once per candidate connection. */
export const FILTER_LIMITS = { depth: 4, conditions: 50, bytes: 4096, listItems: 100 } as const;

export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'in',
  'nin',
  'gt',
  'gte',
  'lt',
  'lte',
  'exists',
  'prefix',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];
const OPERATORS = new Set<string>(FILTER_OPERATORS);
export const ORDERED_OPERATORS = new Set<string>(['gt', 'gte', 'lt', 'lte']);

/** The fields of the delivered body (docs/api/events.md) a path may start at: a typo never silently fails. */
const ROOTS = new Set(['id', 'type', 'timestamp', 'data']);
const MAX_PATH_LENGTH = 200;

/** A filter object as stored: paths, `$all` and `$any`. */
export type Filter = Record<string, unknown>;

/**
 * The `filter` config field. The schema checks only that it is an object or null: the depth, the
 * count of conditions and the operands are checked in code (`checkFilter`), so every error names its
 * place in the filter the same way, as a JSON Pointer (paths hold dots themselves).
 */
export const FilterField = Type.Optional(
  Type.Union(
    [
      Type.Record(Type.String({ minLength: 1 }), Type.Unknown(), {
        description:
          'keys: dotted paths into the delivered body (`type`, `data.customer.tier`) or `$all`/`$any` ' +
          '(arrays of filters); values: a JSON value (equality) or an object of operators ' +
          `${FILTER_OPERATORS.join(', ')}. At most ${FILTER_LIMITS.depth} levels, ` +
          `${FILTER_LIMITS.conditions} conditions and ${FILTER_LIMITS.bytes} bytes.`,
      }),
      Type.Null(),
    ],
    {
      description:
        'deliver only events whose body matches every condition (docs/api/connections.md); null or absent: every event',
    },
  ),
);

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 6901: a key as one JSON Pointer segment. */
export const pointerSegment = (key: string): string => key.replaceAll('~', '~0').replaceAll('/', '~1');

const RFC3339 = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * The instant an RFC 3339 string names, in milliseconds (finer digits are dropped), or undefined.
 * The length check first: a 256 KiB string in a payload is rejected without being scanned.
 */
export function instantOf(text: string): number | undefined {
  if (text.length > 40) return undefined;
  const parts = RFC3339.exec(text);
  if (!parts || !realFields(parts[1]!, parts[2]!, parts[4]!)) return undefined;
  const fraction = parts[3] ? `.${parts[3].slice(0, 3).padEnd(3, '0')}` : '';
  const zone = parts[4] === 'z' || parts[4] === 'Z' ? 'Z' : parts[4];
  const ms = Date.parse(`${parts[1]}T${parts[2]}${fraction}${zone}`);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Each field in its range, the day in its month: `Date.parse` would roll 2024-02-30 over into March. */
function realFields(date: string, time: string, zone: string): boolean {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const [hour, minute, second] = time.split(':').map(Number) as [number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const [zoneHour, zoneMinute] = zone.length === 6 ? zone.slice(1).split(':').map(Number) : [0, 0];
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59 &&
    zoneHour! <= 23 &&
    zoneMinute! <= 59
  );
}

interface Findings {
  errors: FieldError[];
  conditions: number;
}

const MAX_ERRORS = 20;
const report = (found: Findings, path: string, message: string) => {
  if (found.errors.length < MAX_ERRORS) found.errors.push({ path, message });
};

/**
 * Throws `400 validation_failed` naming each bad place (`/filter/$any/0/data.tier/gtt`) unless
 * `value` is a filter within docs/api/connections.md's language and docs/api/limits.md's bounds.
 * Null and undefined (no filter) pass.
 */
export function checkFilter(value: unknown, at = '/filter'): void {
  if (value === null || value === undefined) return;
  const found: Findings = { errors: [], conditions: 0 };
  const bytes = Buffer.byteLength(JSON.stringify(value));
  if (bytes > FILTER_LIMITS.bytes) {
    report(found, at, `is ${bytes} bytes; a filter holds at most ${FILTER_LIMITS.bytes}`);
  } else {
    checkLevel(value, at, 1, found);
  }
  const first = found.errors[0];
  if (first) {
    throw new HttpProblem('validation_failed', `${first.path}: ${first.message}`, { errors: found.errors });
  }
}

function checkLevel(filter: unknown, at: string, depth: number, found: Findings): void {
  if (!isPlainObject(filter)) return report(found, at, 'must be an object of conditions');
  if (depth > FILTER_LIMITS.depth) {
    return report(found, at, `is nested ${depth} levels deep; at most ${FILTER_LIMITS.depth}`);
  }
  const keys = Object.keys(filter);
  if (keys.length === 0) report(found, at, 'must hold at least one condition (null means no filter)');
  for (const key of keys) {
    const where = `${at}/${pointerSegment(key)}`;
    const value = filter[key];
    if (key === '$all' || key === '$any') {
      if (!Array.isArray(value) || value.length === 0) {
        report(found, where, 'must be a non-empty array of filters');
        continue;
      }
      value.forEach((inner, i) => checkLevel(inner, `${where}/${i}`, depth + 1, found));
      continue;
    }
    found.conditions += 1;
    if (found.conditions === FILTER_LIMITS.conditions + 1) {
      report(
        found,
        where,
        `is condition ${found.conditions}; a filter holds at most ${FILTER_LIMITS.conditions}`,
      );
    }
    const pathProblem = problemOfPath(key);
    if (pathProblem) report(found, where, pathProblem);
    checkCondition(value, where, found);
  }
}

function problemOfPath(path: string): string | undefined {
  if (path.startsWith('$')) return 'is not a known combinator ($all, $any)';
  if (path.length > MAX_PATH_LENGTH) return `is longer than ${MAX_PATH_LENGTH} characters`;
  const segments = path.split('.');
  if (segments.some((s) => s === '')) return 'must be a dotted path with no empty segment';
  if (!ROOTS.has(segments[0]!)) return 'must start at id, type, timestamp or data (the delivered body)';
  return undefined;
}

/** A condition's value: a plain JSON value (equality), or an object of operators and their operands. */
function checkCondition(value: unknown, at: string, found: Findings): void {
  if (!isPlainObject(value)) return;
  const operators = Object.keys(value);
  if (operators.length === 0) report(found, at, 'must name at least one operator');
  for (const operator of operators) {
    const where = `${at}/${pointerSegment(operator)}`;
    if (!OPERATORS.has(operator)) {
      report(found, where, `is not a known operator (${FILTER_OPERATORS.join(', ')})`);
      continue;
    }
    const problem = operandProblem(operator as FilterOperator, value[operator]);
    if (problem) report(found, where, problem);
  }
}

function operandProblem(operator: FilterOperator, operand: unknown): string | undefined {
  switch (operator) {
    case 'eq':
    case 'ne':
      return undefined;
    case 'in':
    case 'nin':
      if (!Array.isArray(operand) || operand.length === 0 || operand.length > FILTER_LIMITS.listItems) {
        return `must be an array of 1 to ${FILTER_LIMITS.listItems} values`;
      }
      return undefined;
    case 'exists':
      return typeof operand === 'boolean' ? undefined : 'must be true or false';
    case 'prefix':
      return typeof operand === 'string' ? undefined : 'must be a string';
    default:
      if (typeof operand === 'number' && Number.isFinite(operand)) return undefined;
      if (typeof operand === 'string' && instantOf(operand) !== undefined) return undefined;
      return 'must be a number or an RFC 3339 date-time';
  }
}
