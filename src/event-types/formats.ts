import addFormatsModule, { type FormatName } from 'ajv-formats';
import type { Ajv2020 } from 'ajv/dist/2020.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const plugin = addFormatsModule as unknown as {
  (ajv: Ajv2020): Ajv2020;
  get: (format: FormatName) => unknown;
};

/**
 * The `format`s a schema may use, each checked in time linear in the string and charged at its real
 * cost (docs/decisions/0061-pattern-size-and-format-cost.md). ajv-formats' own checks are regular
 * expressions run by JavaScript's backtracking engine: most are linear (measured with the strings of
 * test/event-types/pattern-and-format-cost.test.ts), but `url`'s is not — 250,000 characters held the
 * process for 47.9 s — so it is replaced by a check of ours. A format whose values have a length in
 * their standard (a date, an address, a host name) refuses a longer string before its check runs.
 *
 * `perChar` is the check's cost per character in the units of schemas.ts (about 10 ns each), the worst
 * measured over the hostile strings with a margin; `maxLength` caps what is scanned.
 */
interface FormatCost {
  perChar: number;
  maxLength?: number;
}

const FORMAT_COSTS: Record<string, FormatCost> = {
  // RFC 3339: a full-date is 10 characters; times with fractions and offsets well under 100.
  date: { perChar: 1, maxLength: 10 },
  time: { perChar: 4, maxLength: 100 },
  'date-time': { perChar: 4, maxLength: 100 },
  'iso-time': { perChar: 4, maxLength: 100 },
  'iso-date-time': { perChar: 4, maxLength: 100 },
  duration: { perChar: 2, maxLength: 100 },
  uri: { perChar: 8 },
  'uri-reference': { perChar: 14 },
  'uri-template': { perChar: 2 },
  url: { perChar: 14 },
  email: { perChar: 6 },
  // RFC 1035: 253 characters, and a trailing dot.
  hostname: { perChar: 2, maxLength: 254 },
  ipv4: { perChar: 1, maxLength: 15 },
  // The longest: eight groups, or six and an IPv4 address (45 characters).
  ipv6: { perChar: 1, maxLength: 45 },
  uuid: { perChar: 1, maxLength: 45 },
  regex: { perChar: 2 },
  'json-pointer': { perChar: 2 },
  'json-pointer-uri-fragment': { perChar: 4 },
  'relative-json-pointer': { perChar: 4 },
  byte: { perChar: 10 },
};

// Checks of numbers (a number's size is bounded) and formats that check nothing.
const FREE_FORMATS: FormatName[] = ['int32', 'int64', 'float', 'double', 'password', 'binary'];

/** What checking `length` characters against `format` costs, in schemas.ts's units. */
export function formatCost(format: string, length: number): number {
  const cost = FORMAT_COSTS[format];
  if (!cost) return 0;
  return cost.perChar * Math.min(length, (cost.maxLength ?? length) + 1);
}

/** The names a schema's `format` may take. */
export const KNOWN_FORMATS: ReadonlySet<string> = new Set([...Object.keys(FORMAT_COSTS), ...FREE_FORMATS]);

type Check = (text: string) => boolean;

/** ajv-formats' check of `name`, as a function of the string. */
function ajvCheck(name: FormatName): {
  check: Check;
  compare?: (a: string, b: string) => number | undefined;
} {
  const format = plugin.get(name) as
    RegExp | Check | { validate: RegExp | Check; compare?: (a: string, b: string) => number | undefined };
  const definition =
    typeof format === 'object' && !(format instanceof RegExp) ? format : { validate: format };
  const { validate, compare } = definition;
  const check: Check = validate instanceof RegExp ? (text) => validate.test(text) : validate;
  return compare ? { check, compare } : { check };
}

// `url` (ajv-formats: dperini's expression): http, https or ftp; `//`; an optional user part before
// `@`; a public IPv4 address or a domain name with a top-level domain of letters; an optional port of
// 2–5 digits; an optional path from `/`; no white space anywhere. The same rules, each a scan of the
// string or of one of its parts, none of which backtracks.
const URL_SCHEME = /^(?:https?|ftp):\/\//i;
const WHITE_SPACE = /\s/u;
const PORT = /^\d{2,5}$/;

function isLabelCharacter(code: number, digits: boolean): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (digits && code >= 0x30 && code <= 0x39) ||
    // \u00a1–\uffff, as the original (with the `u` flag, so no lone surrogate halves).
    (code >= 0xa1 && code <= 0xffff && (code < 0xd800 || code > 0xdfff))
  );
}

/** A label: runs of letters, digits or non-ASCII letters joined by single hyphens. */
function isLabel(label: string): boolean {
  if (label.length === 0) return false;
  let previousHyphen = true;
  for (const character of label) {
    const code = character.codePointAt(0) ?? 0;
    if (character === '-') {
      if (previousHyphen) return false;
      previousHyphen = true;
    } else if (isLabelCharacter(code, true)) previousHyphen = false;
    else return false;
  }
  return !previousHyphen;
}

function isTopLevelDomain(label: string): boolean {
  let count = 0;
  for (const character of label) {
    if (!isLabelCharacter(character.codePointAt(0) ?? 0, false)) return false;
    count += 1;
  }
  return count >= 2;
}

function isPublicIPv4(host: string): boolean {
  if (host.length > 15 || !/^\d{1,3}(?:\.\d{1,3}){3}$/.test(host)) return false;
  const [a = 0, b = 0, , d = 0] = host.split('.').map(Number);
  if (host.split('.').some((octet) => Number(octet) > 255 || (octet.length > 1 && octet.startsWith('0')))) {
    return false;
  }
  if (a < 1 || a > 223 || d < 1 || d > 254) return false;
  // Private, loopback and link-local ranges, as the original refuses them.
  return !(
    a === 10 ||
    a === 127 ||
    (a === 169 && b === 254) ||
    (a === 192 && b === 168) ||
    (a === 172 && b >= 16 && b <= 31)
  );
}

export function isUrl(text: string): boolean {
  const scheme = URL_SCHEME.exec(text);
  if (!scheme || WHITE_SPACE.test(text)) return false;
  const rest = text.slice(scheme[0].length);
  const slash = rest.indexOf('/');
  const authority = slash === -1 ? rest : rest.slice(0, slash);
  const at = authority.lastIndexOf('@');
  if (at === 0) return false;
  const hostAndPort = authority.slice(at + 1);
  const colon = hostAndPort.lastIndexOf(':');
  const host = colon === -1 ? hostAndPort : hostAndPort.slice(0, colon);
  if (colon !== -1 && !PORT.test(hostAndPort.slice(colon + 1))) return false;
  if (isPublicIPv4(host)) return true;
  const labels = host.split('.');
  const top = labels.pop() ?? '';
  return labels.length > 0 && labels.every(isLabel) && isTopLevelDomain(top);
}

/**
 * Adds every known format to `ajv`: ajv-formats' (for the number formats and the `formatMinimum`
 * keywords), then ours over the string ones, each refusing a string over its length first.
 */
export function addBoundedFormats(ajv: Ajv2020): Ajv2020 {
  plugin(ajv);
  for (const [name, cost] of Object.entries(FORMAT_COSTS)) {
    const { check, compare } = ajvCheck(name as FormatName);
    const inner = name === 'url' ? isUrl : check;
    const max = cost.maxLength;
    const validate = max === undefined ? inner : (text: string) => text.length <= max && inner(text);
    ajv.addFormat(name, compare ? { type: 'string', validate, compare } : { type: 'string', validate });
  }
  return ajv;
}
