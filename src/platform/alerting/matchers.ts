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
 * A matcher's pattern anchored at both ends, as Alertmanager does: `=~ "Deliv"` matches only the
 * value "Deliv", `=~ "Deliv.*"` every value starting with it. JavaScript syntax with the `u` flag
 * (stricter than without it, so typos fail at PUT instead of matching something unexpected).
 */
export function compilePattern(value: string): RegExp {
  return new RegExp(`^(?:${value})$`, 'u');
}

/** Why a regex matcher's value does not compile, or undefined when it does (or is not a regex). */
export function patternError(matcher: Matcher): string | undefined {
  if (!isRegexOp(matcher.op)) return undefined;
  try {
    compilePattern(matcher.value);
    return undefined;
  } catch (error) {
    return `is not a valid regular expression (${(error as Error).message})`;
  }
}

// The engine routes every alert through the same few patterns: compile each once. Bounded, since
// patterns of replaced documents are never asked for again.
const compiled = new Map<string, RegExp>();
const CACHE_LIMIT = 1_000;

function cachedPattern(value: string): RegExp {
  let regex = compiled.get(value);
  if (!regex) {
    if (compiled.size >= CACHE_LIMIT) compiled.clear();
    regex = compilePattern(value);
    compiled.set(value, regex);
  }
  return regex;
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
      return cachedPattern(matcher.value).test(actual);
    case '!~':
      return !cachedPattern(matcher.value).test(actual);
  }
}
