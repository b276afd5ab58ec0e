import { setImmediate as nextTurn } from 'node:timers/promises';
import { RE2JS, RE2JSException } from 're2js';

/** The four label matcher operators, as Alertmanager spells them. */
export const MATCHER_OPS = ['=', '!=', '=~', '!~'] as const;
export type MatcherOp = (typeof MATCHER_OPS)[number];

export interface Matcher {
  name: string;
  op: MatcherOp;
  value: string;
}

/** A label name as Prometheus allows it. */
export const LABEL_NAME_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';

const isRegexOp = (op: MatcherOp): boolean => op === '=~' || op === '!~';

/**
 * A matcher's pattern in RE2 syntax, as Alertmanager (Go's regexp) reads it, on an engine whose time
 * is linear in the label's length: no backtracking, so no pattern can stall the alert engine.
 * Matched against the whole label value (`matches`), which is Alertmanager's `^(?:value)$` without
 * pasting text around the value: `Deliv)|(?:.*` does not compile, instead of matching everything.
 * The lazy DFA is built here, by one match: its set-up costs milliseconds for a long program of
 * Unicode classes, and belongs to the compile, not to the first alert routed.
 */
function compilePattern(value: string): RE2JS {
  const pattern = RE2JS.compile(value);
  pattern.matches('');
  return pattern;
}

// The engine routes every alert through the same patterns: each is compiled once. The bound holds a
// whole document (100 rules of 20 matchers); the least recently used pattern goes first. A value RE2
// refuses is kept as its error: PUT refuses it, but a document stored before RE2 may hold one.
const compiled = new Map<string, RE2JS | string>();
const CACHE_LIMIT = 2_048;

function cachedPattern(value: string): RE2JS | string {
  let pattern = compiled.get(value);
  if (pattern !== undefined) {
    compiled.delete(value);
  } else {
    try {
      pattern = compilePattern(value);
    } catch (error) {
      if (!(error instanceof RE2JSException)) throw error;
      pattern = `is not a regular expression RE2 accepts (${error.message})`;
    }
    if (compiled.size >= CACHE_LIMIT) compiled.delete(compiled.keys().next().value ?? '');
  }
  compiled.set(value, pattern);
  return pattern;
}

/** Why a regex matcher's value does not compile, or undefined when it does (or is not a regex). */
function patternError(matcher: Matcher): string | undefined {
  if (!isRegexOp(matcher.op)) return undefined;
  const pattern = cachedPattern(matcher.value);
  return typeof pattern === 'string' ? pattern : undefined;
}

// Compiling one long pattern of Unicode classes takes up to a few tens of milliseconds, and a document
// holds up to 2,000 patterns: between slices of this length the event loop serves other requests.
const SLICE_MS = 10;

/**
 * Checks every matcher as `patternError` does, leaving the compiled patterns cached for `matches`,
 * without holding the event loop for more than a slice at a time. Errors by index.
 */
export async function compileMatchers(matchers: readonly Matcher[]): Promise<Array<string | undefined>> {
  const errors: Array<string | undefined> = [];
  let sliceStart = performance.now();
  for (const matcher of matchers) {
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    errors.push(patternError(matcher));
  }
  return errors;
}

/**
 * Whether the label's value matches a regex matcher's whole value. One RE2 refuses (only in a document
 * stored before RE2) matches nothing, under =~ and !~ alike: its rule is skipped and the alert routed
 * by the others, rather than the engine failing on every evaluation.
 */
function patternMatches(value: string, actual: string): boolean | undefined {
  const pattern = cachedPattern(value);
  return typeof pattern === 'string' ? undefined : pattern.matches(actual);
}

/** Whether a label set satisfies one matcher; a missing label counts as the empty string. */
export function matches(matcher: Matcher, labels: Readonly<Record<string, string>>): boolean {
  const actual = Object.hasOwn(labels, matcher.name) ? (labels[matcher.name] ?? '') : '';
  switch (matcher.op) {
    case '=':
      return actual === matcher.value;
    case '!=':
      return actual !== matcher.value;
    case '=~':
      return patternMatches(matcher.value, actual) === true;
    case '!~':
      return patternMatches(matcher.value, actual) === false;
  }
}
