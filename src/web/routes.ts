import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { publicRule } from '../access/rules.js';
import { ConfigError } from '../config.js';
import type { UnmatchedAnswer } from '../http/error-handler.js';

/** Where `npm run build` writes the web UI: the same folder from `src/` (tsx) and from `dist/`. */
export const UI_ROOT = fileURLToPath(new URL('../../dist/ui/', import.meta.url));

export interface WebUi {
  root: string;
  /** index.html, read once: every page of the UI is this document. */
  html: Buffer;
}

/** The built UI; a checkout whose UI was never built fails at start-up, not on the first page view. */
export function loadWebUi(root = UI_ROOT): WebUi {
  const indexPath = join(root, 'index.html');
  if (!existsSync(indexPath)) {
    throw new ConfigError(`the web UI is not built (${indexPath} is missing): run npm run build`);
  }
  return { root, html: readFileSync(indexPath) };
}

/**
 * Paths that are never a page of the UI: the API and its documentation (docs/operators/web-ui.md), and the
 * UI's own assets, where a missing file is a 404, not a page.
 */
const RESERVED = ['/api', '/docs', '/assets'];
const isReserved = (path: string): boolean =>
  RESERVED.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));

/**
 * Whether a request no route takes is a page of the UI: a GET (or HEAD) of any path outside the
 * API. Every other unmatched request stays a 404 in problem format.
 */
export function isUiPage(method: string, url: string): boolean {
  return (method === 'GET' || method === 'HEAD') && !isReserved(url.split('?')[0] ?? '/');
}

/**
 * The answer to every GET outside the API that no route takes (docs/operators/web-ui.md): the page itself,
 * never cached, so that a reload or a bookmark of any of the UI's URLs opens the UI, which shows
 * its own "not found". It comes from the not-found route, so an unknown path costs what it did
 * before (the per-address limit, the same hooks); refused URLs (dot segments, bad encoding) and
 * every other method stay problem details.
 */
export function answerUiPage(ui: WebUi): UnmatchedAnswer {
  return (request, reply) => {
    if (!isUiPage(request.method, request.url)) return false;
    void reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(ui.html);
    return true;
  };
}

/**
 * The UI's hashed assets, kept by any cache for a year: the `.br` or `.gz` file the build wrote
 * beside each (scripts/build-ui.mjs) when the request accepts it, with `Vary: Accept-Encoding`, and
 * never compressed again at request time.
 */
export async function registerWebUi(app: FastifyInstance, ui: WebUi): Promise<void> {
  await app.register(fastifyStatic, { root: join(ui.root, 'assets'), serve: false, preCompressed: true });
  app.get<{ Params: { '*': string } }>(
    '/assets/*',
    // Files a page names by their hash, a few per page load: not limited, like the API's docs.
    { config: publicRule({ unlimited: true }), schema: { hide: true }, compress: false },
    (request, reply) =>
      reply.sendFile(request.params['*'], { immutable: true, maxAge: '365d', dotfiles: 'deny' }),
  );
}
