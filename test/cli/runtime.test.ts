import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { USAGE } from '../../src/cli/usage.js';
import { spawnCli } from '../helpers/cli.js';
import { ENGINE } from '../helpers/test-database.js';

// What only a process can show: which Node runs it, and the exit code the process ends with. What
// the commands answer is tested in this process (usage.test.ts, cli-embedded, cli-postgres).
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
    assert.equal(result.status, 1, `an old Node exits 1: ${result.stderr}`);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.length, 1, `one line on stderr: ${result.stderr}`);
    assert.match(
      lines[0]!,
      /^hubgate: Node 20\.\d+\.\d+ is too old; hubgate needs Node 22 or newer/,
      'the line names the Node found and the one needed',
    );
  },
);

test('npm scripts run this suite on the pinned Node 24', { skip: ENGINE !== 'pglite' }, () => {
  assert.match(process.version, /^v24\./, 'the Node that npm ci installs runs the tests');
});

test(
  'the process exits 2 on a usage error and 1 on a bad configuration, with one line on stderr',
  { skip: ENGINE !== 'pglite' },
  async () => {
    const env = { DATA_DIR: join(mkdtempSync(join(tmpdir(), 'hubgate-exit-')), 'data') };
    const [usage, config] = await Promise.all([
      spawnCli(['nonsense'], env),
      spawnCli(['platform-key', 'list'], { ...env, PORT: 'eighty' }),
    ]);
    assert.equal(usage.code, 2, `a usage error exits 2: ${usage.stderr}`);
    assert.equal(
      usage.stderr,
      `hubgate: unknown command "nonsense"\n${USAGE}\n`,
      'one line, then the usage, on stderr',
    );
    assert.equal(usage.stdout, '', 'nothing on stdout');
    assert.equal(config.code, 1, `a bad configuration exits 1: ${config.stderr}`);
    assert.equal(config.stderr.trim().split('\n').length, 1, `one line: ${config.stderr}`);
    assert.match(config.stderr, /^hubgate: .*PORT/, 'the line names PORT');
  },
);
