import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

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

/** Runs `hubgate …` from the source tree, as `npx hubgate …` would from a built checkout. */
export function runCli(args: string[], env: Record<string, string>): Promise<CliResult> {
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
  stop(): Promise<number | null>;
}

/** Starts `hubgate serve` on a free port and waits until it says where it listens. */
export function startServe(env: Record<string, string>): Promise<RunningServer> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: ROOT,
      // The line that says where it listens is logged at info.
      env: cliEnv({ PORT: '0', ...env, LOG_LEVEL: 'info' }),
    });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    // A server that never says where it listens fails the test instead of hanging the suite.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within 30 s:\n${output}`));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /hubgate listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({
          child,
          baseUrl: match[1],
          output: () => output,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`serve exited with ${code} before listening:\n${output}`)));
  });
}
