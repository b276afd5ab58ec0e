import { timingSafeEqual } from 'node:crypto';
import { sql, type Expression, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { Type } from 'typebox';
import { isIdOf, type IdPrefix } from '../crypto/ids.js';
import type { Keyring } from '../crypto/keyring.js';
import { HttpProblem } from './problem.js';

/** `?limit=` and `?cursor=` of docs/api/conventions.md; spread into a route's querystring schema. */
const DEFAULT_PAGE_SIZE = 20;

export const PageQueryFields = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_SIZE })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
};

export interface PageQuery {
  limit?: number;
  cursor?: string;
}

/** Position after the last item of a page, newest first: (createdAt, id) strictly decreasing. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

/**
 * The filters a page was read with, each given one by its name and its value in one spelling (a
 * list sorted, a time as `toISOString` writes it), so that two requests meaning the same filter
 * give the same record. A cursor binds them (docs/api/events.md): it is valid only with exactly these.
 */
export type PageFilters = Readonly<Record<string, string>>;

/**
 * The one list a cursor may be used on (docs/api/conventions.md): its name and the IDs that narrow
 * it (the tenant, the connection), and the filters it was read with. Cursors are signed with a key
 * of the keyring, over all of this and the position: one made for another list, with other
 * filters, or by anyone but the service, is refused.
 */
export interface CursorBinding {
  keyring: Keyring;
  /** `['connection-events', tenantId, connectionId]`: the list's name first, then its owners. */
  list: readonly string[];
  filters?: PageFilters;
}

// The signature in a cursor: 22 base64url characters, 128 bits of HMAC-SHA256 (enough against
// forgery; a cursor stays short in a URL).
const TAG_BYTES = 16;
const TAG = /^[A-Za-z0-9_-]{22}$/;

function tagOf(binding: CursorBinding, position: readonly string[]): string {
  const filters = binding.filters ?? {};
  const message = JSON.stringify({
    list: binding.list,
    filters: Object.keys(filters)
      .sort()
      .map((name) => [name, filters[name]]),
    position,
  });
  const mac = binding.keyring.hashToken('cursor', message);
  return Buffer.from(mac, 'hex').subarray(0, TAG_BYTES).toString('base64url');
}

/**
 * A cursor of any list: `position` (what the list pages after, as strings), then its signature for
 * `binding`, as base64url JSON. Lists ordered by `(createdAt, id)` use encodeCursor; a list ordered
 * otherwise (by name, by key) writes its own position with this.
 */
export function encodePosition(position: readonly string[], binding: CursorBinding): string {
  return Buffer.from(JSON.stringify([...position, tagOf(binding, position)])).toString('base64url');
}

const cursorProblem = (message: string) =>
  new HttpProblem('validation_failed', `cursor: ${message}`, {
    errors: [{ path: 'querystring.cursor', message }],
  });

/** The 400 of a cursor this list did not write (its shape, its position), at `querystring.cursor`. */
export const notThisListsCursor = () => cursorProblem('is not a cursor returned by this list');

/**
 * The position of `?cursor=` when it is exactly what encodePosition wrote for `binding` (`length`
 * strings and the signature), else a 400 at `querystring.cursor`. Base64 decoding and JSON.parse both
 * skip what they do not need (padding, spaces, trailing bits, escapes), so the one test of "exactly"
 * is writing the decoded cursor again; the signature is compared in constant time. The caller checks
 * that the position is one its list can hold.
 */
export function decodePosition(value: string, length: number, binding: CursorBinding): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw notThisListsCursor();
  }
  if (!Array.isArray(parsed) || parsed.length !== length + 1) throw notThisListsCursor();
  const parts = parsed as unknown[];
  if (!parts.every((part): part is string => typeof part === 'string')) throw notThisListsCursor();
  const position = parts.slice(0, length);
  const tag = parts[length]!;
  if (!TAG.test(tag) || Buffer.from(JSON.stringify(parts)).toString('base64url') !== value) {
    throw notThisListsCursor();
  }
  const expected = Buffer.from(tagOf(binding, position));
  const given = Buffer.from(tag);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw cursorProblem(
      'was not made by this list with these filters: send the filters it was made with, or start again without a cursor',
    );
  }
  return position;
}

