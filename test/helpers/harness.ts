import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { parseConfig, type Config } from '../../src/config.js';
import { createKeyring, type Keyring } from '../../src/crypto/keyring.js';
import type { Database } from '../../src/db/database.js';
import { createPlatformKey } from '../../src/keys/platform-keys.js';
import { createLogger } from '../../src/logger.js';
import { createServices, startBackground, type AppDeps } from '../../src/services.js';
import { responseCheck } from './openapi-check.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

/**
 * A response as a test reads it. `T` is what the test expects the JSON body to be (`request<T>`), so
 * that it reads fields without a cast; `any` unless given. Nothing checks `T` here: the OpenAPI check
 * below compares every body with the document the app publishes.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped by default: tests read whatever JSON came back
export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  text: string;
  body: T;
}

/** A signed-in browser, as the tests hold it: the cookies and the CSRF token of the session. */
export interface TestSession {
  cookie: string;
  csrfToken: string;
}

export interface RequestOptions {
  token?: string;
  /** Sends the session cookie, and the CSRF header on unsafe methods. */
  session?: TestSession;
  body?: unknown;
  /** Sent as is, instead of `body` serialized as JSON. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Harness {
  app: FastifyInstance;
  baseUrl: string;
  config: Config;
  database: Database;
  testDatabase: TestDatabase;
  keyring: Keyring;
  /** A platform key created for this harness. */
  platformToken: string;
  /** Fix the app's clock (null: real time again). */
  setNow(at: Date | null): void;
  /** Everything the app logged so far. */
  logs(): string;
  /** Every response (status line, headers, body) that came back through `request`, one entry each. */
  responses(): string[];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped unless the test says what it expects
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  /** Writes this process's counted usage now (src/usage/meter.ts), so a test can read it or compare tables. */
  flushUsage(): Promise<void>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  timings?: AppDeps['timings'];
  /** Reuse a database (e.g. to run a second app against it); created and dropped otherwise. */
  testDatabase?: TestDatabase;
  /** Share the secret key of another harness, as every process of one deployment does. */
  keyring?: Keyring;
  /** Run delivery workers in this app (off unless asked). */
  workers?: AppDeps['workers'];
  /** Listen on this port of 127.0.0.1 (any free port unless given), e.g. the port of `PUBLIC_URL`. */
  port?: number;
  /** The tenants' requests per minute the gate counts on (none unless given), as quotas will set them. */
  tenantRequestLimit?: AppDeps['tenantRequestLimit'];
}

/** The real app (createServices, buildApp, and startBackground when workers are asked for) on a real port on 127.0.0.1, with its own database and captured logs. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const ownsDatabase = !options.testDatabase;
  const testDatabase = options.testDatabase ?? (await createTestDatabase());
  const database = testDatabase.database;
  const config = parseConfig({ LOG_LEVEL: 'info', ...options.env });
  const keyring = options.keyring ?? createKeyring(randomBytes(32));

  let logText = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logText += chunk.toString();
      done();
    },
  });
  let fixedNow: Date | null = null;
  const now = () => fixedNow ?? new Date();
  const services = await createServices(config, {
    database,
    keyring,
    logger: createLogger(config.logLevel, sink),
    now,
    workers: options.workers,
    ...(options.tenantRequestLimit ? { tenantRequestLimit: options.tenantRequestLimit } : {}),
    // Short enough that a test observes batched writes without waiting seconds.
    timings: { lastUsedFlushMs: 50, rateLimitSyncMs: 100, ...options.timings },
  });
  const app = await buildApp(config, services);
  // As `hubgate serve` does: the background jobs only where the test asks for workers.
  const stopBackground = options.workers
    ? await startBackground(services, { role: 'serve' })
    : async () => {};
  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const { port } = app.server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;

  const { secret: platformToken } = await createPlatformKey(
    database.kysely,
    keyring,
    { name: 'test', expiresAt: null },
    new Date(),
  );

  const seen: string[] = [];
  // Every response a test receives must match the document the app publishes (docs/api/limits.md).
  const check = responseCheck(app.swagger());
  return {
    app,
    baseUrl,
    config,
    database,
    testDatabase,
    keyring,
    platformToken,
    setNow: (at) => {
      fixedNow = at;
    },
    logs: () => logText,
    flushUsage: () => services.ctx.usage.flush(),
    responses: () => seen,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.token) headers.authorization = `Bearer ${opts.token}`;
      if (opts.session) {
        headers.cookie ??= opts.session.cookie;
        if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] ??= opts.session.csrfToken;
      }
      let body: string | Buffer | undefined;
      if (opts.rawBody !== undefined) body = opts.rawBody;
      else if (opts.body !== undefined) {
        body = JSON.stringify(opts.body);
        headers['content-type'] ??= 'application/json';
      }
      // A redirect is an answer to check like any other (the OAuth callback's 303), never followed.
      const response = await fetch(`${baseUrl}${path}`, { method, headers, body, redirect: 'manual' });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      seen.push(
        `${response.status}\n${[...response.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${text}`,
      );
      check({
        method,
        path,
        status: response.status,
        headers: response.headers,
        text,
        body: parsed,
      });
      // The body as the test says it is (`request<T>`); the check above held it to the published document.
      return { status: response.status, headers: response.headers, text, body: parsed as never };
    },
    async close() {
      const background = stopBackground();
      await Promise.all([app.close(), background]);
      await services.close();
      if (ownsDatabase) await testDatabase.drop();
    },
  };
}
