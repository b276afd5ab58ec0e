import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ENGINE } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// `npx hubgate …` from a checkout after `npm ci` answers without installing or building anything, the
// first call too (docs/decisions/0056-npx-without-a-rebuild.md). npm's own npx runs against a copy of
// this checkout with an empty npx cache, as a user's shell would. The database engine plays no part:
// the file runs once, in the PGlite run.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const skip = ENGINE !== 'pglite';
const USAGE_LINE = /^usage: hubgate <command>/;
// What npm prints (at --loglevel verbose) when it installs the checkout into its npx cache and runs
// the build there: `npm info run hubgate@0.1.0 prepare …`.
const INSTALL_OR_BUILD = /npm info run|\bprepare\b|\btsc\b|will be installed|\breify\b/;

let checkout = '';
const scratch: string[] = [];

function tempDir(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `hubgate-npx-${name}-`));
  scratch.push(dir);
  return dir;
}

/**
 * A checkout as `git clone` then `npm ci` leave it: this checkout's files as they are in the working
 * tree (new ones included), and a node_modules of its own whose packages are links to this
 * checkout's (a real `npm ci` would fetch from the registry). Its .bin has every dependency's bin
 * but not hubgate, as npm leaves it; `npm run prepare`, what `npm ci` runs last, does the rest.
 */
function makeCheckout(): string {
  const dir = tempDir('checkout');
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  for (const file of files.split('\0')) {
    const from = join(ROOT, file);
    if (file === '' || !existsSync(from) || !lstatSync(from).isFile()) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(from, join(dir, file));
  }
  const modules = join(ROOT, 'node_modules');
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  for (const entry of readdirSync(modules)) {
    if (entry !== '.bin') symlinkSync(join(modules, entry), join(dir, 'node_modules', entry));
  }
  for (const bin of readdirSync(join(modules, '.bin'))) {
    const path = join(modules, '.bin', bin);
    if (bin !== 'hubgate' && lstatSync(path).isSymbolicLink()) {
      symlinkSync(readlinkSync(path), join(dir, 'node_modules', '.bin', bin));
    }
  }
  return dir;
}

/** A user's shell: the system PATH without any project's node_modules/.bin (npm test puts this checkout's first). */
function userEnv(npxCache: string): NodeJS.ProcessEnv {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => !entry.includes(`node_modules${sep}.bin`) && !entry.includes('node-gyp-bin'))
    .join(delimiter);
  return {
    PATH: path,
    HOME: process.env.HOME,
    npm_config_cache: npxCache,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

interface Timed {
  result: SpawnSyncReturns<string>;
  ms: number;
}

function run(command: string, args: string[], npxCache: string): Timed {
  const started = performance.now();
  const result = spawnSync(command, args, { cwd: checkout, env: userEnv(npxCache), encoding: 'utf8' });
  return { result, ms: Math.round(performance.now() - started) };
}

/** `npx --loglevel verbose hubgate …`: verbose, so that an install or a build would show in the output. */
function npx(args: string[], npxCache: string): Timed {
  return run('npx', ['--loglevel', 'verbose', 'hubgate', ...args], npxCache);
}

/** Every file under dist/ with its modification time: a build rewrites them all. */
function distFiles(): Map<string, number> {
  const files = new Map<string, number>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(path.slice(checkout.length), statSync(path).mtimeMs);
    }
  };
  walk(join(checkout, 'dist'));
  return files;
}

const stamp = (): string => join(checkout, 'dist', '.build-stamp');
const npxInstalls = (npxCache: string): string[] =>
  existsSync(join(npxCache, '_npx')) ? readdirSync(join(npxCache, '_npx')) : [];

before(() => {
  if (skip) return;
  checkout = makeCheckout();
  const prepare = run('npm', ['run', 'prepare'], tempDir('cache'));
  assert.equal(
    prepare.result.status,
    0,
    `npm ci's prepare builds a fresh checkout: ${prepare.result.stderr}`,
  );
  assert.ok(existsSync(join(checkout, 'dist', 'main.js')), 'after npm ci, dist/main.js exists');
});

