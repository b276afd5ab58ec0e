/**
 * The worst inputs the limits of contract §14 allow for user-supplied patterns, shared by
 * bench/patterns.ts and the tests that hold hubgate to "milliseconds" with them.
 */

/**
 * 20 distinct `eventTypes` patterns of 100 characters: stars between single letters (the classic
 * catastrophic case for a backtracking RegExp: every star tries every split) and stars between short
 * pieces that occur almost everywhere in the type (the most searching for a piece-by-piece matcher).
 * None matches `worstEventType()`, so every one of them runs to its end on each publish.
 */
export function worstEventTypePatterns(): string[] {
  const last = 'bcdefghijklmnopqrstuvwxyz';
  return Array.from({ length: 20 }, (_, i) =>
    i % 2 === 0 ? `*${'a*'.repeat(49)}${last[i]}` : `*${'aab*'.repeat(24)}aa${last[i]}`,
  );
}

/** A 100-character event type that every star-between-letters pattern almost matches. */
export const worstEventType = (): string => 'a'.repeat(100);

/**
 * Routing matcher values (`=~`) that make a backtracking engine explode or a linear one work hardest:
 * nested quantifiers (the finding: `(.+)+\W` on a tenant ID took 3.3 s), and long programs of
 * Unicode classes (RE2's cost grows with the program, not the input's splits).
 */
export const worstRoutingRegexes = (): string[] => [
  '(.+)+\\W',
  '(?:(?:ten_)*[a-zA-Z0-9]*)*!',
  `(\\pL|\\pN){${1000 - '(\\pL|\\pN){}'.length - 3}}`,
];

/** A label value as the alert engine makes them: a tenant ID. */
export const worstRoutingLabel = (): string => `ten_${'a'.repeat(26)}`;
