import { setImmediate as nextTurn } from 'node:timers/promises';
import { RE2JS, RE2JSException } from 're2js';
import { programSizeBound } from './program-size.js';

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
 * What compiling costs is bounded before anything is compiled, from the text (docs/api/limits.md: nothing a
 * client sends may cost more than its own request), and the same for values RE2 refuses. Measured on
 * this machine (2 cores, warm; ×2–3 when busy), the costliest per unit:
 * - parsing: ~35 µs per character of case-folded Unicode classes (`(?i)\pL\pL…`), so a value of
 *   1,000 characters (the schema's bound) holds the event loop ~35 ms, and a document's distinct
 *   values hold MAX_DOCUMENT_PATTERN_LENGTH characters in all (~0.3 s);
 * - compiling and the DFA's set-up: ~10 µs per RE2 instruction (`(?i)(?:[\pL\pN\pM\pS]){n}`),
 *   where a repeat makes a short text a long program (`(?:\pL…){1000}`, 310 characters, is 100,000
 *   instructions and a second), so one value compiles to at most MAX_PATTERN_PROGRAM_SIZE
 *   instructions (~20 ms) and a document to MAX_DOCUMENT_PROGRAM_SIZE (~0.15 s), as
 *   `programSizeBound` counts them (never fewer than RE2).
 * Ordinary documents are far below: `Delivery.*` is 10 characters and 15 instructions, a 30-ID
 * alternation ~950 of each.
 */
export const MAX_DOCUMENT_PATTERN_LENGTH = 6_000;
export const MAX_PATTERN_PROGRAM_SIZE = 2_000;
export const MAX_DOCUMENT_PROGRAM_SIZE = 15_000;

/** The first matcher of a document refused (its index among the matchers), and why. */
export interface MatcherRefusal {
  index: number;
  message: string;
}

/**
 * The first regex matcher that takes the document over a bound, read from the text alone (nothing is
 * compiled). Values RE2 refuses count too: parsing them costs as much. A repeated value counts once.
 */
function firstOverBounds(matchers: readonly Matcher[]): MatcherRefusal | undefined {
  const counted = new Set<string>();
  let length = 0;
  let size = 0;
  for (const [index, { op, value }] of matchers.entries()) {
    if (!isRegexOp(op) || counted.has(value)) continue;
    counted.add(value);
    const own = programSizeBound(value);
    length += value.length;
    size += own;
    if (own > MAX_PATTERN_PROGRAM_SIZE) {
      return {
        index,
        message: `compiles to more than ${MAX_PATTERN_PROGRAM_SIZE} RE2 instructions (up to ${own}): use fewer or smaller repeats`,
      };
    }
    if (length > MAX_DOCUMENT_PATTERN_LENGTH) {
      return {
        index,
        message:
          `takes the document's regular expressions over ${MAX_DOCUMENT_PATTERN_LENGTH} characters ` +
          `(${length} so far): shorten or share patterns`,
      };
    }
    if (size > MAX_DOCUMENT_PROGRAM_SIZE) {
      return {
        index,
        message:
          `takes the document's regular expressions over ${MAX_DOCUMENT_PROGRAM_SIZE} RE2 instructions ` +
          `(up to ${size} so far): simplify or share patterns`,
      };
    }
  }
  return undefined;
}

/**
 * Compiles the regex matchers of one document, leaving them cached for `matches`, without holding
 * the event loop for more than a slice (one compile) at a time. Returns the first matcher refused:
 * RE2 cannot compile it, or it takes the document over a bound (then nothing from it on is compiled).
 * Compiling stops at the first value RE2 refuses (one is enough for a 400) unless `keepGoing`: a
 * document stored before RE2 may hold one, and its other patterns are still wanted ready.
 */
export async function compileMatchers(
  matchers: readonly Matcher[],
  { keepGoing = false } = {},
): Promise<MatcherRefusal | undefined> {
  const overBounds = firstOverBounds(matchers);
  let refused: MatcherRefusal | undefined;
  let sliceStart = performance.now();
  for (const [index, { op, value }] of matchers.slice(0, overBounds?.index).entries()) {
    if (!isRegexOp(op)) continue;
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    const pattern = cachedPattern(value);
    if (typeof pattern === 'string') {
      refused ??= { index, message: pattern };
      if (!keepGoing) break;
    }
  }
  return refused ?? overBounds;
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
