import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import secureJson from 'secure-json-parse';
import { fieldProblem, HttpProblem } from './problem.js';
import { NOT_UTF8, printable, textProblem } from './text.js';

/**
 * How deep JSON a client sends may nest, `{}` being one level: the one limit of the API
 * (docs/api/errors.md). Event `data`, the only free-form JSON a body takes, is held to it where it
 * is checked (delivery/publish.ts); every other field has a schema that nests far less.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Bodies nested far past the limit are refused as they are read, before they are parsed: then
 * everything that walks a parsed body recursively (JSON.stringify on the way to the database
 * overflows its stack at ~4,500 levels, the text check, ajv) is safe. Twice the limit leaves room
 * for the envelope around free-form JSON (a batch's `events[i].data`), so that an event nested just
 * past the limit is refused on its own, as if published alone; either way the refusal states the
 * one limit (it is passed by anything refused here).
 */
const SCAN_DEPTH = 2 * MAX_JSON_DEPTH;

/** The 400 for JSON nested past the limit, naming the field it is under. */
export const nestingProblem = (field: string) =>
  fieldProblem(field, `nests deeper than ${MAX_JSON_DEPTH} levels`);

const MAYBE_NOT_TEXT = /\\u(?:0000|d[89a-f])/i;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPENERS = new Set([0x5b, 0x7b]);
const CLOSERS = new Set([0x5d, 0x7d]);

/**
 * Whether a JSON text nests deeper than `limit`, found in one pass that stops as soon as it does:
 * V8 parses a megabyte of `[[[[` without recursion, but only after building half a million arrays.
 * Answers the top-level field the nesting is under (when the body is an object), to name it.
 */
function nestingPastLimit(text: string, limit: number): { field: string } | undefined {
  let depth = 0;
  let lastTopLevelString = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return undefined; // unterminated: JSON.parse says so
      if (depth === 1) lastTopLevelString = text.slice(i + 1, end);
      i = end;
    } else if (OPENERS.has(c)) {
      // In an object at the top, the last string before a nested value is that value's key.
      if (++depth > limit) {
        const named = text.trimStart().startsWith('{') && !lastTopLevelString.includes('\\');
        return { field: named ? lastTopLevelString : 'body' };
      }
    } else if (CLOSERS.has(c)) {
      depth--;
    }
  }
  return undefined;
}

function isEscaped(text: string, quoteAt: number): boolean {
  let backslashes = 0;
  for (let j = quoteAt - 1; text.charCodeAt(j) === BACKSLASH; j--) backslashes++;
  return backslashes % 2 === 1;
}

/** Levels of objects and arrays in a parsed value (`{}` is one); bounded by SCAN_DEPTH for bodies. */
export function nestingDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, nestingDepth(child));
  return deepest + 1;
}

/**
 * The parsed body, or the 400 that refuses it. secure-json-parse refuses a `__proto__` key, and a
 * `constructor` key holding a `prototype` key, anywhere, so that no such key ever reaches an object
 * the service merges or copies. It says only "forbidden": the text is then parsed once more,
 * keeping those keys as inert own properties, only to tell JSON that does not parse (`invalid_json`)
 * from parseable JSON with a refused key (`validation_failed` naming it, docs/api/errors.md). That second
 * value is walked and dropped, never handed on.
 */
function parseRefusingPrototypeKeys(text: string): unknown {
  try {
    return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    let inert: unknown;
    try {
      inert = secureJson.parse(text, undefined, { protoAction: 'ignore', constructorAction: 'ignore' });
    } catch {
      return new HttpProblem('invalid_json', 'The request body is not valid JSON.');
    }
    return fieldProblem(prototypeKeyPath(inert, []) ?? 'body', 'is not allowed');
  }
}

/**
 * The path (`data.a.__proto__`) of a key secure-json-parse refuses, outer objects first. The keys on
 * the way are named as the text check names them (bad characters as U+FFFD).
 */
function prototypeKeyPath(node: unknown, path: string[]): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  const own = (key: string) => Object.prototype.hasOwnProperty.call(node, key);
  if (own('__proto__')) return [...path, '__proto__'].join('.');
  const ctor: unknown = own('constructor') ? (node as { constructor: unknown }).constructor : undefined;
  if (ctor !== null && typeof ctor === 'object' && Object.prototype.hasOwnProperty.call(ctor, 'prototype')) {
    return [...path, 'constructor', 'prototype'].join('.');
  }
  for (const [key, child] of Object.entries(node)) {
    const found = prototypeKeyPath(child, [...path, printable(key)]);
    if (found) return found;
  }
  return undefined;
}

/**
 * Some bytes parsed as the API parses every JSON body, or the problem that refuses them: nesting
 * past the limit, JSON that does not parse, prototype keys, text that is not UTF-8 or holds NUL or a
 * lone surrogate. For a route that must read the exact bytes first (an ingest URL checks a
 * signature over them: sources/), then parse them as any other body.
 */
export function parseJsonBytes(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  const tooDeep = nestingPastLimit(text, SCAN_DEPTH);
  if (tooDeep) return nestingProblem(tooDeep.field);
  const parsed = parseRefusingPrototypeKeys(text);
  if (parsed instanceof HttpProblem) return parsed;
  const replacedBytes = !isUtf8(bytes);
  // From UTF-8 text, JSON.parse makes a NUL or a lone surrogate only out of a \u escape: without
  // one, the walk over every value (slower than the parse itself) is skipped.
  const problem =
    replacedBytes || MAYBE_NOT_TEXT.test(text)
      ? (textProblem(parsed, 'body', { replacedBytes }) ??
        (replacedBytes ? fieldProblem('body', NOT_UTF8) : undefined))
      : undefined;
  return problem ?? parsed;
}

/**
 * JSON is the only request body accepted (anything else is a 415 from Fastify). An empty (zero
 * bytes) or absent body reads as `{}`: `POST …/revoke` works whether or not a client sends a content
 * type with it, and a route whose body fields are all optional (rotate) needs none. A body of some
 * bytes but no JSON value (only whitespace, JSON's or the other Unicode spaces `String.trim` knows:
 * NBSP, a BOM, a vertical tab) is `invalid_json`, as JSON.parse says of it. Read as bytes, so that
 * bytes which are not UTF-8 are refused instead of silently becoming U+FFFD.
 */
export function registerJsonBodies(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (bytes.length === 0) {
      done(null, undefined);
      return;
    }
    const parsed = parseJsonBytes(bytes);
    if (parsed instanceof HttpProblem) done(parsed, undefined);
    else done(null, parsed);
  });
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined) request.body = {};
  });
}
