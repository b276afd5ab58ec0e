import { RE2JS } from 're2js';

/**
 * A schema's `pattern`s and `patternProperties` keys, matched by RE2 with bounded work
 * (docs/decisions/0061-pattern-size-and-format-cost.md).
 *
 * RE2's time is linear in the string, but its factor is the size of the compiled program: re2js's
 * DFA builds a state of up to every instruction per character it has not seen in that context, and
 * its NFA steps every instruction per character. `.{1,1000}.{1,1000}.{1,1000}!` is 6,000 instructions,
 * and one 250,000-character string held the process for 95 s. So a program is bounded when it is
 * saved, and every match runs under a clock it cannot outlast.
 */

/** A pattern compiled to more RE2 instructions than this is refused when saved (docs/api/limits.md). */
export const MAX_PATTERN_STATES = 1_000;

/** Thrown from inside a match that has run past the clock's deadline. */
export class PatternTimeout extends Error {}

/**
 * When the match running now must stop: at `deadline` (`performance.now()` milliseconds, the wall
 * clock's backstop) or once this thread's CPU time (`threadCpuMicros`) passes `cpuDeadline`. Set by the
 * validation around it; Infinity outside one. Matching is synchronous: one match at a time per thread.
 */
export const patternClock = {
  deadline: Number.POSITIVE_INFINITY,
  cpuDeadline: Number.POSITIVE_INFINITY,
};

/**
 * The CPU time this thread has run, in microseconds. A match's share is reckoned in it, not in wall
 * time: on a loaded machine the thread waits for a core, or a GC pause stops it, and a wall-clock
 * share then refused a 200,000-character field that needs a few milliseconds of matching
 * (docs/decisions/0061-pattern-size-and-format-cost.md).
 */
export function threadCpuMicros(): number {
  const { user, system } = process.threadCpuUsage();
  return user + system;
}

// How often a match looks at the clock: after about this many instructions' worth of characters, so
// that the work between two looks (a new DFA state of every instruction per character, at worst) is
// well under a millisecond, while a small program looks rarely enough to cost nothing.
const STATES_BETWEEN_LOOKS = 4_096;

let stepsLeft = 0;
let stepsPerLook = 1;

function look(): void {
  if (performance.now() > patternClock.deadline || threadCpuMicros() > patternClock.cpuDeadline) {
    throw new PatternTimeout();
  }
  stepsLeft = stepsPerLook;
}

interface MachineInput {
  step(pos: number): number;
}
type MachineInputClass = new (text: string, start: number, end: number) => MachineInput;

interface Re2Program {
  numberOfInstructions(): number;
  executeEngine(input: MachineInput, pos: number, anchor: number, ncap: number): unknown;
  match(text: string): boolean;
}

/**
 * The class through which re2js's engines read a string, a character per `step`: every engine (DFA,
 * NFA, backtracker, one-pass) calls it for each character it reads. re2js does not export it, so it
 * is caught once from a match of its own; a re2js whose internals moved fails here at start-up (and in
 * the tests) rather than running matches without a clock.
 */
function inputClass(): MachineInputClass {
  const probe = RE2JS.compile('x').re2Input as unknown as Re2Program;
  let caught: unknown;
  Object.defineProperty(probe, 'executeEngine', {
    value: (input: object) => {
      caught = input.constructor;
      return null;
    },
  });
  probe.match('x');
  const found = caught as ((...args: unknown[]) => unknown) | undefined;
  const prototype = found?.prototype as { step?: unknown } | undefined;
  if (typeof found !== 'function' || typeof prototype?.step !== 'function') {
    throw new Error('re2js: the string input class was not found; hubgate cannot bound pattern matches');
  }
  return found as unknown as MachineInputClass;
}

const Utf16Input = inputClass();

/** The input class with a look at the clock every `stepsPerLook` characters read. */
class ClockedInput extends Utf16Input {
  override step(pos: number): number {
    if (--stepsLeft <= 0) look();
    return super.step(pos);
  }
}

// re2js's RE2.UNANCHORED: JSON Schema's `pattern` is searched anywhere in the string, as `test` does.
const UNANCHORED = 0;

export interface BoundedPattern {
  /** The compiled program's instructions: its states, in the budget's `states × length`. */
  readonly states: number;
  /** Whether the pattern occurs in `text`; throws PatternTimeout past `patternClock.deadline`. */
  test(text: string): boolean;
}

/**
 * An upper bound on the instructions RE2 compiles `pattern` to, read from its text without compiling
 * it: compiling costs about 20 µs per instruction, and RE2 accepts programs of over a million (a
 * 2,700-character pattern of `.{1,1000}`s took 3 s), so a pattern is compiled only when this is small.
 * Each literal, class, `.` or assertion counts 1, a group 2 (its captures), `*` `+` `?` and `|` 1
 * more, and `{m,n}` m copies and n − m optional ones, as RE2's simplifier expands it.
 */
