import {
  instantOf,
  isPlainObject,
  ORDERED_OPERATORS,
  pointerSegment,
  type Filter,
  type FilterOperator,
} from './filter.js';

// Evaluating a saved filter against an event's delivered body (docs/api/connections.md). The work is
// bounded by the filter, not the payload: a path walks one property per segment, and an equality
// stops when the filter's operand is exhausted, so a 256 KiB payload costs what a small one does
// (docs/decisions/0058-payload-filters.md). Filters are checked when saved (filter.ts); an operand
// that is somehow not what the check allows never matches rather than throwing at publish.

/** Counts the steps of an evaluation: tests hold the work to a bound computed from the filter. */
export interface FilterMeter {
  steps: number;
}

/** One condition that did not hold, as the filter test route shows it. */
export interface FilterFailure {
  /** Where the condition stands in the filter, as a JSON Pointer (`/filter/$any/0/data.tier/eq`). */
  filterPath: string;
  /** The path into the delivered body. */
  path: string;
  /** `equals` for a plain value. */
  operator: 'equals' | FilterOperator;
  expected: unknown;
  /** `missing` when the body has nothing at the path. */
  actualType: (typeof ACTUAL_TYPES)[number];
  /** The value found when it is a number, boolean, null or a string of ≤ 200 characters; else null. */
  actual: unknown;
}

export const ACTUAL_TYPES = ['missing', 'null', 'boolean', 'number', 'string', 'array', 'object'] as const;

const MISSING = Symbol('missing');
type Found = unknown;

interface Evaluation {
  meter: FilterMeter;
  /** Set when the caller wants every failing condition, not just the verdict. */
  failures?: FilterFailure[];
}

/** Whether the delivered body (built on demand, once) passes `filter`; no filter passes everything. */
export function filterAccepts(
  filter: unknown,
  body: () => unknown,
  meter: FilterMeter = { steps: 0 },
): boolean {
  if (filter === null || filter === undefined) return true;
  return levelHolds(filter, body(), '/filter', { meter });
}

/** The verdict and every condition that failed (inside an `$any` that matched, none). */
export function explainFilter(
  filter: Filter,
  body: unknown,
  meter: FilterMeter = { steps: 0 },
): { matches: boolean; failed: FilterFailure[] } {
  const failures: FilterFailure[] = [];
  const matches = levelHolds(filter, body, '/filter', { meter, failures });
  return { matches, failed: failures };
}

function levelHolds(filter: unknown, body: unknown, at: string, run: Evaluation): boolean {
  if (!isPlainObject(filter)) return false;
  let all = true;
  for (const [key, value] of Object.entries(filter)) {
    run.meter.steps += 1;
    // Places are named only for an explanation: a publish's verdict builds no strings.
    const where = run.failures ? `${at}/${pointerSegment(key)}` : at;
    let holds: boolean;
    if (key === '$all') holds = allHold(value, body, where, run);
    else if (key === '$any') holds = anyHolds(value, body, where, run);
    else holds = conditionHolds(key, value, lookUp(body, key, run.meter), where, run);
    if (!holds) {
      all = false;
      if (!run.failures) return false;
    }
  }
  return all;
}

function allHold(filters: unknown, body: unknown, at: string, run: Evaluation): boolean {
  if (!Array.isArray(filters)) return false;
  let all = true;
  for (const [i, inner] of filters.entries()) {
    if (levelHolds(inner, body, run.failures ? `${at}/${i}` : at, run)) continue;
    all = false;
    if (!run.failures) return false;
  }
  return all;
}

function anyHolds(filters: unknown, body: unknown, at: string, run: Evaluation): boolean {
  if (!Array.isArray(filters)) return false;
  const before = run.failures?.length ?? 0;
  for (const [i, inner] of filters.entries()) {
    if (!levelHolds(inner, body, run.failures ? `${at}/${i}` : at, run)) continue;
    // One branch is enough: the others' failures are not why anything was left out.
    if (run.failures) run.failures.length = before;
    return true;
  }
  return false;
}

/** The value at a dotted path: one property per segment; a number segment indexes an array. */
function lookUp(body: unknown, path: string, meter: FilterMeter): Found {
  let current: unknown = body;
  for (const segment of path.split('.')) {
    meter.steps += 1;
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]{0,8})$/.test(segment)) return MISSING;
      const index = Number(segment);
      if (index >= current.length) return MISSING;
      current = current[index];
    } else if (isPlainObject(current) && Object.hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return MISSING;
    }
  }
  return current;
}

