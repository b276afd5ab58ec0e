// `npx hubgate …` from a checkout runs node_modules/.bin/hubgate when it exists. package.json declares
// no `bin` on purpose: npm 11 installs a project that declares its own bin into the npx cache and
// runs its `prepare` (the build) first (docs/decisions/0056-npx-without-a-rebuild.md). npm links only
// its dependencies' bins there, so the build writes ours.
import { chmodSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

// A small file rather than a symlink to dist/main.js: a dangling link counts as no bin at all, and
// npx would then look for a package named hubgate in the registry. This one is there from the first
// moment of a build and says what to do while no complete build exists. CommonJS, so that an old
// Node reaches dist/main.js and its own one-line refusal.
const LAUNCHER = `#!/usr/bin/env node
// Written by scripts/link-bin.mjs during the build: runs this checkout's dist/main.js.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');
const root = join(__dirname, '..', '..');
if (!existsSync(join(root, 'dist', '.build-stamp'))) {
  process.stderr.write('hubgate: this checkout has no complete build (dist/.build-stamp is missing); run \`npm run build\`\\n');
  process.exit(1);
}
import(pathToFileURL(join(root, 'dist', 'main.js')).href);
`;

/** Writes node_modules/.bin/hubgate in one rename, so a concurrent `npx hubgate` never sees half a file. */
export function linkBin() {
  const binDir = join(root, 'node_modules', '.bin');
  mkdirSync(binDir, { recursive: true });
  const partial = join(binDir, `.hubgate.${process.pid}.partial`);
  writeFileSync(partial, LAUNCHER);
  chmodSync(partial, 0o755);
  renameSync(partial, join(binDir, 'hubgate'));
}
