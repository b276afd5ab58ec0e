import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config.js';
import { runCli, spawnCli, startServe, type RunningServer } from '../helpers/cli.js';
import { startHarness } from '../helpers/harness.js';
import { kerberosSkipReason, startKdc, TEST_REALM, useKerberosEnv, type Kdc } from '../helpers/kdc.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';

// Single sign-on fails fast (docs/operators/sso.md): a configuration it cannot use stops start-up with one
// line naming the variable, in parseConfig, in buildApp, and through the real `hubgate serve`.

const SSO = { SSO_SPNEGO_KEYTAB: '/etc/krb5.keytab', SSO_SPNEGO_EMAIL_DOMAIN: 'example.com' };

// Skipped test by test, not as a suite, so that the run's totals count them as skipped.
const skip = kerberosSkipReason();

/** The error `run` threw (synchronously or by rejecting). */
async function caught(run: () => unknown): Promise<Error> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof Error, 'something other than an Error was thrown');
    return error;
  }
  assert.fail('expected an error');
}

describe('single sign-on configuration (parseConfig)', () => {
  test('off unless SSO_SPNEGO_KEYTAB is set (an empty value is unset)', () => {
    assert.equal(parseConfig({}).sso, null, 'SSO is on with no SSO variable set');
    assert.equal(
      parseConfig({ SSO_SPNEGO_KEYTAB: '', SSO_SPNEGO_EMAIL_DOMAIN: 'example.com' }).sso,
      null,
      'an empty SSO_SPNEGO_KEYTAB turns SSO on',
    );
    assert.equal(
      parseConfig({ SSO_SPNEGO_EMAIL_DOMAIN: 'example.com', SSO_SPNEGO_REALM: 'X.TEST' }).sso,
      null,
      'SSO is on without a keytab',
    );
  });

  test('SSO_SPNEGO_KEYTAB without SSO_SPNEGO_EMAIL_DOMAIN refuses to start, in one line naming it', async () => {
    const error = await caught(() => parseConfig({ SSO_SPNEGO_KEYTAB: '/etc/krb5.keytab' }));
    assert.ok(error instanceof ConfigError, 'a missing email domain is not a configuration error');
    assert.match(
      error.message,
      /SSO_SPNEGO_EMAIL_DOMAIN/,
      'the start-up error does not name SSO_SPNEGO_EMAIL_DOMAIN',
    );
    assert.equal(error.message.split('\n').length, 1, 'the start-up error takes more than one line');
  });

  test('the principal defaults to HTTP@<PUBLIC_URL host>; the realm to any; the domain is lower-cased', () => {
    const config = parseConfig({
      ...SSO,
      SSO_SPNEGO_EMAIL_DOMAIN: 'Example.COM',
      PUBLIC_URL: 'https://Hub.Example.com:8443',
    });
    assert.deepEqual(
      config.sso,
      {
        keytab: '/etc/krb5.keytab',
        emailDomain: 'example.com',
        principal: 'HTTP@hub.example.com',
        realm: null,
      },
      "the SSO defaults are not the public host's principal, any realm and the lower-cased domain",
    );
    assert.equal(
      parseConfig({ ...SSO, PORT: '9000' }).sso?.principal,
      'HTTP@localhost',
      'without PUBLIC_URL the principal is not HTTP@localhost',
    );
    const set = parseConfig({
      ...SSO,
      SSO_SPNEGO_PRINCIPAL: 'HTTP@sso.example.com',
      SSO_SPNEGO_REALM: TEST_REALM,
    });
    assert.equal(set.sso?.principal, 'HTTP@sso.example.com', 'the principal set is not used');
    assert.equal(set.sso?.realm, TEST_REALM, 'the realm set is not used');
  });

  test('a malformed value stops start-up with one line naming its variable', async () => {
    const bad: [Record<string, string>, string][] = [
      [{ SSO_SPNEGO_EMAIL_DOMAIN: 'not a domain' }, 'SSO_SPNEGO_EMAIL_DOMAIN'],
      [{ SSO_SPNEGO_EMAIL_DOMAIN: '@example.com' }, 'SSO_SPNEGO_EMAIL_DOMAIN'],
      [{ SSO_SPNEGO_EMAIL_DOMAIN: 'localhost' }, 'SSO_SPNEGO_EMAIL_DOMAIN'],
      // The `HTTP/host@REALM` form never matches a keytab entry (mongodb-js/kerberos#107).
      [{ SSO_SPNEGO_PRINCIPAL: `HTTP/localhost@${TEST_REALM}` }, 'SSO_SPNEGO_PRINCIPAL'],
      [{ SSO_SPNEGO_PRINCIPAL: 'HTTP' }, 'SSO_SPNEGO_PRINCIPAL'],
      // An empty host (`HTTP@.` is one to the MIT library) accepts a ticket for any host in the keytab.
      [{ SSO_SPNEGO_PRINCIPAL: 'HTTP@.' }, 'SSO_SPNEGO_PRINCIPAL'],
      [{ SSO_SPNEGO_PRINCIPAL: 'HTTP@localhost.' }, 'SSO_SPNEGO_PRINCIPAL'],
      [{ SSO_SPNEGO_PRINCIPAL: 'HTTP@' }, 'SSO_SPNEGO_PRINCIPAL'],
      [{ SSO_SPNEGO_PRINCIPAL: '@localhost' }, 'SSO_SPNEGO_PRINCIPAL'],
      // The default, HTTP@ the host of PUBLIC_URL, must be a host name too.
      [{ PUBLIC_URL: 'http://[::1]:8080' }, 'SSO_SPNEGO_PRINCIPAL'],
      [{ SSO_SPNEGO_REALM: 'TWO WORDS' }, 'SSO_SPNEGO_REALM'],
      [{ SSO_SPNEGO_REALM: `@${TEST_REALM}` }, 'SSO_SPNEGO_REALM'],
    ];
    for (const [env, name] of bad) {
      const error = await caught(() => parseConfig({ ...SSO, ...env }));
      assert.ok(error instanceof ConfigError, name);
      assert.match(error.message, new RegExp(name), JSON.stringify(env));
      assert.equal(error.message.split('\n').length, 1, name);
    }
  });
});

