import { fieldProblem } from './problem.js';

/**
 * The one reader of RFC 3339 times a client sends (docs/api/conventions.md), in a body, a query or
 * on the command line: `2026-12-07T10:00:00Z`, `2026-12-07T11:00:00.5+01:00`. It refuses what it
 * cannot represent rather than guessing: a leap second (`23:59:60`: JavaScript and PostgreSQL have
 * none, and `Date` rolls it into the next minute or gives an invalid date), a space for the `T`
 * (RFC 3339 allows it only as a note, ajv-formats and `Date.parse` take it), a day its month does not
 * have (`2024-02-30`), hour 24, a time without an offset (local time of which clock?), an offset past
 * ±23:59, a year of other than four digits.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/**
 * The same shape as a JSON Schema `pattern`, written into every `date-time` field of the OpenAPI
 * document beside the format, so that the document refuses what the service refuses: its format
 * alone (as ajv-formats and most validators read it) takes a leap second and a space. The ranges are
 * in the pattern; only "the day its month has" is left to the server's check.
 */
export const RFC3339_PATTERN =
  '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])[Tt]([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?([Zz]|[+-]([01]\\d|2[0-3]):[0-5]\\d)$';

const MINUTE_MS = 60_000;
// The instants the four-digit form writes, which both engines store and read alike. An offset can
// move a time written in 0000 or 9999 up to a day past them: such an instant reads as the nearest end,
// which means the same to a bound (`until` of 9999-12-31T23:59:59-23:59 is "all of it") and is
// refused anyway where a time must be near now (a key's expiry, recover's `since`).
// setUTCFullYear, not Date.UTC: Date.UTC reads the years 0–99 as 1900–1999.
const FIRST_INSTANT = new Date(0).setUTCFullYear(0, 0, 1);
const LAST_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The instant `text` names, or undefined when it is not an RFC 3339 time this service can represent.
 * Times carry milliseconds: a finer fraction is cut (`'down'`, the default) or, with `'up'`, rounded
 * up to the next millisecond, which keeps the same rows on each side of a `since` or `until` bound.
 */
export function parseRfc3339(text: string, rounding: 'down' | 'up' = 'down'): Date | undefined {
  // The length first: nothing longer is a time, and the expression never sees a megabyte.
  if (text.length > 35) return undefined;
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction = '', sign, offsetHours = '0', offsetMinutes = '0'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const zoneHours = Number(offsetHours);
  const zoneMinutes = Number(offsetMinutes);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || zoneHours > 23 || zoneMinutes > 59) return undefined;
  const finer = rounding === 'up' && /[1-9]/.test(fraction.slice(3)) ? 1 : 0;
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute, second, Number(fraction.slice(0, 3).padEnd(3, '0')) + finer);
  const offset = (sign === '-' ? -1 : 1) * (zoneHours * 60 + zoneMinutes);
  return new Date(Math.min(LAST_INSTANT, Math.max(FIRST_INSTANT, at.getTime() - offset * MINUTE_MS)));
}

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** What the 400 says of a time `parseRfc3339` refused. */
export const NOT_RFC3339 = 'must be an RFC 3339 time such as 2026-12-07T10:00:00Z (no leap second)';

/** The instant of a time field the schema let through, or the 400 naming the field (`since`, `querystring.until`). */
export function timeField(text: string, path: string, rounding: 'down' | 'up' = 'down'): Date {
  const at = parseRfc3339(text, rounding);
  if (!at) throw fieldProblem(path, NOT_RFC3339);
  return at;
}

/** ajv's `date-time` format, replacing ajv-formats' (which takes `23:59:60` and a space): this parser. */
export const dateTimeFormat = {
  type: 'string' as const,
  validate: (text: string) => parseRfc3339(text) !== undefined,
};
