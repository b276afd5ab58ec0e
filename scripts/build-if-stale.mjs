#!/usr/bin/env node
// `prepare`, which `npm ci` and `npm install` run: builds only when dist/ is not the build of the
// sources as they are (scripts/build-stamp.mjs), and always writes the bin `npx hubgate` runs, which a
// fresh node_modules lacks. `npm run build` builds whatever the stamp says.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, staleReason } from './build-stamp.mjs';
import { linkBin } from './link-bin.mjs';

const reason = staleReason();
if (reason === undefined) {
  linkBin();
  console.log('hubgate: dist/ is current (its inputs have not changed since the last build); not building');
} else {
  console.log(`hubgate: building (${reason})`);
  const { status } = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  process.exitCode = status ?? 1;
}
