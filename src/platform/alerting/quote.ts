// Characters that break a line or hide text: controls (C0, DEL, C1), format characters (bidi
// overrides, zero-width), line and paragraph separators, surrogates, private use, unassigned, and
// every space but U+0020. `<`, `>` and `&` are markup in HTML and in Slack (links, mentions).
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}<>&]/gu;
const SHORT: Readonly<Record<string, string>> = {
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\f': '\\f',
  '\r': '\\r',
};

const escapeChar = (char: string): string => {
  if (char === ' ') return char;
  const short = SHORT[char];
  if (short) return short;
  // UTF-16 units, as JSON writes them: an astral character becomes its surrogate pair.
  return [...Array(char.length).keys()]
    .map((i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`)
    .join('');
};

/**
 * Text on one line, whatever it holds: every character that could break the line, hide what
 * follows or act as markup is written as its JSON escape. For any value put in a line of a
 * notification, as the last guard; text a tenant wrote goes through `quoted` first.
 */
export const inline = (text: string): string => text.replace(UNSAFE, escapeChar);

// Display names are at most 200 characters; this bounds text from any other source.
const MAX_QUOTED = 200;

/**
 * Text a tenant wrote (a display name, an event type), as it may appear in an operator
 * notification (docs/api/limits.md): a JSON string literal, with markup characters escaped as well
 * (`\u003c` for `<`, as Go's encoding/json writes it), so it reads as data, never as a line, a
 * link or a mention of its own. Longer text is cut, the cut shown outside the quotes.
 */
export function quoted(text: string): string {
  const chars = [...text];
  const kept = chars.length > MAX_QUOTED ? chars.slice(0, MAX_QUOTED).join('') : text;
  const literal = `"${inline(kept.replace(/[\\"]/g, (c) => `\\${c}`))}"`;
  return chars.length > MAX_QUOTED ? `${literal}…` : literal;
}
