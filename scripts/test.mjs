#!/usr/bin/env node
// `npm test`: type check (server and UI), lint, build the UI, then the suite on PGlite (measuring the coverage of src/
// against a floor), and again on PostgreSQL when TEST_DATABASE_URL is set. Extra arguments select test files (`npm test -- test/http`).
//
// `npm run test:unit` (`--unit`): only the unit test files, in seconds, with no checks and no UI build before them.
// A unit test file is one that imports test/helpers/unit.js. That import is the marker, read here, rather than a
// folder or a file name, because the marker is also a guard: loaded in every run, `npm test` included, it makes a
// test fail that opens a database, starts a server, connects anywhere, looks up a name or starts a process. A
// marked file cannot drift into needing a database without failing, and a file cannot be moved out of the unit
// run by a rename. A pure test left unmarked still runs in `npm test`; it only misses the fast loop.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const run = (cmd, args, env = {}) =>
  spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } }).status ?? 1;

function testFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'helpers' ? [] : testFiles(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const unitOnly = process.argv.includes('--unit');
const selectors = process.argv.slice(2).filter((arg) => arg !== '--unit');
const UNIT_MARKER = /^import '(\.\/|(\.\.\/)+)helpers\/unit\.js';$/m;
const isUnit = (file) => UNIT_MARKER.test(readFileSync(join(root, file), 'utf8'));
const files = testFiles(join(root, 'test'))
  .map((f) => f.slice(root.length))
  .filter((f) => selectors.length === 0 || selectors.some((s) => f.includes(s)))
  .filter((f) => !unitOnly || isUnit(f))
  .sort();
if (files.length === 0) {
  console.error('no test files selected');
  process.exit(1);
}

if (unitOnly) {
  // One process for every file (the guard of test/helpers/unit.js holds in it for all of them): a process per
  // file would cost more than the tests themselves.
  const status = run(process.execPath, [
    '--import',
    'tsx',
    '--test',
    '--test-isolation=none',
    '--test-reporter=spec',
    ...files,
  ]);
  process.exit(status);
}

if (selectors.length === 0) {
  if (run('npx', ['tsc', '-p', 'tsconfig.json']) !== 0) process.exit(1);
  if (run('npx', ['tsc', '-p', 'ui/tsconfig.json']) !== 0) process.exit(1);
  if (run('npx', ['eslint', '.']) !== 0) process.exit(1);
  if (run('npx', ['prettier', '--check', '.', '--log-level', 'warn']) !== 0) process.exit(1);
  if (run(process.execPath, ['--import', 'tsx', 'scripts/lint-openapi.ts']) !== 0) process.exit(1);
}

// The app serves the web UI from dist/ui and refuses to start without it; browser tests load it.
if (run(process.execPath, ['scripts/build-ui.mjs']) !== 0) {
  console.error('the web UI build failed (node scripts/build-ui.mjs)');
  process.exit(1);
}

// Browser tests skip themselves when Chromium is missing; say so loudly, or fail where they must run.
const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const usesBrowser = files.some((f) => readFileSync(join(root, f), 'utf8').includes('helpers/browser.js'));
let chromiumPresent = true;
try {
  accessSync(chromium, constants.X_OK);
} catch {
  chromiumPresent = false;
}
if (usesBrowser && !chromiumPresent) {
  const install = 'install it with: apt-get install -y chromium (or set CHROMIUM_PATH)';
  if (process.env.HUBGATE_REQUIRE_BROWSER === '1') {
    console.error(
      `!!! browser tests cannot run: chromium not found at ${chromium} and HUBGATE_REQUIRE_BROWSER=1 — ${install}`,
    );
    process.exit(1);
  }
  console.error(`!!! browser tests SKIPPED: chromium not found at ${chromium} — ${install}`);
}

/** Whether `name` is an executable on PATH or in the sbin folders (root's tools live there, often off PATH). */
function onPath(name) {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/sbin'].filter(
    Boolean,
  );
  return dirs.some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

// SSO tests (test/helpers/kdc.ts) skip themselves without MIT Kerberos's KDC tools or the `kerberos` module,
// an optional dependency that `npm ci` leaves out when its native build fails (no libkrb5-dev).
const usesKerberos = files.some((f) => readFileSync(join(root, f), 'utf8').includes('helpers/kdc.js'));
if (usesKerberos) {
  const missing = ['krb5kdc', 'kdb5_util', 'kadmin.local', 'kinit'].filter((name) => !onPath(name));
  try {
    createRequire(join(root, 'package.json'))('kerberos');
  } catch {
    missing.push('the kerberos module');
  }
  if (missing.length > 0) {
    const install =
      'install with: apt-get install -y krb5-kdc krb5-admin-server krb5-user libkrb5-dev, then npm ci';
    if (process.env.HUBGATE_REQUIRE_KERBEROS === '1') {
      console.error(
        `!!! SSO tests cannot run: ${missing.join(', ')} missing and HUBGATE_REQUIRE_KERBEROS=1 — ${install}`,
      );
      process.exit(1);
    }
    console.error(`!!! SSO (Kerberos) tests SKIPPED: ${missing.join(', ')} missing — ${install}`);
  }
}

// The container test (test/container/) builds the image with podman on runc, on a Debian root file system made
// by debootstrap, and runs once, alone after both passes, on PostgreSQL; without those tools it skips itself.
const usesContainer = files.some((f) => readFileSync(join(root, f), 'utf8').includes('helpers/container.js'));
if (usesContainer) {
  const missing = ['podman', 'runc', 'debootstrap'].filter((name) => !onPath(name));
  const why = [
    ...(missing.length > 0
      ? [`${missing.join(', ')} missing (apt-get install -y podman runc debootstrap)`]
      : []),
    ...(process.env.TEST_DATABASE_URL ? [] : ['they run on PostgreSQL, and TEST_DATABASE_URL is unset']),
  ].join('; ');
  if (why && process.env.HUBGATE_REQUIRE_CONTAINER === '1') {
    console.error(`!!! container tests cannot run: ${why}, and HUBGATE_REQUIRE_CONTAINER=1`);
    process.exit(1);
  }
  if (why) console.error(`!!! container tests SKIPPED: ${why}`);
}

console.error(`node ${process.version} (${process.execPath})`);
// The container test builds an image and runs containers: minutes of both cores. Beside another file it would
// starve that file's timing (a server start, a lease) on a 2-core machine, so it runs after the suite, alone,
// once, on PostgreSQL, which is the engine it delivers through.
const isAlone = (f) => f.startsWith('test/container/');
// Coverage: a whole run (no file selected) measures, on its PGlite pass, the share of src/'s lines the suite runs,
// with Node's own coverage (V8's, no dependency, about a sixth more time), prints it in one line and fails below
// COVERAGE_FLOOR. One pass is enough (the PostgreSQL one runs the same code), and a run of a few files would
// measure only them. The floor sits two points under the figure it was set from (docs/contributors/testing.md):
// raise it when the figure rises, never lower it to let a change through.
const COVERAGE_FLOOR = { lines: 96.5 };
const measureCoverage = selectors.length === 0 && process.env.HUBGATE_COVERAGE !== '0';
const passes = [
  {
    name: 'pglite',
    engine: 'pglite',
    files: files.filter((f) => !isAlone(f)),
    concurrency: 2,
    coverage: measureCoverage,
  },
  ...(process.env.TEST_DATABASE_URL
    ? [
        { name: 'postgres', engine: 'postgres', files: files.filter((f) => !isAlone(f)), concurrency: 2 },
        {
          name: 'postgres, alone (container)',
          engine: 'postgres',
          files: files.filter(isAlone),
          concurrency: 1,
        },
      ]
    : []),
].filter((pass) => pass.files.length > 0);
/** Prints the pass's coverage of src/ in one line (from the TAP report's "all files" row); false below the floor. */
function coverageHolds(tapText) {
  const row = /^# all files\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)/m.exec(tapText);
  if (!row) {
    console.error('!!! coverage: no figure in the report');
    return false;
  }
  const [lines, branches, functions] = row.slice(1).map(Number);
  const holds = lines >= COVERAGE_FLOOR.lines;
  process.stdout.write(
    `\ncoverage of src/ (PGlite pass): ${lines}% of lines (floor ${COVERAGE_FLOOR.lines}%), ${branches}% of branches, ${functions}% of functions${holds ? '' : ' — BELOW THE FLOOR'}\n`,
  );
  return holds;
}

const totals = { pass: 0, fail: 0, skipped: 0 };
let failed = false;
for (const pass of passes) {
  console.error(`\n=== test suite on ${pass.name} ===`);
  const tap = join(mkdtempSync(join(tmpdir(), 'hubgate-tap-')), 'out.tap');
  const status = run(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${pass.concurrency}`,
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...(pass.coverage ? ['--experimental-test-coverage', '--test-coverage-include=src/**'] : []),
      ...pass.files,
    ],
    { HUBGATE_TEST_ENGINE: pass.engine },
  );
  const out = readFileSync(tap, 'utf8');
  const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(out)?.[1] ?? 0);
  totals.pass += count('pass');
  totals.fail += count('fail');
  totals.skipped += count('skipped');
  if (status !== 0) failed = true;
  if (pass.coverage && !coverageHolds(out)) failed = true;
}
process.stdout.write(`\n${totals.pass} passed, ${totals.fail} failed, ${totals.skipped} skipped\n`);
process.exit(failed || totals.pass === 0 ? 1 : 0);
