import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { publicRule } from '../access/rules.js';
import { ConfigError } from '../config.js';
import type { DB } from '../db/schema.js';
import type { UnmatchedAnswer } from '../http/error-handler.js';
import { connectPagePolicy, portalPagePolicy } from '../portal/framing.js';

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
// Contract §12: these paths are never the UI's; an unknown one is a 404 in problem format.
const RESERVED = [
  '/api',
  '/docs',
  '/assets',
  '/healthz',
  '/readyz',
  '/metrics',
  '/ingest',
  '/oauth',
  '/.well-known',
];
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
    void sendPage(reply, ui);
    return true;
  };
}

const sendPage = (reply: FastifyReply, ui: WebUi) =>
  reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(ui.html);

/**
 * The UI's routes: the portal page (below), and the hashed assets, kept by any cache for a year: the
 * `.br` or `.gz` file the build wrote beside each (scripts/build-ui.mjs) when the request accepts it,
 * with `Vary: Accept-Encoding`, and never compressed again at request time.
 */
export async function registerWebUi(app: FastifyInstance, ui: WebUi, db: Kysely<DB>): Promise<void> {
  registerPortalPage(app, ui, db);
  registerConnectPage(app, ui, db);
  await app.register(fastifyStatic, { root: join(ui.root, 'assets'), serve: false, preCompressed: true });
  app.get<{ Params: { '*': string } }>(
    '/assets/*',
    // Files a page names by their hash, a few per page load: not limited, like the API's docs.
    { config: publicRule({ unlimited: true }), schema: { hide: true }, compress: false },
    (request, reply) =>
      reply.sendFile(request.params['*'], { immutable: true, maxAge: '365d', dotfiles: 'deny' }),
  );
}

/**
 * The tenant's portal page, `/portal/<tenantId>` and the UI's paths under it (docs/api/portal.md): the
 * same page as every other, but the one the tenant's own sites may frame. Its Content-Security-Policy
 * lets exactly the origins of the tenant's portal settings frame it, read at each load, and it has no
 * X-Frame-Options (which can only deny or allow the same origin); every other answer keeps both
 * denials (web/security-headers.ts).
 */
function registerPortalPage(app: FastifyInstance, ui: WebUi, db: Kysely<DB>): void {
  const options = { config: publicRule(), schema: { hide: true } };
  const handler = async (request: { params: { tenantId: string } }, reply: FastifyReply) => {
    const policy = await portalPagePolicy(db, request.params.tenantId);
    // On the response itself, where the security headers were set before routing.
    reply.raw.setHeader('Content-Security-Policy', policy);
    reply.raw.removeHeader('X-Frame-Options');
    return sendPage(reply, ui);
  };
  app.get<{ Params: { tenantId: string } }>('/portal/:tenantId', options, handler);
  app.get<{ Params: { tenantId: string; '*': string } }>('/portal/:tenantId/*', options, handler);
}

/**
 * The connect page, `/connect/<tenantId>` (docs/api/connect-links.md): the same page, still framed by
 * nobody (X-Frame-Options and `frame-ancestors 'none'` stay), with the tenant's logo admitted.
 */
function registerConnectPage(app: FastifyInstance, ui: WebUi, db: Kysely<DB>): void {
  const options = { config: publicRule(), schema: { hide: true } };
  const handler = async (request: { params: { tenantId: string } }, reply: FastifyReply) => {
    reply.raw.setHeader('Content-Security-Policy', await connectPagePolicy(db, request.params.tenantId));
    return sendPage(reply, ui);
  };
  app.get<{ Params: { tenantId: string } }>('/connect/:tenantId', options, handler);
}
