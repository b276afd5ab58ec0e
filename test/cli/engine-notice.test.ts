import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { engineNotice } from '../../scripts/engine-notice.mjs';

// Issue 37 item 20: `npm ci` on a Node older than 22 opens with some thirty EBADENGINE warning blocks
// (npm checks engines against the Node it runs on). `prepare` explains them in one line.
const NPM_ON_NODE_20 = 'npm/11.19.1 node/v20.20.2 linux x64 workspaces/false';

test('npm on Node 20: one line says the warnings are expected and which Node hubgate runs on', () => {
  const line = engineNotice(NPM_ON_NODE_20, '24.21.0');
  assert.ok(line, 'a line is printed');
  assert.doesNotMatch(line, /\n/, 'one line');
  assert.match(line, /EBADENGINE warnings above are expected/, 'it says the warnings are expected');
  assert.match(line, /npm ran on Node 20\.20\.2/, 'it names the Node npm ran on');
  assert.match(line, /its own Node 24\.21\.0/, 'it names the Node hubgate runs on');
});

test('npm on Node 22 or newer, or no user agent: nothing to explain', () => {
  const quiet = (agent: string | undefined) => engineNotice(agent, '24.21.0');
  assert.equal(quiet('npm/11.19.1 node/v24.21.0 linux x64 workspaces/false'), undefined, 'Node 24: silent');
  assert.equal(quiet('npm/11.0.0 node/v22.19.0 linux x64'), undefined, 'Node 22: silent');
  assert.equal(quiet(undefined), undefined, 'not under npm: silent');
});

test('prepare prints the line, and the runtime it names is the pinned node package', () => {
  const prepare = readFileSync(new URL('../../scripts/build-if-stale.mjs', import.meta.url), 'utf8');
  assert.match(
    prepare,
    /engineNotice\(process\.env\.npm_config_user_agent, process\.versions\.node\)/,
    'prepare prints the notice',
  );
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
    dependencies: Record<string, string>;
  };
  assert.match(pkg.scripts.prepare ?? '', /build-if-stale\.mjs/, 'npm ci runs it');
  assert.match(pkg.dependencies.node ?? '', /^24\./, 'npm scripts run on the pinned Node 24');
});
