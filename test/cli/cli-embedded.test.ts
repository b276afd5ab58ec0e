import assert from 'node:assert/strict';
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { isWellFormedToken } from '../../src/crypto/api-tokens.js';
import { type RunningServer, runCli, startServe } from '../helpers/cli.js';
import { ENGINE } from '../helpers/test-database.js';

// The embedded default needs no PostgreSQL: these run once, in the PGlite run of the suite.
if (ENGINE === 'pglite') {
  const dataDir = mkdtempSync(join(tmpdir(), 'hubgate-cli-'));
  const env = { DATA_DIR: dataDir };
  let server: RunningServer | undefined;
  after(async () => {
    await server?.stop();
  });

  describe('hubgate CLI on the embedded database', () => {
    let created: { id: string; prefix: string; secret: string; expiresAt: string | null };

    test('platform-key create on a new DATA_DIR creates and migrates it, and prints the key once', async () => {
      const result = await runCli(['platform-key', 'create', '--name', 'ops'], env);
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trim().split('\n');
      assert.equal(lines.length, 1, 'one JSON object on stdout');
      created = JSON.parse(lines[0] ?? '');
      assert.deepEqual(Object.keys(created).sort(), ['expiresAt', 'id', 'prefix', 'secret']);
      assert.match(created.id, /^pkey_[0-9A-Za-z]{22}$/);
      assert.ok(isWellFormedToken('plt_', created.secret));
      assert.equal(created.prefix, created.secret.slice(0, 12));
      assert.equal(created.expiresAt, null);
    });

    test('--expires-at is echoed as RFC 3339 UTC', async () => {
      const result = await runCli(
        ['platform-key', 'create', '--name', 'ci', '--expires-at', '2099-01-31T12:00:00+01:00'],
        env,
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(JSON.parse(result.stdout).expiresAt, '2099-01-31T11:00:00.000Z');
    });

    test('bad arguments exit 2 with a usage line', async () => {
      for (const args of [
        ['platform-key', 'create'],
        ['platform-key', 'create', '--name', 'x', '--expires-at', 'tomorrow'],
        ['platform-key', 'create', '--name', 'x', '--expires-at', '2001-01-01T00:00:00Z'],
        ['platform-key', 'create', '--name', 'x', '--bogus'],
        ['platform-key', 'frobnicate'],
        ['platform-key', 'revoke'],
        ['nonsense'],
      ]) {
        const result = await runCli(args, env);
        assert.equal(result.code, 2, args.join(' '));
        assert.match(result.stderr, /^hubgate: /);
        assert.equal(result.stdout, '');
      }
    });

    test('platform-key list shows records and never a secret', async () => {
      const result = await runCli(['platform-key', 'list'], env);
      assert.equal(result.code, 0, result.stderr);
      const keys = JSON.parse(result.stdout);
      assert.ok(Array.isArray(keys));
      const ops = keys.find((k: { id: string }) => k.id === created.id);
      assert.equal(ops.status, 'active');
      assert.equal(ops.prefix, created.prefix);
      assert.ok(!result.stdout.includes(created.secret));
      assert.ok(!result.stdout.includes('secret'));
    });

    test('a bad configuration value stops with one line naming the variable', async () => {
      const result = await runCli(['platform-key', 'list'], { ...env, PORT: 'eighty' });
      assert.equal(result.code, 1);
      assert.equal(result.stderr.trim().split('\n').length, 1);
      assert.match(result.stderr, /PORT/);
    });

    test('serve uses the key; the CLI refuses the data directory while serve holds it', async () => {
      server = await startServe(env);
      const created1 = await fetch(`${server.baseUrl}/api/v1/platform/tenants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${created.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Acme', entitlements: ['integrations'] }),
      });
      assert.equal(created1.status, 201);

      const locked = await runCli(['platform-key', 'list'], env);
      assert.equal(locked.code, 1);
      assert.match(locked.stderr, /in use by another hubgate process/);
      assert.equal(locked.stderr.trim().split('\n').length, 1);

      assert.equal(await server.stop(), 0, 'SIGTERM shuts down cleanly');
      server = undefined;
      const free = await runCli(['platform-key', 'list'], env);
      assert.equal(free.code, 0, free.stderr);
      assert.ok(!server, 'the lock was released');
    });

    test('platform-key revoke marks the key revoked; an unknown ID exits 1', async () => {
      const result = await runCli(['platform-key', 'revoke', created.id], env);
      assert.equal(result.code, 0, result.stderr);
      const record = JSON.parse(result.stdout);
      assert.equal(record.status, 'revoked');
      assert.ok(record.revokedAt);
      const unknown = await runCli(['platform-key', 'revoke', 'pkey_0000000000000000000000'], env);
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no platform key/);
    });

    test('a revoked key no longer opens the platform routes', async () => {
      server = await startServe(env);
      const response = await fetch(`${server.baseUrl}/api/v1/platform/tenants`, {
        headers: { authorization: `Bearer ${created.secret}` },
      });
      assert.equal(response.status, 401);
      const logs = server.output();
      assert.ok(!logs.includes(created.secret), 'the secret is never logged');
    });
  });

  /** Every path under `root` (itself included) whose mode lets its group or others in; links are not followed. */
  const openToOthers = (root: string): string[] => {
    const found: string[] = [];
    const visit = (path: string) => {
      const stat = lstatSync(path);
      if (stat.isSymbolicLink()) return;
      if (stat.mode & 0o077) found.push(`${(stat.mode & 0o777).toString(8)} ${path}`);
      if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    };
    visit(root);
    return found;
  };

  describe('the embedded data directory is readable by its owner only', () => {
    // A directory the CLI creates itself, under the test process's usual umask (022).
    const dataDir = join(mkdtempSync(join(tmpdir(), 'hubgate-perm-')), 'data');
    const permEnv = { DATA_DIR: dataDir };
    let serving: RunningServer | undefined;
    after(async () => {
      await serving?.stop();
    });

    test('the database, the generated secret key and the lock: 0700 directories, 0600 files, while serving and after', async () => {
      const created = await runCli(['platform-key', 'create', '--name', 'perm'], permEnv);
      assert.equal(created.code, 0, created.stderr);
      assert.deepEqual(openToOthers(dataDir), []);

      serving = await startServe(permEnv);
      const tenant = await fetch(`${serving.baseUrl}/api/v1/platform/tenants`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${JSON.parse(created.stdout).secret}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ name: 'Perm', entitlements: ['integrations'] }),
      });
      assert.equal(tenant.status, 201);
      assert.ok(readdirSync(dataDir).includes('hubgate.lock'), 'the lock is there while serving');
      assert.deepEqual(openToOthers(dataDir), [], 'files written while serving');
      assert.equal(await serving.stop(), 0);
      serving = undefined;
      assert.deepEqual(openToOthers(dataDir), []);
    });

    test('a data directory an older version left readable is tightened at start, without following links out of it', async () => {
      const outside = join(mkdtempSync(join(tmpdir(), 'hubgate-outside-')), 'not-ours');
      writeFileSync(outside, 'x', { mode: 0o644 });
      chmodSync(outside, 0o644);
      symlinkSync(outside, join(dataDir, 'pgdata', 'planted-link'));
      const loosen = (path: string) => {
        const stat = lstatSync(path);
        if (stat.isSymbolicLink()) return;
        chmodSync(path, stat.isDirectory() ? 0o755 : 0o644);
        if (stat.isDirectory()) for (const name of readdirSync(path)) loosen(join(path, name));
      };
      loosen(dataDir);
      assert.notDeepEqual(openToOthers(dataDir), []);

      const listed = await runCli(['platform-key', 'list'], permEnv);
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(openToOthers(dataDir), []);
      assert.equal(statSync(outside).mode & 0o777, 0o644, 'a file outside DATA_DIR is left alone');
    });
  });
}