export function encodeCursor(cursor: Cursor, binding: CursorBinding): string {
  return encodePosition([cursor.createdAt.toISOString(), cursor.id], binding);
}

// A cursor holds what encodeCursor wrote: a millisecond UTC timestamp of a four-digit year (the
// extended years JavaScript allows are outside what PostgreSQL parses) and an ID of the list's items.
const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// Every row is stamped from the service's clock, which has not run before the Unix epoch; 9999 is
// the last year of the four-digit form. No tighter bound on "now": clocks are set back, and tests fix them.
const EARLIEST = Date.parse('1970-01-01T00:00:00.000Z');

/**
 * The position a list's `?cursor=` names, or a 400 at `querystring.cursor` unless the text is
 * exactly what encodeCursor wrote for an item of this list (`prefix`: the ID prefix of its items),
 * signed for this list with these filters.
 */
export function decodeCursor(
  value: string | undefined,
  prefix: IdPrefix,
  binding: CursorBinding,
): Cursor | undefined {
  if (value === undefined) return undefined;
  const [at = '', id = ''] = decodePosition(value, 2, binding);
  const createdAt = new Date(at);
  // Round-tripping refuses dates that do not exist (02-30).
  if (
    !CURSOR_TIME.test(at) ||
    Number.isNaN(createdAt.getTime()) ||
    createdAt.toISOString() !== at ||
    createdAt.getTime() < EARLIEST ||
    !isIdOf(prefix, id)
  ) {
    throw notThisListsCursor();
  }
  return { createdAt, id };
}

/** The keyset condition for "after this cursor", newest first. */
export function afterCursor(createdAtColumn: string, idColumn: string, cursor: Cursor): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref(createdAtColumn)}, ${sql.ref(idColumn)}) < (${cursor.createdAt}, ${cursor.id})`;
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * A list route's page, whole: checks `?cursor=` (items' ID prefix `prefix`, signed for `binding`:
 * this list, its owners and its filters), fetches `limit + 1` rows after it with `fetch`, and turns
 * the page's rows into items with `toItems` (which may look up what the items need, once for the
 * page). Every list answers the same way through this; a filtered list passes its filters,
 * normalized, and its cursors carry them.
 */
export async function listPage<R extends { created_at: Date | string; id: string }, T>(
  query: PageQuery,
  prefix: IdPrefix,
  fetch: (limit: number, after: Cursor | undefined) => Promise<R[]>,
  toItems: (rows: R[]) => T[] | Promise<T[]>,
  binding: CursorBinding,
): Promise<Page<T>> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  // One row more than the page: it only says whether another page follows.
  const rows = await fetch(limit, decodeCursor(query.cursor, prefix, binding));
  const pageRows = rows.slice(0, limit);
  const last = pageRows[pageRows.length - 1];
  return {
    data: await toItems(pageRows),
    nextCursor:
      rows.length > limit && last
        ? encodeCursor({ createdAt: new Date(last.created_at), id: last.id }, binding)
        : null,
  };
}

/**
 * One page of a list, newest first: the rows after the cursor, ordered by `(created_at, id)`
 * descending, one more than `limit` so the caller knows whether another page follows. `table`
 * qualifies the columns when the query joins others.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any table with created_at and id
export function newestFirstPage<Q extends SelectQueryBuilder<any, any, any>>(
  query: Q,
  limit: number,
  after: Cursor | undefined,
  table?: string,
): Q {
  const createdAt = table ? `${table}.created_at` : 'created_at';
  const id = table ? `${table}.id` : 'id';
  const from = after ? query.where(afterCursor(createdAt, id, after)) : query;
  return from
    .orderBy(sql.ref(createdAt), 'desc')
    .orderBy(sql.ref(id), 'desc')
    .limit(limit + 1) as Q;
}
