import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';

// One composition root (docs/decisions/0069-one-composition-root.md): every part built once by
// createServices, every route plugin of one shape registered from one list, buildApp only wiring
// hooks and plugins, `hubgate worker` the services plus its background jobs. A plugin of another
// shape, a long buildApp or a hand-rolled worker is the drift this test refuses.
const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** `export … xRoutes…` declarations of src/, each as written up to its first `=>` or `{`. */
function routePluginExports(): Array<{ file: string; name: string; declaration: string }> {
  return sourceFiles('src').flatMap((file) =>
    [...read(file).matchAll(/^export (?:async )?(?:function|const) (\w+Routes)\b[^{=]*(?:=[^>]*>)?/gm)].map(
      (match) => ({ file, name: match[1] ?? '', declaration: match[0] }),
    ),
  );
}

test('every route plugin has the one shape, RoutePlugin, and buildApp registers each of them', () => {
  const plugins = routePluginExports();
  assert.ok(plugins.length >= 20, `found only ${plugins.length} route plugins`);
  const otherShapes = plugins.filter(
    ({ name, declaration }) => !declaration.startsWith(`export const ${name}: RoutePlugin = async (app`),
  );
  assert.deepEqual(
    otherShapes.map(({ file, declaration }) => `${file}: ${declaration}`),
    [],
    'route plugins of another shape',
  );
  const app = read('src/app.ts');
  const list = /const ROUTE_PLUGINS: readonly RoutePlugin\[\] = \[([^\]]*)\]/.exec(app)?.[1] ?? '';
  const registered = new Set(list.split(',').map((name) => name.trim()));
  assert.deepEqual(
    plugins.map(({ name }) => name).filter((name) => !registered.has(name)),
    [],
    'route plugins missing from ROUTE_PLUGINS',
  );
  assert.match(
    app,
    /for \(const routes of ROUTE_PLUGINS\) await app\.register\(routes, services\);/,
    'buildApp registers every plugin as app.register(routes, services)',
  );
});

test('buildApp stays wiring: under 60 lines, no lint exception, nothing built in it', () => {
  const app = read('src/app.ts');
  const start = app.indexOf('export async function buildApp(');
  assert.ok(start >= 0, 'src/app.ts exports buildApp');
  const end = app.indexOf('\n}\n', start);
  const body = app.slice(start, end + 2);
  const lines = body.split('\n').length;
  assert.ok(lines < 60, `buildApp is ${lines} lines`);
  assert.ok(!app.includes('eslint-disable'), 'src/app.ts has no eslint-disable comment');
  // A long-lived part is built by createServices: buildApp calls no `create…` factory.
  assert.deepEqual(body.match(/\bcreate[A-Z]\w*\(/g) ?? [], [], 'factories called in buildApp');
});

test('hubgate worker is createServices and startBackground, under 20 lines', () => {
  const worker = read('src/cli/worker.ts');
  assert.ok(worker.split('\n').length < 20, `src/cli/worker.ts is ${worker.split('\n').length} lines`);
  assert.match(worker, /createServices\(config, /, 'worker builds the services');
  assert.match(worker, /startBackground\(services, \{ role: 'worker' \}\)/, 'worker starts its role');
  assert.match(
    read('src/cli/serve.ts'),
    /startBackground\(services, \{ role: 'serve' \}\)/,
    'serve starts its role',
  );
});

test('no part learns another through a holder filled later: the event writer gets the dispatch built', () => {
  const holders = sourceFiles('src').filter((file) => /\{ dispatch\?: Dispatch \}/.test(read(file)));
  assert.deepEqual(holders, [], 'files with a dispatch holder');
  assert.match(
    read('src/services.ts'),
    /createEventWriter\(\{ ctx, catalog \}, workers\?\.dispatch, announce\)/,
    'the event writer is given the workers’ dispatch as it is built',
  );
});