after(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

test(
  'the first npx hubgate after npm ci, with an empty npx cache, installs and builds nothing; the second neither',
  { skip },
  (t) => {
    const npxCache = tempDir('cache');
    const built = distFiles();
    for (const call of ['first', 'second']) {
      const { result, ms } = npx(['--help'], npxCache);
      t.diagnostic(`${call} npx hubgate --help: ${ms} ms`);
      assert.equal(result.status, 0, `the ${call} npx hubgate --help exits 0: ${result.stderr}`);
      assert.match(result.stdout, USAGE_LINE, `the ${call} call prints hubgate's usage`);
      assert.doesNotMatch(
        result.stderr,
        INSTALL_OR_BUILD,
        `npm's output of the ${call} call shows no install and no build`,
      );
      assert.deepEqual(npxInstalls(npxCache), [], `the ${call} call installs nothing into the npx cache`);
      assert.deepEqual(distFiles(), built, `the ${call} call rewrites no file of dist/`);
    }
  },
);

test('prepare builds nothing while dist/ is the build of the current sources', { skip }, () => {
  const built = distFiles();
  const { result } = run('npm', ['run', 'prepare'], tempDir('cache'));
  assert.equal(result.status, 0, `npm run prepare exits 0: ${result.stderr}`);
  assert.match(result.stdout, /dist\/ is current/, 'prepare says the build is current');
  assert.deepEqual(distFiles(), built, 'no file of dist/ is rewritten');
  assert.ok(existsSync(join(checkout, 'node_modules', '.bin', 'hubgate')), 'the hubgate bin is there');
});

test(
  'npm run build builds even when current; cut short, it leaves a checkout whose npx hubgate says what to run',
  { skip },
  async () => {
    const child = spawn('npm', ['run', 'build'], {
      cwd: checkout,
      env: userEnv(tempDir('cache')),
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await waitUntil(() => !existsSync(stamp()), {
      message: 'npm run build to start a build (removing dist/.build-stamp) although dist/ was current',
      timeoutMs: 60_000,
    });
    process.kill(-child.pid!, 'SIGKILL');
    await exited;

    const npxCache = tempDir('cache');
    const { result } = npx(['--help'], npxCache);
    assert.equal(result.status, 1, `npx hubgate exits 1 while the build is incomplete: ${result.stdout}`);
    assert.match(
      result.stderr,
      /^hubgate: this checkout has no complete build .*run `npm run build`$/m,
      'one line says the build is incomplete and what to run',
    );
    assert.doesNotMatch(result.stderr, INSTALL_OR_BUILD, 'npx neither installs nor builds to make up for it');
    assert.deepEqual(npxInstalls(npxCache), [], 'nothing is installed into the npx cache');
  },
);

test(
  'prepare rebuilds after a cut-short build and after a source change, and npx runs the new build',
  { skip },
  async () => {
    const marker = `rebuilt-${Date.now()}`;
    appendFileSync(join(checkout, 'src', 'version.ts'), `\nexport const rebuiltMarker = '${marker}';\n`);
    const { result } = run('npm', ['run', 'prepare'], tempDir('cache'));
    assert.equal(result.status, 0, `npm run prepare completes the build: ${result.stderr}`);
    assert.match(
      result.stdout,
      /hubgate: building \(no completed build: dist\/\.build-stamp is missing\)/,
      'prepare says why it builds',
    );
    assert.match(
      readFileSync(join(checkout, 'dist', 'version.js'), 'utf8'),
      new RegExp(marker),
      'dist/ holds the changed source',
    );
    const npxCache = tempDir('cache');
    const answer = npx(['--help'], npxCache).result;
    assert.equal(answer.status, 0, `npx hubgate answers again: ${answer.stderr}`);
    assert.match(answer.stdout, USAGE_LINE, 'npx hubgate prints the usage again');

    // From a current build: a changed source alone is reason enough. The build is cut short once
    // prepare has said so and started it; the check is what is tested, not a third full build.
    appendFileSync(join(checkout, 'ui', 'main.tsx'), `\n// ${marker}\n`);
    const child = spawn('npm', ['run', 'prepare'], {
      cwd: checkout,
      env: userEnv(tempDir('cache')),
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await waitUntil(() => /hubgate: building \(sources changed since the last build\)/.test(output), {
      message: () => `prepare to say the sources changed and build; it printed: ${output}`,
      timeoutMs: 60_000,
    });
    await waitUntil(() => !existsSync(stamp()), {
      message: 'the build prepare started to remove dist/.build-stamp',
      timeoutMs: 60_000,
    });
    process.kill(-child.pid!, 'SIGKILL');
    await exited;
  },
);
