import type { FastifyInstance } from 'fastify';
import { fieldProblem, type HttpProblem } from './problem.js';

// U+0000 and unpaired surrogates (in `u` mode a lone surrogate is a code point of category Cs, a
// pair is one astral code point). PostgreSQL refuses both in text and JSON (22021, 22P05), so
// they must stop at the door, not become a 500 in whichever query first meets them.
const NOT_TEXT = /[\0\p{Cs}]/u;
// A body that was not UTF-8 was decoded with U+FFFD for each bad sequence: there, it marks the field.
const NOT_TEXT_OR_REPLACED = /[\0\p{Cs}\uFFFD]/u;

export const NOT_UTF8 = 'is not valid UTF-8';

/** What is wrong with a string `bad` matched, in words: the first bad character decides. */
function whatIsWrong(text: string, bad: RegExp): string {
  const char = bad.exec(text)?.[0];
  if (char === '\0') return 'must not contain U+0000';
  if (char === '\uFFFD') return NOT_UTF8;
  return 'must not contain an unpaired surrogate (half of a UTF-16 pair alone)';
}

/** A name as it may appear in an error path: the bad characters themselves never go back out. */
export const printable = (name: string) => name.replace(/[\0\p{Cs}]/gu, '\uFFFD');

/**
 * The first string (value or object key) in `value` that is not acceptable text, as a 400 naming
 * its path (`data.list.0`, `querystring.cursor`). Recursive: bodies reach it only once the parser
 * has bounded their nesting, query strings and paths are two levels at most.
 */
export function textProblem(
  value: unknown,
  context: 'body' | 'querystring' | 'params',
  options: { replacedBytes?: boolean } = {},
): HttpProblem | undefined {
  const bad = options.replacedBytes ? NOT_TEXT_OR_REPLACED : NOT_TEXT;
  // One path, pushed and popped on the way: the walk visits every value of a megabyte body.
  const path: string[] = [];
  const found = (text: string): HttpProblem => {
    const names = context === 'body' ? path : [context, ...path];
    return fieldProblem(names.join('.') || context, whatIsWrong(text, bad));
  };
  const walk = (node: unknown): HttpProblem | undefined => {
    if (typeof node === 'string') return bad.test(node) ? found(node) : undefined;
    if (node === null || typeof node !== 'object') return undefined;
    const entries: Iterable<[string | number, unknown]> = Array.isArray(node)
      ? node.entries()
      : Object.entries(node);
    for (const [key, child] of entries) {
      if (typeof key === 'string' && bad.test(key)) {
        path.push(printable(key));
        return found(key);
      }
      path.push(String(key));
      const problem = walk(child);
      if (problem) return problem;
      path.pop();
    }
    return undefined;
  };
  return walk(value);
}

/**
 * Query strings and path parameters are checked for every route in one place, before schema
 * validation (bodies are checked as they are parsed, in json-body.ts).
 */
export function registerTextChecks(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    // What no route takes is refused before this, but for the web UI's pages, whose query the
    // server never reads: the page reads it, and the API it calls checks what it passes on.
    if (request.is404) return;
    const problem = textProblem(request.params, 'params') ?? textProblem(request.query, 'querystring');
    if (problem) throw problem;
  });
}
