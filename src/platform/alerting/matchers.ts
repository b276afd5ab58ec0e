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

// Compiling one long pattern of Unicode classes takes up to a few tens of milliseconds: between slices
// of this length the event loop serves other requests.
const SLICE_MS = 10;

/**
 * The RE2 instructions all distinct patterns of one document may compile to. Time and memory grow
 * with them (up to ~30 ms and ~0.2 KiB per instruction for Unicode classes): this bounds a document
 * to about a second and a few MiB, where 2,000 matchers of 1,000 characters could take a minute and a
 * gigabyte. Ordinary documents use a few thousand (a 30-ID alternation is ~200).
 */
export const MAX_DOCUMENT_PROGRAM_SIZE = 50_000;

/**
 * Compiles the regex matchers of one document, leaving them cached for `matches`, without holding
 * the event loop for more than a slice (one compile) at a time. Returns why each matcher is refused,
 * by index: RE2 cannot compile it, or it takes the document over MAX_DOCUMENT_PROGRAM_SIZE (then
 * nothing after it is compiled; a document stored before the bound compiles the rest when routed).
 */
export async function compileMatchers(matchers: readonly Matcher[]): Promise<Array<string | undefined>> {
  const errors: Array<string | undefined> = matchers.map(() => undefined);
  const counted = new Set<string>();
  let size = 0;
  let sliceStart = performance.now();
  for (const [i, matcher] of matchers.entries()) {
    if (!isRegexOp(matcher.op) || counted.has(matcher.value)) continue;
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const pattern = cachedPattern(matcher.value);
    if (typeof pattern === 'string') {
      errors[i] = pattern;
      continue;
    }
    counted.add(matcher.value);
    size += pattern.programSize();
    if (size > MAX_DOCUMENT_PROGRAM_SIZE) {
      errors[i] =
        `takes the document's regular expressions over ${MAX_DOCUMENT_PROGRAM_SIZE} RE2 instructions ` +
        `(${size} so far): simplify or share patterns`;
      break;
    }
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