describe('a keytab single sign-on cannot use stops buildApp', () => {
  let kdc: Kdc;
  let restoreEnv: (() => void) | undefined;
  let testDatabase: TestDatabase;
  let dir: string;

  before(async () => {
    if (skip) return;
    kdc = await startKdc({ services: ['HTTP/localhost', 'HTTP/other-host'] });
    restoreEnv = useKerberosEnv(kdc.env);
    // One database for every attempt: a harness that fails to build does not drop its own.
    testDatabase = await createTestDatabase();
    dir = join(kdc.dir, 'bad-keytabs');
    mkdirSync(dir);
    writeFileSync(join(dir, 'garbage'), 'not a keytab');
    writeFileSync(join(dir, 'empty'), '');
    await kdc.kadmin(`ktadd -norandkey -k ${join(dir, 'other-host')} HTTP/other-host`);
  });

  after(async () => {
    restoreEnv?.();
    await testDatabase?.drop();
    await kdc?.stop();
  });

  const attempt = (env: Record<string, string>) =>
    caught(() =>
      startHarness({
        testDatabase,
        env: { PUBLIC_URL: 'http://localhost:8080', SSO_SPNEGO_EMAIL_DOMAIN: 'example.com', ...env },
      }),
    );

  test(
    'a keytab that is missing, a directory, garbage, empty, or without the principal: ConfigError "invalid SSO_SPNEGO_KEYTAB"',
    { skip },
    async () => {
      const cases: [string, Record<string, string>, RegExp][] = [
        ['missing', { SSO_SPNEGO_KEYTAB: join(dir, 'missing') }, /cannot be read/],
        ['a directory', { SSO_SPNEGO_KEYTAB: dir }, /cannot be read/],
        ['garbage', { SSO_SPNEGO_KEYTAB: join(dir, 'garbage') }, /no key for HTTP@localhost/],
        ['empty', { SSO_SPNEGO_KEYTAB: join(dir, 'empty') }, /no key for HTTP@localhost/],
        ['another principal', { SSO_SPNEGO_KEYTAB: join(dir, 'other-host') }, /no key for HTTP@localhost/],
        [
          'SSO_SPNEGO_PRINCIPAL not in it',
          { SSO_SPNEGO_KEYTAB: kdc.keytab, SSO_SPNEGO_PRINCIPAL: 'HTTP@elsewhere' },
          /no key for HTTP@elsewhere/,
        ],
        [
          'PUBLIC_URL host not in it',
          { SSO_SPNEGO_KEYTAB: kdc.keytab, PUBLIC_URL: 'http://hub.example.com' },
          /no key for HTTP@hub\.example\.com/,
        ],
      ];
      for (const [what, env, detail] of cases) {
        const error = await attempt(env);
        assert.ok(error instanceof ConfigError, `${what}: ${error.message}`);
        assert.ok(error.message.startsWith('invalid SSO_SPNEGO_KEYTAB'), `${what}: ${error.message}`);
        assert.match(error.message, detail, what);
        assert.equal(error.message.split('\n').length, 1, what);
      }
    },
  );

  test(
    'a keytab this process may not read',
    { skip: skip ?? (process.getuid?.() === 0 && 'root reads any file') },
    async () => {
      const unreadable = join(dir, 'unreadable');
      writeFileSync(unreadable, 'x');
      chmodSync(unreadable, 0o000);
      const error = await attempt({ SSO_SPNEGO_KEYTAB: unreadable });
      assert.ok(error instanceof ConfigError, 'an unreadable keytab is not a configuration error');
      assert.match(
        error.message,
        /^invalid SSO_SPNEGO_KEYTAB: .*cannot be read/,
        'the error for an unreadable keytab does not name SSO_SPNEGO_KEYTAB and say it cannot be read',
      );
    },
  );

  test(
    'the service principal of another PUBLIC_URL host is found when it is in the keytab',
    { skip },
    async () => {
      const h = await startHarness({
        testDatabase,
        env: {
          PUBLIC_URL: 'http://other-host:8080',
          SSO_SPNEGO_KEYTAB: join(dir, 'other-host'),
          SSO_SPNEGO_EMAIL_DOMAIN: 'example.com',
        },
      });
      try {
        assert.equal(
          h.config.sso?.principal,
          'HTTP@other-host',
          'the principal does not follow the PUBLIC_URL host',
        );
        assert.deepEqual(
          (await h.request('GET', '/api/v1/auth/methods')).body,
          {
            password: true,
            passkey: true,
            sso: true,
          },
          'the sign-in methods do not say SSO is on',
        );
      } finally {
        await h.close();
      }
    },
  );
});

