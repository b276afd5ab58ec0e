import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { request, type Dispatcher } from 'undici';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** The Node flags `npm start` runs hubgate with: the script's words between `node` and the file. */
const START_FLAGS = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }
).scripts.start
  .split(' ')
  .filter((word) => word.startsWith('--'));

export interface Server {
  baseUrl: string;
  child: ChildProcess;
  /** Where the child's stdout and stderr went. */
  logPath: string;
  stop(): Promise<void>;
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a Node script as a child process on `port` and waits until `ready` answers 200 (a path)
 * or appears in its output (a pattern, for processes that serve no HTTP).
 * Its output goes straight to a file, not through this process: the load generator runs here, and
 * relaying a busy server's log lines would steal its CPU and distort both sides of the comparison.
 */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
  port: number,
  ready: string | RegExp,
  // Another build's folder (bench/embedded.ts runs an earlier commit beside this one).
  cwd: string = ROOT,
): Promise<Server> {
  const logPath = join(tmpdir(), `hubgate-bench-${process.pid}-${port}.log`);
  const log = openSync(logPath, 'w');
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the servers under load.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  // Compiled JavaScript runs as `npm start` runs it (with its V8 flag, package.json); TypeScript
  // goes through tsx.
  const loader = args[0]?.endsWith('.ts') ? ['--import', 'tsx'] : START_FLAGS;
  const child = spawn(process.execPath, [...nodeArgs, ...loader, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, PORT: String(port) },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited !== undefined) {
      throw new Error(`${args.join(' ')} exited with ${exited}:\n${readFileSync(logPath, 'utf8')}`);
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${args.join(' ')} did not become ready:\n${readFileSync(logPath, 'utf8')}`);
    }
    const ok =
      typeof ready === 'string'
        ? await fetch(baseUrl + ready).then(
            (r) => r.ok,
            () => false,
          )
        : ready.test(readFileSync(logPath, 'utf8'));
    if (ok) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    baseUrl,
    child,
    logPath,
    stop: () =>
      new Promise((done) => {
        if (exited !== undefined) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
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
  /** Requests answered in all (the rate is their mean per second). */
  requests?: number;
}

/** autocannon against one URL (GET, or POST of a JSON `body`); requests per second and latency percentiles in ms. */
export async function load(
  label: string,
  url: string,
  options: { connections: number; seconds: number; headers?: Record<string, string>; body?: unknown },
): Promise<LoadResult> {
  const posting = options.body !== undefined;
  const result = await autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    ...(posting
      ? {
          method: 'POST' as const,
          headers: { ...options.headers, 'content-type': 'application/json' },
          body: JSON.stringify(options.body),
        }
      : { headers: options.headers }),
  });
  return {
    label,
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    requests: result.requests.total,
  };
}

/** A case's turns (rounds taken in turn with the other cases) as one: the mean rate, the median turn's p50, the worst turn's p99. */
export function combinedTurns(label: string, turns: LoadResult[]): LoadResult {
  const sum = (pick: (r: LoadResult) => number) => turns.reduce((total, r) => total + pick(r), 0);
  const p50s = turns.map((r) => r.p50).sort((x, y) => x - y);
  return {
    label,
    rps: sum((r) => r.rps) / turns.length,
    p50: p50s[Math.floor(p50s.length / 2)] ?? 0,
    p99: Math.max(...turns.map((r) => r.p99)),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    requests: sum((r) => r.requests ?? 0),
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

/**
 * A tenant with an admin who is signed in, made through hubgate's API with a platform key: the
 * session headers (cookie and CSRF token), a tnt_ key with `scopes`, and the tenant's ID.
 */
export async function benchTenant(
  baseUrl: string,
  platformKey: string,
  entitlements: string[],
  scopes: string[],
): Promise<{ session: Record<string, string>; keySecret: string; tenantId: string }> {
  const auth = { authorization: `Bearer ${platformKey}` };
  const tenant = await httpJson('POST', `${baseUrl}/api/v1/platform/tenants`, auth, {
    name: 'Bench',
    entitlements,
  });
  // An address of its own per tenant: an active person's address is unique across tenants, so a
  // second tenant's admin with the first's address was refused, and signing in reached the first
  // tenant (the "other tenant" of a benchmark was the first one again).
  const credentials = {
    email: `bench-${randomBytes(4).toString('hex')}@example.com`,
    password: 'bench password 123',
  };
  await httpJson('POST', `${baseUrl}/api/v1/platform/tenants/${tenant.body.id}/users`, auth, {
    ...credentials,
    role: 'COMPANY_IT_ADMIN',
  });
  const login = await httpJson('POST', `${baseUrl}/api/v1/auth/login`, {}, credentials);
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const session = { cookie, 'x-csrf-token': login.body.csrfToken as string };
  const key = await httpJson('POST', `${baseUrl}/api/v1/company/api-keys`, session, {
    name: 'bench',
    scopes,
    expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
  });
  return { session, keySecret: key.body.secret as string, tenantId: tenant.body.id as string };
}

let built = false;

/** POSTs a JSON body through `dispatcher`; the answer's text, or an error for anything but 2xx. */
export async function postJson(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  payload: string,
): Promise<string> {
  const r = await request(url, {
    method: 'POST',
    body: payload,
    dispatcher,
    headers: { 'content-type': 'application/json', ...headers },
  });
  const text = await r.body.text();
  if (r.statusCode < 200 || r.statusCode >= 300)
    throw new Error(`POST ${url}: ${r.statusCode} ${text.slice(0, 300)}`);
  return text;
}

/** Runs `count` jobs, `concurrency` at a time. */
export async function pool(
  count: number,
  concurrency: number,
  job: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

/** Builds hubgate (once per benchmark run), so the benchmarks run it as `npm start` does: compiled, from dist/. */
export function buildHubgate(): void {
  if (built) return;
  built = true;
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

/** Migrates the database of `env` with the built CLI and creates a platform key; returns its secret. */
export function prepareHubgate(env: Record<string, string>, cwd: string = ROOT): string {
  const cli = (args: string[]) => {
    const r = spawnSync(process.execPath, ['dist/main.js', ...args], {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      encoding: 'utf8',
    });
    if (r.status !== 0) throw new Error(`hubgate ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  cli(['migrate']);
  return (JSON.parse(cli(['platform-key', 'create', '--name', 'bench'])) as { secret: string }).secret;
}

/**
 * An earlier commit, exported with `git archive` into a folder of the temporary directory, installed
 * from its own lock file and built there, kept for later runs: the benchmarks run it beside the build
 * of today in the same run. Returns the folder, to run `dist/main.js` in.
 */
export function buildOfCommit(commit: string): string {
  const dir = join(tmpdir(), `hubgate-prev-${commit}`);
  if (existsSync(join(dir, 'dist/main.js'))) return dir;
  mkdirSync(dir, { recursive: true });
  const run = (command: string, args: string[], cwd: string) => {
    const r = spawnSync(command, args, { cwd, stdio: 'inherit', shell: false });
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed in ${cwd}`);
  };
  run('sh', ['-c', `git archive ${commit} | tar -x -C ${dir}`], ROOT);
  run('npm', ['ci', '--no-audit', '--no-fund'], dir);
  run('npm', ['run', 'build', '--silent'], dir);
  return dir;
}
