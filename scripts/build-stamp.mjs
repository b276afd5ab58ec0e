// What a build was made from: a hash of every input's path and content, written to dist/.build-stamp
// when a build completes. `prepare` (scripts/build-if-stale.mjs) compares it with the inputs as they
// are now and builds only when they differ (docs/decisions/0056-npx-without-a-rebuild.md). Content,
// not modification times: a fresh clone or a branch switch touches every file without changing one.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

export const ROOT = new URL('..', import.meta.url).pathname;
export const STAMP = join(ROOT, 'dist', '.build-stamp');

/** Everything a build reads besides node_modules (whose versions package-lock.json pins). */
const INPUTS = [
  'src',
  'ui',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/build-ui.mjs',
  'scripts/build-stamp.mjs',
];

/** What a build needs to have written for the checkout to run: a stamp alone is not enough. */
const OUTPUTS = ['dist/main.js', 'dist/ui/index.html'];

function filesUnder(path) {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(join(path, name)));
}

/** The hash of the inputs as they are now: each file's path (with / separators) and its bytes. */
export function inputsHash() {
  const hash = createHash('sha256');
  for (const input of INPUTS) {
    for (const file of filesUnder(join(ROOT, input))) {
      const content = readFileSync(file);
      hash.update(`${relative(ROOT, file).split(sep).join('/')}\0${content.length}\0`);
      hash.update(content);
    }
  }
  return `sha256:${hash.digest('hex')}`;
}

/** The hash the last completed build recorded, or undefined when there is none (never built, or interrupted). */
export function readStamp() {
  return existsSync(STAMP) ? readFileSync(STAMP, 'utf8').trim() : undefined;
}

/** Why dist/ needs a build, or undefined when it is current. */
export function staleReason() {
  const recorded = readStamp();
  if (recorded === undefined) return 'no completed build: dist/.build-stamp is missing';
  const missing = OUTPUTS.filter((output) => !existsSync(join(ROOT, output)));
  if (missing.length > 0) return `${missing.join(', ')} missing`;
  if (recorded !== inputsHash()) return 'sources changed since the last build';
  return undefined;
}

/** Removed when a build starts, so that a build cut short is never taken for a complete one. */
export function clearStamp() {
  rmSync(STAMP, { force: true });
}

/** Written in one rename when a build completes: a reader sees the old stamp, none, or the new one. */
export function writeStamp(hash) {
  const partial = `${STAMP}.${process.pid}.partial`;
  writeFileSync(partial, `${hash}\n`);
  renameSync(partial, STAMP);
}
