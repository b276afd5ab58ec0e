#!/usr/bin/env node
// `prepare`, which `npm ci` and `npm install` run: builds only when dist/ is not the build of the
// sources as they are (scripts/build-stamp.mjs), and always writes the bin `npx hubgate` runs, which a
// fresh node_modules lacks. `npm run build` builds whatever the stamp says.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, staleReason } from './build-stamp.mjs';
import { engineNotice } from './engine-notice.mjs';
import { linkBin } from './link-bin.mjs';

// Under npm scripts this runs on the project's own Node (node_modules/.bin comes first on PATH).
const notice = engineNotice(process.env.npm_config_user_agent, process.versions.node);
if (notice) console.log(notice);

const reason = staleReason();
if (reason === undefined) {
  linkBin();
  console.log('hubgate: dist/ is current (its inputs have not changed since the last build); not building');
} else {
  console.log(`hubgate: building (${reason})`);
  const { status } = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  process.exitCode = status ?? 1;
}
