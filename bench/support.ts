import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface Server {
  baseUrl: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts a Node script as a child process and waits for the address it prints. */
export function startProcess(args: string[], env: Record<string, string>, pattern: RegExp): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const onData = (chunk: Buffer) => {
      if (output.length < 100_000) output += chunk.toString();
      const match = pattern.exec(output);
      if (match?.[1]) {
        resolve({
          baseUrl: match[1],
          child,
          stop: () =>
            new Promise((done) => {
              child.once('close', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    };
    // Keep draining the pipes so a chatty server never blocks on a full pipe.
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('close', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`)));
  });
}

/** A fresh PostgreSQL database for one benchmark run, dropped afterwards. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const base =
    process.env.BENCH_DATABASE_URL ??
    process.env.TEST_DATABASE_URL ??
    'postgres://postgres@127.0.0.1:5432/test';
  const name = `hubgate_bench_${randomBytes(6).toString('hex')}`;
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(base);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

export interface LoadResult {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** autocannon against one URL; requests per second and latency percentiles in ms. */
export async function load(
  label: string,
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string> },
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    headers: options.headers,
  });
  return {
    label,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export async function httpJson(
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the benchmark reads whatever JSON came back
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetch(url, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}
