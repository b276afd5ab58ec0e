import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { randomBase62 } from '../../src/crypto/base62.js';
import {
  buildImage,
  ensureStandIns,
  missingContainerTools,
  podman,
  RUN_OPTIONS,
} from '../helpers/container.js';
import { startReceiver } from '../helpers/receiver.js';
import { adminQuery, ENGINE, testDatabaseUrl } from '../helpers/test-database.js';
import { waitUntil } from '../helpers/wait.js';

// The image the Containerfile builds, run as an operator runs it (docs/operators/container.md): built on
// local stand-ins for its base images (no registry is reachable here), then started in containers on the
// host's network, so that 127.0.0.1 inside is this machine: the test's PostgreSQL and receiver.
// It builds an image and runs the same containers whatever the engine, so it runs once, in the PostgreSQL
// pass of the suite. scripts/test.mjs says loudly when the tools are missing, and HUBGATE_REQUIRE_CONTAINER=1
// (set by .ci/run) turns that into a failure.

const IMAGE = 'localhost/hubgate:test';
const missing = missingContainerTools();
const skip =
  ENGINE !== 'postgres'
    ? 'the container test runs once, on PostgreSQL (npm test runs it alone after both passes)'
    : missing.length > 0 && process.env.HUBGATE_REQUIRE_CONTAINER !== '1'
      ? `${missing.join(', ')} missing (apt-get install -y podman runc debootstrap)`
      : false;

const DEV_ONLY = ['typescript', 'eslint', 'prettier', 'tsx', 'esbuild', 'playwright-core', 'autocannon'];

/** Run by the image's Node: every package under /app/node_modules, nested ones included, as name@version. */
const LIST_PACKAGES = `
const fs = require('node:fs');
const found = [];
const walk = (dir) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const path = dir + '/' + entry.name;
    if (entry.name.startsWith('@')) { walk(path); continue; }
    const manifest = path + '/package.json';
    if (!fs.existsSync(manifest)) continue;
    const { name, version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    found.push(name + '@' + version);
    if (fs.existsSync(path + '/node_modules')) walk(path + '/node_modules');
  }
};
walk('/app/node_modules');
console.log(JSON.stringify(found));
`;

/** A port of 127.0.0.1 that nothing listens on now: the containers share the host's network. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const envArgs = (env: Record<string, string>) => Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);

interface Container {
  name: string;
  baseUrl: string;
  logs(): Promise<string>;
  /** SIGTERM to the container's PID 1, then its exit code once it has stopped. */
  terminate(): Promise<number>;
}

const started: string[] = [];

/**
 * Starts the image detached with its default command (`hubgate serve`) on `port`, with `options` for
 * `podman run` (a volume), and waits until /readyz answers 200.
 */
async function startContainer(env: Record<string, string>, port: number, options: string[] = []) {
  const name = `hubgate-test-${randomBase62(8).toLowerCase()}`;
  started.push(name);
  await podman([
    'run',
    '-d',
    '--name',
    name,
    ...RUN_OPTIONS,
    ...options,
    ...envArgs({ PORT: String(port), ...env }),
    IMAGE,
  ]);
  const container: Container = {
    name,
    baseUrl: `http://127.0.0.1:${port}`,
    logs: async () => {
      const logs = await podman(['logs', name], { check: false });
      return logs.stdout + logs.stderr;
    },
    terminate: async () => {
      await podman(['kill', '--signal', 'TERM', name]);
      const waited = await podman(['wait', name]);
      return Number(waited.stdout.trim());
    },
  };
  let lastSeen = '';
  await waitUntil(
    async () => {
      const state = await podman(['inspect', '--format', '{{.State.Status}}', name], { check: false });
      if (state.stdout.trim() === 'exited')
        assert.fail(`the container exited before it was ready:\n${await container.logs()}`);
      try {
        const ready = await fetch(`${container.baseUrl}/readyz`);
        lastSeen = `${ready.status}`;
        return ready.status === 200;
      } catch (error) {
        lastSeen = String(error);
        return false;
      }
    },
    {
      message: () => `/readyz of the container to answer 200 (last: ${lastSeen})`,
      timeoutMs: 120_000,
      intervalMs: 250,
    },
  );
  return container;
}

/** `podman run --rm IMAGE …`, as a one-shot command of the image: its output and exit code. */
const runOnce = (env: Record<string, string>, args: string[], entrypoint?: string) =>
  podman(
    [
      'run',
      '--rm',
      ...RUN_OPTIONS,
      ...(entrypoint ? ['--entrypoint', entrypoint] : []),
      ...envArgs(env),
      IMAGE,
      ...args,
    ],
    { check: false },
  );

