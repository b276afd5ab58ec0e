import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { collectRoutes, renderRouteIndex, ROUTES_PATH } from '../../scripts/route-index.js';

// docs/contributors/routes.md is generated from the app's route table (scripts/route-index.ts): a
// route added, moved to another file or removed without `npm run docs:routes` fails here.
const ROOT = resolve(import.meta.dirname, '../..');
const routes = await collectRoutes();

test('docs/contributors/routes.md is what the route table generates', async () => {
  assert.equal(
    readFileSync(ROUTES_PATH, 'utf8'),
    await renderRouteIndex(routes),
    "docs/contributors/routes.md differs from the app's routes: run `npm run docs:routes`",
  );
});

test('every route is traced to the file that declares it', () => {
  const untraced = routes.filter((r) => !r.file.startsWith('src/') && !r.file.startsWith('@fastify/'));
  assert.deepEqual(untraced, [], 'routes with no declaring source file or package');
  const missing = routes.filter((r) => r.file.startsWith('src/') && !existsSync(join(ROOT, r.file)));
  assert.deepEqual(missing, [], 'routes traced to files that do not exist');
  // Routes of one URL declared in other folders are found where they are, not where the URL suggests.
  const authorize = routes.find((r) => r.url === '/api/v1/integrations/connections/:id/authorize');
  assert.equal(authorize?.file, 'src/oauth/routes.ts', 'the authorize route is declared by oauth/');
  const heads = routes.filter((r) => r.method === 'HEAD' && r.file.startsWith('src/'));
  assert.deepEqual(heads, [], "Fastify's own HEAD beside a GET is not listed as declared");
});
