import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { ENGINE } from '../helpers/test-database.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The first `node` on the system PATH older than 22 (the machine's own, not the project's), if any. */
function olderNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) {
    try {
      const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
      if (Number(/^v(\d+)/.exec(version)?.[1]) < 22) return candidate;
    } catch {
      // not installed there
    }
  }
  return undefined;
}

const old = ENGINE === 'pglite' ? olderNode() : undefined;
if (ENGINE === 'pglite' && !old) {
  console.error('SKIPPED: no Node older than 22 on this machine, so the start-up refusal is not tested here');
}

test(
  'on a Node older than 22, hubgate refuses to start with one line naming what it needs',
  { skip: !old },
  () => {
    // tsx still loads on Node 20, so the check in src/main.ts is what answers, before any import fails.
    const result = spawnSync(old!, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    assert.equal(result.status, 1, result.stderr);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0]!, /^hubgate: Node 20\.\d+\.\d+ is too old; hubgate needs Node 22 or newer/);
  },
);

test('npm scripts run this suite on the pinned Node 24', { skip: ENGINE !== 'pglite' }, () => {
  assert.match(process.version, /^v24\./);
});