describe('the container image', { skip }, () => {
  before(
    async () => {
      const standIns = await ensureStandIns();
      const previous = await podman(['image', 'inspect', '--format', '{{.Id}}', IMAGE], { check: false });
      await buildImage(IMAGE, standIns);
      // Each build that changed something leaves the previous image behind: it is not needed again.
      const current = await podman(['image', 'inspect', '--format', '{{.Id}}', IMAGE]);
      if (previous.code === 0 && previous.stdout.trim() !== current.stdout.trim()) {
        await podman(['rmi', previous.stdout.trim()], { check: false });
      }
    },
    { timeout: 20 * 60_000 },
  );
  after(async () => {
    for (const name of started)
      await podman(['rm', '--force', '--volumes', '--time', '0', name], { check: false });
  });

  test('holds production dependencies only, and a CycloneDX SBOM naming them', async () => {
    const sbomRun = await runOnce({}, ['/usr/share/hubgate/sbom.json'], 'cat');
    assert.equal(sbomRun.code, 0, `the image has /usr/share/hubgate/sbom.json: ${sbomRun.stderr}`);
    const sbom = JSON.parse(sbomRun.stdout) as {
      bomFormat: string;
      metadata: { component: { name: string } };
      components: Array<{ name: string; version: string }>;
    };
    assert.equal(sbom.bomFormat, 'CycloneDX', 'the SBOM is CycloneDX JSON');
    assert.equal(sbom.metadata.component.name, 'hubgate', 'the SBOM describes hubgate');
    const named = new Set(sbom.components.map((c) => `${c.name}@${c.version}`));
    const installed = await runOnce({}, ['-e', LIST_PACKAGES], 'node');
    assert.equal(installed.code, 0, `node runs in the image: ${installed.stderr}`);
    const packages = new Set(JSON.parse(installed.stdout) as string[]);
    assert.deepEqual(
      [...packages].filter((p) => !named.has(p)),
      [],
      'the SBOM names every package in the image',
    );
    assert.deepEqual(
      [...named].filter((p) => !packages.has(p)),
      [],
      'the SBOM names no package the image does not hold',
    );
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const names = new Set([...packages].map((p) => p.slice(0, p.lastIndexOf('@'))));
    for (const dependency of Object.keys(pkg.dependencies)) {
      assert.ok(names.has(dependency), `the image holds the dependency ${dependency}`);
    }
    for (const absent of [...DEV_ONLY, 'kerberos']) {
      assert.ok(!names.has(absent), `no development tool (nor kerberos) is in the image: ${absent}`);
    }

    const version = await runOnce({}, ['--version'], 'node');
    assert.match(version.stdout, /^v24\./, 'the image runs on Node 24');
  });

  test('embedded mode: ready, the setup link on first start, as a non-root user, and a clean stop', async (t) => {
    const volume = `hubgate-test-data-${randomBase62(8).toLowerCase()}`;
    await podman(['volume', 'create', volume]);
    t.after(() => podman(['volume', 'rm', '--force', volume], { check: false }));
    const port = await freePort();
    const container = await startContainer({}, port, ['--volume', `${volume}:/data`]);

    const setup = await waitUntil(
      async () =>
        /Set up hubgate in your browser: (http:\/\/localhost:\d+\/setup#token=\S+)/.exec(
          await container.logs(),
        ),
      { message: 'the setup line in the container output' },
    );
    assert.ok(
      setup[1]!.startsWith(`http://localhost:${port}/setup#token=`),
      `the setup link names the port: ${setup[1]}`,
    );

    assert.match(
      await container.logs(),
      new RegExp(`hubgate listening on http://0\\.0\\.0\\.0:${port}`),
      'serve listens on every address of the container, as HOST=0.0.0.0 in the image says',
    );
    const status = await podman(['exec', container.name, 'cat', '/proc/1/status']);
    const uid = /^Uid:\s+(\d+)/m.exec(status.stdout)?.[1];
    assert.ok(uid !== undefined && uid !== '0', `hubgate runs as a non-root user (uid ${uid})`);
    const health = await podman(['healthcheck', 'run', container.name], { check: false });
    assert.equal(
      health.code,
      0,
      `the image's health check passes while serve runs: ${health.stdout}${health.stderr}`,
    );
    const help = await podman(['exec', container.name, 'hubgate', '--help'], { check: false });
    assert.equal(help.code, 0, `hubgate is a command inside the container: ${help.stderr}`);
    const files = await podman(['exec', container.name, 'ls', '/data']);
    assert.match(
      files.stdout,
      /secret\.key/,
      'the embedded database and its generated key live in the /data volume',
    );

    assert.equal(
      await container.terminate(),
      0,
      `SIGTERM stops serve with exit code 0:\n${await container.logs()}`,
    );
  });

  test('a stop during the start ends the container at once with exit code 0 (node is PID 1)', async (t) => {
    // PID 1 ignores a signal it has no handler for: before the fix of issue 37 item 5, a SIGTERM sent
    // while the embedded database was being created was dropped, and the runtime's grace ended in SIGKILL.
    const volume = `hubgate-test-data-${randomBase62(8).toLowerCase()}`;
    await podman(['volume', 'create', volume]);
    t.after(() => podman(['volume', 'rm', '--force', volume], { check: false }));
    const name = `hubgate-test-${randomBase62(8).toLowerCase()}`;
    started.push(name);
    const port = await freePort();
    await podman([
      'run',
      '-d',
      '--name',
      name,
      ...RUN_OPTIONS,
      '--volume',
      `${volume}:/data`,
      ...envArgs({ PORT: String(port) }),
      IMAGE,
    ]);
    const logs = async () => {
      const out = await podman(['logs', name], { check: false });
      return out.stdout + out.stderr;
    };
    // The positive signal that the start is under way: the data directory's lock, taken before the
    // embedded database is created (seconds).
    await waitUntil(
      async () =>
        (await podman(['exec', name, 'ls', '/data'], { check: false })).stdout.includes('hubgate.lock'),
      { message: 'serve in the container to begin opening /data', timeoutMs: 60_000, intervalMs: 100 },
    );
    assert.doesNotMatch(await logs(), /hubgate listening on/, 'the signal arrives during the start');
    await podman(['kill', '--signal', 'TERM', name]);
    await waitUntil(
      async () =>
        (await podman(['inspect', '--format', '{{.State.Status}}', name], { check: false })).stdout.trim() ===
        'exited',
      {
        message: 'the container to exit on a SIGTERM sent during its start',
        timeoutMs: 10_000,
        intervalMs: 100,
      },
    );
    const code = await podman(['inspect', '--format', '{{.State.ExitCode}}', name]);
    assert.equal(code.stdout.trim(), '0', `a stop during the start exits 0:\n${await logs()}`);
    assert.match(await logs(), /SIGTERM while serve was starting/, 'it says why it stopped');
  });

  test('PostgreSQL: migrate, a platform key, serve, one event delivered and signed, a clean stop', async (t) => {
    const database = `hubgate_image_${randomBase62(10).toLowerCase()}`;
    await adminQuery(`create database ${database}`);
    t.after(() => adminQuery(`drop database if exists ${database} with (force)`));
    const url = new URL(testDatabaseUrl());
    url.pathname = `/${database}`;
    const env = { DATABASE_URL: url.toString(), HUBGATE_SECRET_KEY: randomBytes(32).toString('base64') };

    const migrated = await runOnce(env, ['migrate']);
    assert.equal(migrated.code, 0, `the migrate command exits 0: ${migrated.stderr}`);
    assert.equal(migrated.stdout, 'database schema is up to date\n', 'migrate says the schema is up to date');
    const created = await runOnce(env, ['platform-key', 'create', '--name', 't']);
    assert.equal(created.code, 0, `platform-key create exits 0: ${created.stderr}`);
    const plt = (JSON.parse(created.stdout) as { secret: string }).secret;

    const receiver = await startReceiver(t);
    const port = await freePort();
    const server = await startContainer(
      { ...env, DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' },
      port,
    );
    const call = async (
      method: string,
      path: string,
      o: { token?: string; cookie?: string; csrf?: string; body?: unknown },
    ) => {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      if (o.cookie) headers.cookie = o.cookie;
      if (o.csrf) headers['x-csrf-token'] = o.csrf;
      const response = await fetch(`${server.baseUrl}${path}`, {
        method,
        headers,
        body: JSON.stringify(o.body),
      });
      const text = await response.text();
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the test reads whatever JSON came back
      return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as any };
    };

    const tenant = await call('POST', '/api/v1/platform/tenants', {
      token: plt,
      body: { name: 'Container', entitlements: ['integrations', 'integration_hub'] },
    });
    assert.equal(tenant.status, 201, `the platform key creates a tenant: ${tenant.text}`);
    const password = 'a long passphrase for the image test';
    const email = `it-${randomBase62(6).toLowerCase()}@example.com`;
    const user = await call('POST', `/api/v1/platform/tenants/${tenant.body.id}/users`, {
      token: plt,
      body: { email, role: 'COMPANY_IT_ADMIN', password },
    });
    assert.equal(user.status, 201, `the platform key creates a user: ${user.text}`);
    const login = await call('POST', '/api/v1/auth/login', { body: { email, password } });
    assert.equal(login.status, 200, `the user signs in: ${login.text}`);
    const session = {
      cookie: login.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; '),
      csrf: login.body.csrfToken as string,
    };
    const key = await call('POST', '/api/v1/company/api-keys', {
      ...session,
      body: {
        name: 'image',
        scopes: ['integrations:ADMIN'],
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    assert.equal(key.status, 201, `the user creates a tnt_ key: ${key.text}`);
    const tnt = key.body.secret as string;
    const connection = await call('POST', '/api/v1/integrations/connections', {
      token: tnt,
      body: { connectorKey: 'webhook', displayName: 'receiver', url: receiver.url() },
    });
    assert.equal(connection.status, 201, `the key creates a webhook connection: ${connection.text}`);
    const bound = await call('PUT', `/api/v1/integrations/connections/${connection.body.id}/credentials`, {
      token: tnt,
      body: {},
    });
    assert.equal(bound.status, 200, `the connection gets a signing secret: ${bound.text}`);
    const signingSecret = bound.body.credentials.signingSecret as string;

    const published = await call('POST', '/api/v1/integrations/events', {
      token: tnt,
      body: { type: 'order.paid', data: { orderId: 'A-1001' } },
    });
    assert.equal(published.status, 202, `the event is accepted: ${published.text}`);
    assert.equal(published.body.deliveries, 1, 'one delivery, to the receiver');
    const [arrived] = await receiver.waitFor(1, 30_000);
    const verified = new Webhook(signingSecret).verify(arrived!.body, {
      'webhook-id': String(arrived!.headers['webhook-id']),
      'webhook-timestamp': String(arrived!.headers['webhook-timestamp']),
      'webhook-signature': String(arrived!.headers['webhook-signature']),
    }) as { type: string; data: { orderId: string } };
    assert.deepEqual(
      { type: verified.type, orderId: verified.data.orderId },
      { type: 'order.paid', orderId: 'A-1001' },
      'the receiver gets the event with a valid signature',
    );

    const logs = await server.logs();
    for (const secret of [plt, tnt, signingSecret, password, env.HUBGATE_SECRET_KEY]) {
      assert.ok(!logs.includes(secret), 'no secret appears in the container output');
    }
    assert.equal(await server.terminate(), 0, `SIGTERM stops serve with exit code 0:\n${logs}`);
  });
});

/**
 * compose.yaml cannot run here (its PostgreSQL image needs a registry) and no YAML parser is a dependency:
 * its services are read by indentation, which is enough to check what each one runs and waits for.
 */
function composeServices(text: string): Map<string, string> {
  const lines = text.split('\n');
  const start = lines.indexOf('services:');
  const services = new Map<string, string>();
  let current: string | undefined;
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break;
    const name = /^ {2}([a-z-]+):$/.exec(line)?.[1];
    if (name) current = name;
    else if (current) services.set(current, `${services.get(current) ?? ''}${line}\n`);
  }
  return services;
}

const once = ENGINE !== 'postgres' && 'compose.yaml is checked once, on PostgreSQL';
test('compose.yaml runs PostgreSQL, then migrate, then serve and worker', { skip: once }, () => {
  const text = readFileSync(new URL('../../compose.yaml', import.meta.url), 'utf8');
  const services = composeServices(text);
  assert.deepEqual([...services.keys()], ['postgres', 'migrate', 'serve', 'worker'], 'the four services');
  const [postgres, migrate, serve, worker] = ['postgres', 'migrate', 'serve', 'worker'].map((n) =>
    services.get(n)!,
  );
  assert.match(postgres!, /pg_isready/, 'PostgreSQL has a pg_isready health check');
  assert.match(
    postgres!,
    /- postgres-data:\/var\/lib\/postgresql\/data/,
    "PostgreSQL's data is in a named volume",
  );
  assert.match(text, /^volumes:\n {2}postgres-data:/m, 'the volume is declared');
  assert.match(migrate!, /command: \['migrate'\]/, 'migrate runs hubgate migrate');
  assert.match(
    migrate!,
    /postgres:\n\s+condition: service_healthy/,
    'migrate waits for PostgreSQL to be healthy',
  );
  for (const [name, body, command] of [
    ['serve', serve!, 'serve'],
    ['worker', worker!, 'worker'],
  ] as const) {
    assert.match(body, new RegExp(`command: \\['${command}'\\]`), `${name} runs hubgate ${command}`);
    assert.match(body, /<<: \*hubgate/, `${name} uses the image and settings every hubgate service shares`);
    assert.match(
      body,
      /migrate:\n\s+condition: service_completed_successfully/,
      `${name} starts once migrate has succeeded`,
    );
  }
  assert.match(serve!, /'8080:8080'/, 'serve publishes port 8080');
  assert.match(serve!, /\/readyz/, 'serve has a /readyz health check');
  assert.match(
    text,
    /HUBGATE_SECRET_KEY: \$\{HUBGATE_SECRET_KEY:\?/,
    'a missing secret key stops compose with a message',
  );
  assert.match(text, /PUBLIC_URL: \$\{PUBLIC_URL:-http:\/\/localhost:8080\}/, 'PUBLIC_URL can be set');
});
