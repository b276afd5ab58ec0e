import {
  MAX_DOCUMENT_PATTERN_LENGTH,
  MAX_DOCUMENT_PROGRAM_SIZE,
  MAX_PATTERN_PROGRAM_SIZE,
} from '../src/platform/alerting/matchers.js';
import { programSizeBound } from '../src/platform/alerting/program-size.js';

/**
 * The worst inputs the limits of docs/api/limits.md allow for user-supplied patterns, shared by
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
  // The longest program one value may compile to: 5 instructions a copy.
  `(\\pL|\\pN){${Math.floor((MAX_PATTERN_PROGRAM_SIZE - 5) / 5)}}`,
];

/** A label value as the alert engine makes them: a tenant ID. */
export const worstRoutingLabel = (): string => `ten_${'a'.repeat(26)}`;

/**
 * The outside review's routing document: `rules` rules of 20 `=~` matchers of ~990 characters of
 * case-folded Unicode classes (the most parsing per character), every value distinct. Refused by RE2
 * at its very end (`\p_<id>`) unless `valid`. Each took ~45 ms to parse: the review's 760 took 33 s.
 */
export function longRoutingRegexRules(rules: number, valid: boolean, salt = ''): unknown[] {
  return Array.from({ length: rules }, (_, r) => ({
    name: `long ${r}`,
    matchers: Array.from({ length: 20 }, (_, m) => ({
      name: 'alertname',
      op: '=~',
      // `\p_` is never a class; `\p` and a random salt would be one whenever the salt began `L`, `N`….
      value: `(?i)${'\\pL'.repeat(325)}${valid ? 'x' : '\\p_'}${salt}${r}y${m}`,
    })),
    channelIds: [],
  }));
}

const CLASSES = '[\\pL\\pN\\pM\\pS]';

/**
 * The distinct routing regexes of the costliest document the bounds allow: the most parsing per
 * character (`(?i)\pL…` of 1,000 characters) up to MAX_DOCUMENT_PATTERN_LENGTH, with the most
 * compiling per instruction (`(?i)(?:[\pL\pN\pM\pS]){n}` of ~MAX_PATTERN_PROGRAM_SIZE instructions) up
 * to MAX_DOCUMENT_PROGRAM_SIZE. `salt` keeps them out of a cache that saw them before.
 */
export function costliestRoutingRegexes(salt: string): string[] {
  const values: string[] = [];
  let length = 0;
  let size = 0;
  const fits = (value: string) =>
    length + value.length <= MAX_DOCUMENT_PATTERN_LENGTH &&
    size + programSizeBound(value) <= MAX_DOCUMENT_PROGRAM_SIZE;
  const add = (value: string) => {
    values.push(value);
    length += value.length;
    size += programSizeBound(value);
  };
  const wide = (i: number) => {
    const head = `(?i)${salt}${i}`;
    // RE2 repeats at most 1000 times: as many repeats of 1000 as fit, then the rest.
    const repeats = (n: number): string =>
      n > 1000 ? `${CLASSES}{1000}${repeats(n - 1002)}` : `${CLASSES}{${n}}`;
    return head + repeats(MAX_PATTERN_PROGRAM_SIZE - programSizeBound(head) - 2);
  };
  const long = (i: number) => {
    const head = `(?i)${salt}${i}`;
    const room = Math.min(1000, MAX_DOCUMENT_PATTERN_LENGTH - length);
    return head + '\\pL'.repeat(Math.max(0, Math.floor((room - head.length) / 3)));
  };
  // The long values compile to about one instruction per 3 characters: leave them that many.
  const reserved = MAX_DOCUMENT_PATTERN_LENGTH / 3;
  while (size + programSizeBound(wide(values.length)) <= MAX_DOCUMENT_PROGRAM_SIZE - reserved)
    add(wide(values.length));
  while (length < MAX_DOCUMENT_PATTERN_LENGTH - 10 && fits(long(values.length))) add(long(values.length));
  while (fits(wide(values.length))) add(wide(values.length));
  return values;
}