function conditionHolds(
  path: string,
  condition: unknown,
  found: Found,
  at: string,
  run: Evaluation,
): boolean {
  if (!isPlainObject(condition)) {
    const holds = found !== MISSING && jsonEqual(found, condition, run.meter);
    if (!holds) fail(run, { at, path, operator: 'equals', expected: condition, found });
    return holds;
  }
  let all = true;
  for (const [operator, operand] of Object.entries(condition)) {
    if (operatorHolds(operator, operand, found, run.meter)) continue;
    all = false;
    if (!run.failures) return false;
    fail(run, {
      at: `${at}/${pointerSegment(operator)}`,
      path,
      operator: operator as FilterOperator,
      expected: operand,
      found,
    });
  }
  return all;
}

function operatorHolds(operator: string, operand: unknown, found: Found, meter: FilterMeter): boolean {
  const present = found !== MISSING;
  switch (operator) {
    case 'eq':
      return present && jsonEqual(found, operand, meter);
    case 'ne':
      return !present || !jsonEqual(found, operand, meter);
    case 'in':
      return present && Array.isArray(operand) && operand.some((v) => jsonEqual(found, v, meter));
    case 'nin':
      return !present || (Array.isArray(operand) && !operand.some((v) => jsonEqual(found, v, meter)));
    case 'exists':
      return present === operand;
    case 'prefix':
      return typeof found === 'string' && typeof operand === 'string' && found.startsWith(operand);
    default: {
      if (!ORDERED_OPERATORS.has(operator)) return false;
      const order = compared(found, operand);
      if (order === undefined) return false;
      if (operator === 'gt') return order > 0;
      if (operator === 'gte') return order >= 0;
      if (operator === 'lt') return order < 0;
      return order <= 0;
    }
  }
}

/** found − operand's sign for two numbers or two RFC 3339 instants; undefined for anything else. */
function compared(found: Found, operand: unknown): number | undefined {
  if (typeof operand === 'number') {
    return typeof found === 'number' ? Math.sign(found - operand) : undefined;
  }
  if (typeof operand !== 'string' || typeof found !== 'string') return undefined;
  const limit = instantOf(operand);
  const instant = instantOf(found);
  return limit === undefined || instant === undefined ? undefined : Math.sign(instant - limit);
}

/**
 * JSON equality: numbers as numbers, objects by their keys whatever the order, arrays item by item.
 * Led by `expected` (the filter's side): an object's keys are counted only up to the expected
 * count, so the work is bounded by the operand, however large the payload's value is.
 */
function jsonEqual(found: unknown, expected: unknown, meter: FilterMeter): boolean {
  meter.steps += 1;
  if (found === expected) return true;
  if (typeof expected !== 'object' || expected === null || typeof found !== 'object' || found === null) {
    return false;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(found) || found.length !== expected.length) return false;
    return expected.every((item, i) => jsonEqual(found[i], item, meter));
  }
  if (Array.isArray(found)) return false;
  const wanted = Object.keys(expected);
  let count = 0;
  for (const key in found) {
    meter.steps += 1;
    if (++count > wanted.length || !Object.hasOwn(found, key)) return false;
  }
  if (count !== wanted.length) return false;
  const have = found as Record<string, unknown>;
  const want = expected as Record<string, unknown>;
  return wanted.every((key) => Object.hasOwn(have, key) && jsonEqual(have[key], want[key], meter));
}

function fail(
  run: Evaluation,
  failure: { at: string; path: string; operator: FilterFailure['operator']; expected: unknown; found: Found },
): void {
  if (!run.failures) return;
  const { found } = failure;
  const actualType =
    found === MISSING
      ? 'missing'
      : found === null
        ? 'null'
        : Array.isArray(found)
          ? 'array'
          : (typeof found as 'boolean' | 'number' | 'string' | 'object');
  const shown =
    actualType === 'number' ||
    actualType === 'boolean' ||
    (actualType === 'string' && (found as string).length <= 200);
  run.failures.push({
    filterPath: failure.at,
    path: failure.path,
    operator: failure.operator,
    expected: failure.expected,
    actualType,
    actual: shown ? found : null,
  });
}
