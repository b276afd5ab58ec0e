import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ENGINE } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PUBLIC_URL = 'http://hub.test:8080';
const SETUP_LINE =
  /^Set up hubgate in your browser: http:\/\/hub\.test:8080\/setup#token=([0-9A-Za-z]{32}) {2}\(valid 24 hours, once\)$/;

interface Serving {
  child: ChildProcess;
  baseUrl: string;
  stdout(): string;
  stderr(): string;
  stop(): Promise<number | null>;
}

/**
 * `hubgate serve` as a newcomer runs it, with standard output and standard error kept apart (the
 * setup line must be on standard output, and in no log line); resolves once it listens.
 */
function serve(dataDir: string): Promise<Serving> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: '0',
      PUBLIC_URL,
      LOG_LEVEL: 'info',
    },
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within 60 s:\n${stdout}\n${stderr}`));
    }, 60_000);
    void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${stdout}\n${stderr}`)));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /hubgate listening on (http:\/\/[\d.]+:\d+)/.exec(stdout);
      if (!match?.[1]) return;
      clearTimeout(timer);
      resolve({
        child,
        baseUrl: match[1],
        stdout: () => stdout,
        stderr: () => stderr,
        stop: async () => {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
  });
}

const setupLines = (stdout: string) => stdout.split('\n').filter((line) => line.includes('/setup#token='));

async function waitForToken(server: Serving): Promise<string> {
  await waitUntil(() => setupLines(server.stdout()).length > 0, {
    message: 'the setup line',
    timeoutMs: 30_000,
  });
  const lines = setupLines(server.stdout());
  assert.equal(lines.length, 1, server.stdout());
  const match = SETUP_LINE.exec(lines[0] ?? '');
  assert.ok(match?.[1], lines[0]);
  return match[1];
}

/** Every log line serve wrote (pino's JSON, on standard output), and standard error. */
const logLines = (server: Serving) => [
  ...server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{')),
  server.stderr(),
];

// The embedded default: a newcomer's `npm start`. Runs once, in the PGlite run of the suite.
if (ENGINE === 'pglite') {
  describe('hubgate serve prints the setup URL while no user exists', () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'hubgate-setup-')), 'data');
    // Each start is stopped when its test ends, passed or not: the next one needs the data directory.
    const start = async (t: TestContext): Promise<Serving> => {
      const server = await serve(dataDir);
      t.after(() => server.stop());
      return server;
    };

    let firstToken: string;

    test('the first start prints one line on standard output, after the listening line, with a 32-character token', async (t) => {
      const server = await start(t);
      firstToken = await waitForToken(server);
      const stdout = server.stdout();
      assert.ok(
        stdout.indexOf('hubgate listening on') < stdout.indexOf('/setup#token='),
        'the setup line follows the listening line',
      );
      assert.ok(!setupLines(server.stderr()).length, 'not on standard error');
      for (const line of logLines(server))
        assert.ok(!line.includes(firstToken), 'the token is in no log line');
      const required = await fetch(`${server.baseUrl}/api/v1/setup`);
      assert.deepEqual(
        await required.json(),
        { required: true },
        'a fresh hub does not say setup is required',
      );
      assert.equal(await server.stop(), 0, 'the server does not stop cleanly');
    });

    test('every start while no user exists makes a new token; the older one stays valid and sets the hub up', async (t) => {
      const server = await start(t);
      const secondToken = await waitForToken(server);
      assert.notEqual(secondToken, firstToken, 'a second start prints the same setup token again');
      const response = await fetch(`${server.baseUrl}/api/v1/setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          token: firstToken,
          organizationName: 'Newcomer Ltd',
          email: 'admin@newcomer.example',
          password: 'a long enough password',
        }),
      });
      const body = (await response.json()) as { user: { role: string }; platformKey: { secret: string } };
      assert.equal(response.status, 201, JSON.stringify(body));
      assert.equal(
        body.user.role,
        'PLATFORM_ADMIN',
        'the first administrator is not a platform administrator',
      );
      // The token that opened nothing is useless now too.
      const again = await fetch(`${server.baseUrl}/api/v1/setup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          token: secondToken,
          organizationName: 'Second',
          email: 'second@newcomer.example',
          password: 'a long enough password',
        }),
      });
      assert.equal(again.status, 409, 'a second setup with the newer token is not refused as already done');
      for (const line of logLines(server)) {
        for (const secret of [firstToken, secondToken, 'a long enough password', body.platformKey.secret]) {
          assert.ok(!line.includes(secret), 'no secret in any log line');
        }
      }
      assert.equal(await server.stop(), 0, 'the server does not stop cleanly');
    });

    test('once a user exists, serve prints no setup line at all', async (t) => {
      const server = await start(t);
      const required = await fetch(`${server.baseUrl}/api/v1/setup`);
      assert.deepEqual(
        await required.json(),
        { required: false },
        'the hub still says setup is required once a user exists',
      );
      // Stopped cleanly (exit 0): whatever start-up wrote is in the output, and there is no such line.
      assert.equal(await server.stop(), 0, 'the server does not stop cleanly');
      assert.deepEqual(
        setupLines(server.stdout()),
        [],
        'a setup line is printed on standard output though a user exists',
      );
      assert.deepEqual(
        setupLines(server.stderr()),
        [],
        'a setup line is printed on standard error though a user exists',
      );
      assert.ok(
        server
          .stdout()
          .split('\n')
          .every((line) => line === '' || line.startsWith('{')),
        'nothing but log lines on standard output',
      );
    });
  });
}
