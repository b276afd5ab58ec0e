import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCommand } from '../../src/cli/run.js';
import type { Cleanup } from './cleanup.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Environment for the CLI: only what the test gives, so the developer's own settings never leak in. */
function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env };
}

/**
 * Runs `hubgate …` in this process (`runCommand`, what `main` runs), with its output captured: a
 * case costs milliseconds instead of a process start. `serve` and `worker` run until a signal, and
 * signals reach a process: start them with `startServe`/`startWorker`, or `spawnCli` to see them fail.
 */
export async function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  if (args[0] === 'serve' || args[0] === 'worker') {
    throw new Error(`hubgate ${args[0]} runs as a process in tests: use spawnCli, startServe or startWorker`);
  }
  let stdout = '';
  let stderr = '';
  const code = await runCommand(args, {
    env: cliEnv(env),
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

/** Runs `hubgate …` as its own process from the source tree, as `npx hubgate …` would from a built checkout. */
export function spawnCli(args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
      cwd: ROOT,
      env: cliEnv(env),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
    });
    child.stderr.on('data', (c) => {
      stderr += c;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface RunningServer {
  child: ChildProcess;
  baseUrl: string;
  output(): string;
  /** SIGTERM, then the exit code; the same answer however often it is called. */
  stop(): Promise<number | null>;
}

/**
 * Starts `hubgate serve` on a free port and waits until it says where it listens. Given `cleanup`
 * (a test's `t`, or `after`), it is stopped when that ends.
 */
export function startServe(env: Record<string, string>, cleanup?: Cleanup): Promise<RunningServer> {
  const ready = /hubgate listening on (http:\/\/[\d.]+:\d+)/;
  return startCommand('serve', { PORT: '0', ...env }, ready, cleanup);
}

/** Starts `hubgate worker` and waits until it says it runs; stopped when `cleanup` ends, if given. */
export function startWorker(env: Record<string, string>, cleanup?: Cleanup): Promise<RunningServer> {
  return startCommand('worker', env, /hubgate worker (running)/, cleanup);
}

const START_TIMEOUT_MS = 90_000;

async function startCommand(
  command: string,
  env: Record<string, string>,
  ready: RegExp,
  cleanup: Cleanup | undefined,
): Promise<RunningServer> {
  const server = await spawnUntilReady(command, env, ready);
  cleanup?.after(() => server.stop());
  return server;
}

function spawnUntilReady(
  command: string,
  env: Record<string, string>,
  ready: RegExp,
): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', command], {
      cwd: ROOT,
      // The line that says it is ready is logged at info.
      env: cliEnv({ ...env, LOG_LEVEL: 'info' }),
    });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    // A process that never says it is ready fails the test instead of hanging the suite. Generous:
    // tsx compiles the sources as it loads them, which on two cores shared with another test file, a
    // PGlite initdb and a build took over 30 s.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not start within ${START_TIMEOUT_MS / 1000} s:\n${output}`));
    }, START_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = ready.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({
          child,
          baseUrl: match[1],
          output: () => output,
          stop: async () => {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) =>
      reject(new Error(`${command} exited with ${code} before it was ready:\n${output}`)),
    );
  });
}