export function estimatedStates(pattern: string): number {
  const reader = { pattern, at: 0 };
  let size = 0;
  // A `)` with no `(` is RE2's error to report; the count goes on past it.
  while (reader.at < pattern.length) {
    size += alternation(reader);
    reader.at += 1;
  }
  return size;
}

interface Reader {
  pattern: string;
  at: number;
}

const peek = (r: Reader) => r.pattern[r.at];

function alternation(r: Reader): number {
  let size = concatenation(r);
  while (peek(r) === '|') {
    r.at += 1;
    size += 1 + concatenation(r);
  }
  return size;
}

function concatenation(r: Reader): number {
  let size = 0;
  while (r.at < r.pattern.length && peek(r) !== '|' && peek(r) !== ')') size += quantified(r, atom(r));
  return size;
}

function atom(r: Reader): number {
  const c = r.pattern[r.at++];
  if (c === '(') return group(r);
  if (c === '[') {
    skipClass(r);
    return 1;
  }
  if (c !== '\\') return 1;
  const escaped = r.pattern[r.at++];
  if (escaped === 'Q') {
    const end = r.pattern.indexOf('\\E', r.at);
    const literal = (end === -1 ? r.pattern.length : end) - r.at;
    r.at = end === -1 ? r.pattern.length : end + 2;
    return literal;
  }
  if ((escaped === 'p' || escaped === 'P' || escaped === 'x') && peek(r) === '{') {
    r.at = r.pattern.indexOf('}', r.at) + 1 || r.pattern.length;
  }
  return 1;
}

/** After `(`: `(?:`, `(?P<name>`, `(?<name>`, `(?i:` are skipped to their `:` or `>`; `(?i)` is empty. */
function group(r: Reader): number {
  if (peek(r) === '?') while (r.at < r.pattern.length && !':>)'.includes(peek(r) ?? '')) r.at += 1;
  if (peek(r) === ')') {
    r.at += 1;
    return 0;
  }
  if (peek(r) === ':' || peek(r) === '>') r.at += 1;
  const inner = alternation(r);
  r.at += 1;
  return inner + 2;
}

/** After `[`: to the `]` that closes the class (a first `]` is literal; `[:alpha:]` is one item). */
function skipClass(r: Reader): void {
  if (peek(r) === '^') r.at += 1;
  if (peek(r) === ']') r.at += 1;
  while (r.at < r.pattern.length && peek(r) !== ']') {
    if (peek(r) === '\\') r.at += 1;
    else if (r.pattern.startsWith('[:', r.at)) r.at = Math.max(r.at, r.pattern.indexOf(':]', r.at + 2) + 1);
    r.at += 1;
  }
  r.at += 1;
}

const REPEAT = /^\{(\d+)(,(\d*))?\}/;

function quantified(r: Reader, atomSize: number): number {
  let size = atomSize;
  for (;;) {
    const c = peek(r);
    if (c === '*' || c === '+' || c === '?') {
      r.at += 1;
      size += 1;
    } else if (c === '{') {
      const repeat = REPEAT.exec(r.pattern.slice(r.at, r.at + 24));
      if (!repeat) return size;
      r.at += repeat[0].length;
      const min = Number(repeat[1]);
      const max = repeat[2] === undefined ? min : repeat[3] === '' ? undefined : Number(repeat[3]);
      size = max === undefined ? min * size + size + 1 : min * size + (max - min) * (size + 1);
    } else return size;
    if (peek(r) === '?') r.at += 1;
  }
}

// Patterns compiled once per process each (a schema's patterns are compiled by the check, for its
// costs and by ajv), the least recently used first out past the bound.
const compiledPatterns = new Map<string, BoundedPattern>();
const COMPILED_LIMIT = 2_000;

/** Compiles `pattern` by RE2 (throws RE2JSException when RE2 refuses it). */
export function compilePattern(pattern: string): BoundedPattern {
  const cached = compiledPatterns.get(pattern);
  if (cached) {
    compiledPatterns.delete(pattern);
    compiledPatterns.set(pattern, cached);
    return cached;
  }
  const compiled = compileNew(pattern);
  if (compiledPatterns.size >= COMPILED_LIMIT)
    compiledPatterns.delete(compiledPatterns.keys().next().value ?? '');
  compiledPatterns.set(pattern, compiled);
  return compiled;
}

function compileNew(pattern: string): BoundedPattern {
  const program = RE2JS.compile(pattern).re2Input as unknown as Re2Program;
  const states = program.numberOfInstructions();
  const perLook = Math.max(1, Math.floor(STATES_BETWEEN_LOOKS / states));
  return {
    states,
    test(text) {
      stepsPerLook = perLook;
      stepsLeft = perLook;
      // What `RE2JS.test` does (no captures, so the DFA when it can), reading through the clock.
      return program.executeEngine(new ClockedInput(text, 0, text.length), 0, UNANCHORED, 0) !== null;
    },
  };
}
