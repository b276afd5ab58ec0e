#!/usr/bin/env node
// `npm run build`: always builds. The server with tsc, the web UI with scripts/build-ui.mjs, then the
// stamp that lets `prepare` skip a build whose inputs have not changed, and the bin `npx hubgate` runs
// (docs/decisions/0056-npx-without-a-rebuild.md).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { clearStamp, inputsHash, ROOT, writeStamp } from './build-stamp.mjs';
import { linkBin } from './link-bin.mjs';

// The launcher first: whatever happens to this build, `npx hubgate` finds this checkout's bin and
// says what is missing, instead of asking the registry for a package named hubgate.
linkBin();
// Hashed before building: a source edited while tsc runs leaves the stamp behind it, so the next
// `prepare` builds again.
const hash = inputsHash();
clearStamp();
// A failed step has printed its errors; its exit code is enough, without a stack trace from here.
const run = (script, args) => {
  const { status } = spawnSync(process.execPath, [script, ...args], { cwd: ROOT, stdio: 'inherit' });
  if (status !== 0) process.exit(status ?? 1);
};
run(createRequire(import.meta.url).resolve('typescript/bin/tsc'), ['-p', 'tsconfig.build.json']);
run(join(ROOT, 'scripts', 'build-ui.mjs'), []);
writeStamp(hash);
console.log(`hubgate built into dist/ (inputs ${hash.slice(0, 19)}…)`);
