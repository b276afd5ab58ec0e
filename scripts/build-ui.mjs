#!/usr/bin/env node
// Builds the web UI into dist/ui: one script and one stylesheet with content hashes in their names
// (served immutable), and index.html that names them (served no-cache). Nothing is fetched at run
// time and nothing is inline, so the page runs under a CSP of 'self' only (docs/operators/web-ui.md).
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'dist', 'ui');
const assets = join(out, 'assets');

// Earlier builds are not wiped first: a server started before this build still serves the
// index.html it read, which names the older files. The new index.html replaces the old one in one
// rename; files no build has named for ten minutes are deleted at the end.
mkdirSync(assets, { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: ['ui/main.tsx'],
  bundle: true,
  minify: true,
  sourcemap: 'linked',
  format: 'esm',
  target: 'es2022',
  jsx: 'automatic',
  jsxImportSource: 'preact',
  entryNames: '[name]-[hash]',
  outdir: assets,
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});

// The UI takes the API's types from the server's schemas (ui/common/routes.ts), type-only: not one
// byte of the server may end up in the browser's bundle.
const server = Object.keys(result.metafile.inputs).filter((path) => path.startsWith('src/'));
if (server.length > 0) throw new Error(`the UI bundle includes server code: ${server.join(', ')}`);

const outputs = Object.keys(result.metafile.outputs).map((path) => basename(path));
const script = outputs.find((name) => name.endsWith('.js'));
const style = outputs.find((name) => name.endsWith('.css'));
if (!script || !style) throw new Error(`the UI build made no script or stylesheet: ${outputs.join(', ')}`);

// The icon is a data: URL (the CSP allows data: images) so no request for /favicon.ico is made.
const icon =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='7' fill='%232354d6'/%3E%3Cpath d='M9 9v14M23 9v14M9 16h14' stroke='white' stroke-width='3.2' stroke-linecap='round'/%3E%3C/svg%3E";

const partial = join(out, `index.html.${process.pid}.partial`);
writeFileSync(
  partial,
  `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light dark" />
    <title>hubgate</title>
    <link rel="icon" href="${icon}" />
    <link rel="stylesheet" href="/assets/${style}" />
    <script type="module" src="/assets/${script}"></script>
  </head>
  <body>
    <div id="app"></div>
    <noscript>hubgate's web interface needs JavaScript. The API works without it: see /docs.</noscript>
  </body>
</html>
`,
);
renameSync(partial, join(out, 'index.html'));

// Each asset compressed once, here, at the highest levels (about a second for the script), instead
// of on every request at the low level a server can afford: @fastify/static sends the file a request
// accepts (src/web/routes.ts). An encoding that saves nothing is not kept. Source maps, which only
// developer tools fetch, get gzip alone: brotli's best on the script's map takes about 5 s.
const encoders = {
  br: (data) =>
    brotliCompressSync(data, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: data.length,
      },
    }),
  gz: (data) => gzipSync(data, { level: constants.Z_BEST_COMPRESSION }),
};
const precompressed = [];
for (const name of outputs) {
  const data = readFileSync(join(assets, name));
  for (const [extension, encode] of Object.entries(encoders)) {
    if (extension === 'br' && name.endsWith('.map')) continue;
    const encoded = encode(data);
    const target = join(assets, `${name}.${extension}`);
    if (encoded.length >= data.length) {
      rmSync(target, { force: true });
      continue;
    }
    // Whole or not at all: a server running from an earlier build may be sending this name now.
    const partialTarget = `${target}.${process.pid}.partial`;
    writeFileSync(partialTarget, encoded);
    renameSync(partialTarget, target);
    precompressed.push(`${name}.${extension}`);
  }
}

const current = new Set([...outputs, ...precompressed]);
const stale = Date.now() - 10 * 60 * 1000;
for (const name of readdirSync(assets)) {
  const path = join(assets, name);
  if (!current.has(name) && statSync(path).mtimeMs < stale) rmSync(path, { force: true });
}
console.log(`web UI built: dist/ui/assets/${script}, ${style}`);
