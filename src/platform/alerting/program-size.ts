/**
 * An upper bound of the RE2 instructions an expression compiles to, read from its text alone, so
 * that what would take long to compile is refused before it is compiled. Compile time grows with the
 * program (up to ~10 µs per instruction for case-folded Unicode classes), and a short text can make a
 * long program: `(?:\pL…){1000}` of 310 characters compiles to 100,000 instructions in about a second.
 *
 * RE2's own estimate (`calcSize` in Go's regexp/syntax) on a rough reading of the syntax: every atom
 * (a character, an escape, a class) is one instruction, an operator adds its overhead, a group its
 * contents, and only a repeat `{n,m}` multiplies, copying its atom up to m times. Where the reading is
 * rough it only over-counts (a `{…}` that RE2 reads as text still counts as a repeat), so the bound
 * holds for every expression RE2 accepts; text RE2 refuses never reaches the compiler.
 */
export function programSizeBound(source: string): number {
  const reader = new SizeReader();
  let i = 0;
  while (i < source.length) i = reader.step(source, i);
  return reader.total();
}

interface Group {
  /** Alternatives already closed by `|`, with one instruction each for the split. */
  done: number;
  /** The open alternative. */
  alt: number;
  /** The last atom, which a repeat copies. */
  last: number;
  /** 2 instructions to record where a capturing group starts and ends; none for `(?:…)`. */
  capture: number;
}

const REPEAT = /^\{(\d+)(,(\d*))?\}/;
// What may follow `(?` before a group's contents: flags (`(?i)`, `(?i:`), or a capture name.
const GROUP_PREFIX = /^\(\?(?:[A-Za-z-]*[:)]|P?<[A-Za-z0-9_]*>)/;

class SizeReader {
  // The whole expression is group 0, captured.
  private readonly groups: Group[] = [{ done: 0, alt: 0, last: 0, capture: 2 }];

  private get group(): Group {
    return this.groups[this.groups.length - 1] ?? { done: 0, alt: 0, last: 0, capture: 0 };
  }

  private atom(size: number): void {
    this.group.alt += size;
    this.group.last = size;
  }

  total(): number {
    // Groups left open (RE2 refuses them) count as closed; 2 for the program's fail and match.
    return this.groups.reduce((sum, group) => sum + group.done + group.alt + group.capture, 2);
  }

  /** Reads one token at `i`; returns where the next starts. */
  step(source: string, i: number): number {
    const c = source[i];
    if (c === '\\') return this.escape(source, i);
    if (c === '[') {
      this.atom(1);
      return classEnd(source, i);
    }
    if (c === '(') return this.open(source, i);
    if (c === ')' && this.groups.length > 1) {
      const closed = this.groups.pop() ?? this.group;
      this.atom(Math.max(1, closed.done + closed.alt + closed.capture));
      return i + 1;
    }
    if (c === '|') {
      this.group.done += this.group.alt + 1;
      this.group.alt = 0;
      this.group.last = 0;
      return i + 1;
    }
    if (c === '*' || c === '+' || c === '?') {
      this.group.alt += 2;
      return i + 1;
    }
    const repeat = c === '{' ? REPEAT.exec(source.slice(i, i + 16)) : null;
    if (repeat) {
      this.repeat(
        Number(repeat[1]),
        repeat[2] === undefined ? Number(repeat[1]) : repeat[3] ? Number(repeat[3]) : null,
      );
      return i + repeat[0].length;
    }
    this.atom(1);
    return i + 1;
  }

  /** `{min,max}` (max null: unbounded) copies the last atom max times (min + 1 when unbounded). */
  private repeat(min: number, max: number | null): void {
    const last = this.group.last;
    const size = max === null ? (min + 1) * last + 2 : Math.max(1, max) * last + Math.max(0, max - min) + 1;
    this.group.alt += size - last;
    this.group.last = size;
  }

  private open(source: string, i: number): number {
    const prefix = GROUP_PREFIX.exec(source.slice(i, i + 40));
    // `(?i)` sets flags for the rest of the group it is in: no group, no atom.
    if (prefix?.[0].endsWith(')')) return i + prefix[0].length;
    const capture = !prefix || prefix[0].endsWith('>') ? 2 : 0;
    this.groups.push({ done: 0, alt: 0, last: 0, capture });
    return i + (prefix ? prefix[0].length : 1);
  }

  private escape(source: string, i: number): number {
    if (source[i + 1] === 'Q') {
      // Quoted text: every character a literal; counted as one atom that a repeat copies whole.
      const end = source.indexOf('\\E', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      this.atom(Math.max(1, stop - i));
      return stop;
    }
    this.atom(1);
    return escapeEnd(source, i);
  }
}

/** Where the escape at `i` ends: `\p{Greek}`, `\x{41}` and `\pL` are one atom each. */
function escapeEnd(source: string, i: number): number {
  const next = source[i + 1];
  if ((next === 'p' || next === 'P' || next === 'x') && source[i + 2] === '{') {
    const end = source.indexOf('}', i + 3);
    return end < 0 ? source.length : end + 1;
  }
  return next === 'p' || next === 'P' ? i + 3 : i + 2;
}

/** Where the class opened at `start` ends, as RE2 reads it: `]` first is literal, `\` escapes, `[:…:]`. */
function classEnd(source: string, start: number): number {
  let i = start + 1;
  if (source[i] === '^') i += 1;
  if (source[i] === ']') i += 1;
  while (i < source.length) {
    const c = source[i];
    if (c === ']') return i + 1;
    if (c === '\\') i = escapeEnd(source, i);
    else if (c === '[' && source[i + 1] === ':') {
      const end = source.indexOf(':]', i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else i += 1;
  }
  return source.length;
}