/** A port that was free on 127.0.0.1 a moment ago. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function curl(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'curl',
      ['--silent', '--show-error', ...args],
      { env, timeout: 10_000 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`curl failed: ${error.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

// The CLI runs on an embedded database whatever the engine: once, in the PGlite run of the suite.
if (ENGINE === 'pglite') {
  describe('hubgate serve with single sign-on', () => {
    let kdc: Kdc;
    let dataDir: string;
    let server: RunningServer | undefined;
    /** What the MIT library needs in the server's environment (not the keytab: that is the app's). */
    let realmEnv: Record<string, string>;

    before(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'hubgate-sso-cli-'));
      if (skip) return;
      kdc = await startKdc({ users: { alice: 'alice-password' } });
      realmEnv = { KRB5_CONFIG: kdc.env.KRB5_CONFIG, KRB5RCACHEDIR: kdc.env.KRB5RCACHEDIR };
    });

    after(async () => {
      await server?.stop();
      await kdc?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** `hubgate serve` that must stop at start-up: exit 1, one line on stderr naming `variable`. */
    async function refusesToStart(env: Record<string, string>, variable: string) {
      const result = await spawnCli(['serve'], { DATA_DIR: dataDir, PORT: '0', ...realmEnv, ...env });
      assert.equal(result.code, 1, `${result.stdout}${result.stderr}`);
      const lines = result.stderr.trim().split('\n');
      assert.equal(lines.length, 1, result.stderr);
      assert.match(
        lines[0] ?? '',
        new RegExp(`^hubgate: .*${variable}`),
        `the one stderr line does not name ${variable}`,
      );
      assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
      assert.doesNotMatch(
        result.stdout,
        /listening/,
        'hubgate serve says it is listening though it refused to start',
      );
      return lines[0] ?? '';
    }

    test('without SSO_SPNEGO_EMAIL_DOMAIN: exit 1, one line naming it', { timeout: 60_000 }, async () => {
      await refusesToStart({ SSO_SPNEGO_KEYTAB: join(dataDir, 'missing.keytab') }, 'SSO_SPNEGO_EMAIL_DOMAIN');
    });

    test(
      'a keytab that cannot be read or used: exit 1, one line naming SSO_SPNEGO_KEYTAB, no stack trace',
      { skip, timeout: 120_000 },
      async () => {
        const garbage = join(dataDir, 'garbage.keytab');
        writeFileSync(garbage, 'not a keytab');
        for (const keytab of [join(dataDir, 'missing.keytab'), dataDir, garbage]) {
          const line = await refusesToStart(
            { SSO_SPNEGO_KEYTAB: keytab, SSO_SPNEGO_EMAIL_DOMAIN: 'example.com' },
            'SSO_SPNEGO_KEYTAB',
          );
          assert.match(
            line,
            /^hubgate: invalid SSO_SPNEGO_KEYTAB: /,
            `${keytab}: the error line does not say SSO_SPNEGO_KEYTAB is invalid`,
          );
        }
      },
    );

    test(
      'a usable keytab: serve starts, says sso: true, and curl --negotiate signs in to it',
      { skip: skip ?? kerberosSkipReason({ curl: true }), timeout: 120_000 },
      async () => {
        const key = await runCli(['platform-key', 'create', '--name', 'ops'], { DATA_DIR: dataDir });
        assert.equal(key.code, 0, key.stderr);
        const platformKey = JSON.parse(key.stdout).secret as string;
        const port = await freePort();
        server = await startServe({
          DATA_DIR: dataDir,
          PORT: String(port),
          PUBLIC_URL: `http://localhost:${port}`,
          SSO_SPNEGO_KEYTAB: kdc.keytab,
          SSO_SPNEGO_EMAIL_DOMAIN: 'example.com',
          SSO_SPNEGO_REALM: TEST_REALM,
          ...realmEnv,
        });
        const methods = await fetch(`${server.baseUrl}/api/v1/auth/methods`);
        assert.deepEqual(
          await methods.json(),
          { password: true, passkey: true, sso: true },
          'the served sign-in methods do not say SSO is on',
        );

        const post = (path: string, body: unknown) =>
          fetch(`${server?.baseUrl}${path}`, {
            method: 'POST',
            headers: { authorization: `Bearer ${platformKey}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
        const tenant = await post('/api/v1/platform/tenants', { name: 'Acme', entitlements: [] });
        assert.equal(tenant.status, 201, 'the platform key cannot create a tenant');
        const { id: tenantId } = (await tenant.json()) as { id: string };
        const user = await post(`/api/v1/platform/tenants/${tenantId}/users`, {
          email: 'alice@example.com',
          role: 'MEMBER',
          password: 'correct horse battery staple',
        });
        assert.equal(user.status, 201, 'the platform key cannot create a user');

        const alice = await kdc.kinit('alice');
        const url = `http://localhost:${port}/api/v1/auth/sso/negotiate`;
        const resolve = ['--resolve', `localhost:${port}:127.0.0.1`];
        const out = await curl(['--negotiate', '-u', ':', ...resolve, '-D', '-', url], {
          PATH: process.env.PATH,
          ...alice.env,
        });
        const [head = '', body = ''] = out.split('\r\n\r\n');
        assert.match(head, /^HTTP\/1\.1 200 /, 'curl --negotiate against hubgate serve is not signed in');
        assert.match(
          head,
          /^www-authenticate: Negotiate \S+\r?$/im,
          'hubgate serve gives no mutual-authentication token',
        );
        assert.match(head, /^set-cookie: svc_access=/im, 'hubgate serve sets no session cookie after SSO');
        const answer = JSON.parse(body);
        assert.equal(answer.authMethod, 'sso', 'the SSO answer does not say it was SSO');
        assert.equal(answer.user.email, 'alice@example.com', 'the SSO answer names another user than alice');
        const sessionToken = /^set-cookie: svc_access=([^;]+)/im.exec(head)?.[1] ?? '';
        assert.ok(sessionToken, "hubgate serve's SSO answer carries no session token");
        assert.ok(!server.output().includes(sessionToken), 'the session token is in no log line');
      },
    );
  });
}
