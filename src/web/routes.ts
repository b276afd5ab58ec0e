import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { ConfigError } from '../config.js';
import { noSuchRoute } from '../http/problem.js';

/** Where `npm run build` writes the web UI: the same folder from `src/` (tsx) and from `dist/`. */
export const UI_ROOT = fileURLToPath(new URL('../../dist/ui/', import.meta.url));

const publicUi = { access: { class: 'public', unlimited: true } } as const;

/** Paths that are never the UI's (contract §12): the API and the API's documentation. */
const isReserved = (path: string): boolean =>
  path === '/api' || path.startsWith('/api/') || path === '/docs' || path.startsWith('/docs/');

/**
 * The web UI (contract §12): hashed assets kept by any cache for a year, and for every other GET
 * that no route takes, the page itself, never cached, so that a reload or a bookmark of any of the
 * UI's URLs opens the UI, which shows its own "not found".
 */
export function webRoutes(root = UI_ROOT): FastifyPluginAsync {
  return async (app) => {
    const indexPath = join(root, 'index.html');
    // Fail at start-up, not on the first page view: a checkout whose UI was never built.
    if (!existsSync(indexPath)) {
      throw new ConfigError(`the web UI is not built (${indexPath} is missing): run npm run build`);
    }
    const page = readFileSync(indexPath);
    await app.register(fastifyStatic, { root: join(root, 'assets'), serve: false });

    app.get<{ Params: { '*': string } }>(
      '/assets/*',
      { config: publicUi, schema: { hide: true } },
      (request, reply) =>
        reply.sendFile(request.params['*'], { immutable: true, maxAge: '365d', dotfiles: 'deny' }),
    );

    app.get('/*', { config: publicUi, schema: { hide: true } }, async (request, reply) => {
      const path = request.url.split('?')[0] ?? '/';
      if (isReserved(path)) throw noSuchRoute();
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page);
    });
  };
}
