import { Type } from 'typebox';

/** An event type as publishers send it (docs/api/events.md). */
export const EVENT_TYPE_PATTERN = '^[a-z0-9_.-]{1,100}$';

/** Bounds of a connection's `eventTypes` (docs/api/limits.md): each publish runs every pattern once. */
const MAX_EVENT_TYPE_PATTERNS = 20;
const MAX_EVENT_TYPE_PATTERN_LENGTH = 100;

/**
 * `eventTypes` of a connection: patterns where `*` stands for any run of characters, so
 * `employee.*` takes `employee.created` and `employee.contract.signed`, and `*` takes everything.
 * Absent means every type.
 */
export const EventTypePatterns = Type.Array(
  Type.String({
    pattern: `^[a-z0-9_.*-]{1,${MAX_EVENT_TYPE_PATTERN_LENGTH}}$`,
    description: 'an event type, `*` matching any run',
  }),
  {
    minItems: 1,
    maxItems: MAX_EVENT_TYPE_PATTERNS,
    uniqueItems: true,
    description: `patterns such as employee.*; default all (at most ${MAX_EVENT_TYPE_PATTERNS})`,
  },
);

/**
 * Whether `text` is `pattern` with each `*` replaced by some run of characters. The pieces between
 * stars must appear in order; placing each at its leftmost occurrence after the previous one never
 * loses a match, so there is nothing to backtrack into: at most one scan of `text` per piece, unlike
 * a RegExp, which tries every split of every star (seconds for `*a*a*a*a*a*b` against `a`×100).
 */
function globMatches(pattern: string, text: string): boolean {
  const pieces = pattern.split('*');
  const first = pieces[0] ?? '';
  if (pieces.length === 1) return first === text;
  const last = pieces[pieces.length - 1] ?? '';
  const end = text.length - last.length;
  if (end < first.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const piece = pieces[i] ?? '';
    const found = text.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

export function eventTypeMatches(patterns: readonly string[] | undefined, type: string): boolean {
  if (!patterns) return true;
  return patterns.some((pattern) => globMatches(pattern, type));
}
