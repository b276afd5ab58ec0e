import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LINES = 50;

/**
 * Runs a process that logs LINES lines through createLogger's standard output (buffered: lines
 * wait for a batch, or for LOG_FLUSH_MS), then ends the way `end` says; resolves what it printed.
 */
function logThenEnd(end: string): Promise<{ stdout: string; code: number | null }> {
  const script = `
    import { createLogger } from './src/logger.ts';
    const log = createLogger('info');
    for (let i = 0; i < ${LINES}; i++) log.info({ i }, 'line');
    ${end}
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
  });
  let stdout = '';
  child.stdout.on('data', (chunk) => {
    stdout += chunk;
  });
  child.stderr.resume();
  return new Promise((resolve) => {
    child.on('close', (code) => resolve({ stdout, code }));
  });
}

const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.includes('"msg":"line"'))
    .map((line) => (JSON.parse(line) as { i: number }).i);

for (const [how, end, code] of [
  ['it runs out of work', '', 0],
  ['process.exit', 'process.exit(3);', 3],
  ['an uncaught exception', 'setImmediate(() => { throw new Error("boom"); });', 1],
  ['an unhandled rejection', 'void Promise.reject(new Error("boom"));', 1],
] as const) {
  test(`no buffered log line is lost when the process ends by ${how}`, async () => {
    const result = await logThenEnd(end);
    assert.equal(result.code, code, `a process ending by ${how} exits with another code`);
    assert.deepEqual(
      lines(result.stdout),
      Array.from({ length: LINES }, (_, i) => i),
      `a process ending by ${how} loses or reorders buffered log lines`,
    );
  });
}

test('a quiet process writes its buffered lines within a moment, without exiting', async () => {
  // The process stays up for 3 s; its lines must be out long before that.
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { createLogger } from './src/logger.ts';
       createLogger('info').info({ i: 0 }, 'line');
       setTimeout(() => {}, 3000);`,
    ],
    { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME } },
  );
  try {
    const seen = await new Promise<number>((resolve, reject) => {
      const started = Date.now();
      let stdout = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        if (lines(stdout).length === 1) resolve(Date.now() - started);
      });
      child.on('close', () => reject(new Error(`exited before the line came out: ${stdout}`)));
    });
    assert.ok(seen < 2500, `the line took ${seen} ms`);
  } finally {
    child.kill('SIGKILL');
  }
});
