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
import { describe, test } from 'node:test';
import { isWellFormedToken } from '../../src/crypto/api-tokens.js';
import { runCli, startServe, type RunningServer } from '../helpers/cli.js';
import { ENGINE } from '../helpers/test-database.js';

// The embedded default needs no PostgreSQL: these run once, in the PGlite run of the suite. The
// platform-key commands run in this process (runCli); serve runs as the process it is in production.
// One data directory for the whole file, in the order a person would use it: a new one costs seconds.
if (ENGINE === 'pglite') {
  // A directory the CLI creates itself, under the test process's usual umask (022).
  const dataDir = join(mkdtempSync(join(tmpdir(), 'hubgate-cli-')), 'data');
  const env = { DATA_DIR: dataDir };

  const createTenant = (server: RunningServer, secret: string, name: string) =>
    fetch(`${server.baseUrl}/api/v1/platform/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, entitlements: ['integrations'] }),
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

  describe('hubgate CLI on the embedded database', () => {
    let created: { id: string; prefix: string; secret: string; expiresAt: string | null };
    /** The second key: revoked before serve starts. */
    let ci: { id: string; secret: string };

    test('platform-key create on a new DATA_DIR creates and migrates it, and prints the key once', async () => {
      const result = await runCli(['platform-key', 'create', '--name', 'ops'], env);
      assert.equal(result.code, 0, `platform-key create exits 0: ${result.stderr}`);
      assert.equal(result.stderr, '', 'nothing on stderr');
      const lines = result.stdout.trim().split('\n');
      assert.equal(lines.length, 1, 'one JSON object on stdout');
      created = JSON.parse(lines[0] ?? '');
      assert.deepEqual(
        Object.keys(created).sort(),
        ['expiresAt', 'id', 'prefix', 'secret'],
        'docs/operators/deployment.md names these four fields',
      );
      assert.match(created.id, /^pkey_[0-9A-Za-z]{22}$/, 'the ID is a pkey_ ID');
      assert.ok(isWellFormedToken('plt_', created.secret), `a plt_ secret: ${created.secret}`);
      assert.equal(created.prefix, created.secret.slice(0, 12), 'the prefix is the start of the secret');
      assert.equal(created.expiresAt, null, 'no expiry unless asked');
      assert.deepEqual(
        openToOthers(dataDir),
        [],
        'the database and the generated secret key: 0700 directories, 0600 files',
      );
    });

    test('--expires-at is echoed as RFC 3339 UTC', async () => {
      const result = await runCli(
        ['platform-key', 'create', '--name', 'ci', '--expires-at', '2099-01-31T12:00:00+01:00'],
        env,
      );
      assert.equal(result.code, 0, `platform-key create --expires-at exits 0: ${result.stderr}`);
      ci = JSON.parse(result.stdout);
      assert.equal(
        JSON.parse(result.stdout).expiresAt,
        '2099-01-31T11:00:00.000Z',
        'the expiry comes back in UTC',
      );
    });

    test('platform-key list shows records and never a secret', async () => {
      const result = await runCli(['platform-key', 'list'], env);
      assert.equal(result.code, 0, `platform-key list exits 0: ${result.stderr}`);
      const keys = JSON.parse(result.stdout) as Array<{ id: string; status: string; prefix: string }>;
      assert.ok(Array.isArray(keys), `a JSON array: ${result.stdout}`);
      const ops = keys.find((k) => k.id === created.id);
      assert.equal(ops?.status, 'active', 'the new key is listed as active');
      assert.equal(ops?.prefix, created.prefix, 'the listed prefix is the created one');
      assert.ok(!result.stdout.includes(created.secret), 'the secret is not listed');
      assert.ok(!result.stdout.includes('secret'), 'no secret field at all');
    });

    test('platform-key revoke marks the key revoked; an unknown ID exits 1', async () => {
      const result = await runCli(['platform-key', 'revoke', ci.id], env);
      assert.equal(result.code, 0, `platform-key revoke exits 0: ${result.stderr}`);
      const record = JSON.parse(result.stdout);
      assert.equal(record.status, 'revoked', 'the record says revoked');
      assert.ok(record.revokedAt, 'the record says when');
      for (const id of ['pkey_0000000000000000000000', 'not-an-id']) {
        const unknown = await runCli(['platform-key', 'revoke', id], env);
        assert.equal(unknown.code, 1, `revoking ${id} exits 1`);
        assert.equal(unknown.stderr, `hubgate: no platform key ${id}\n`, `one line naming ${id}`);
        assert.equal(unknown.stdout, '', 'nothing on stdout');
      }
    });

    test('serve uses the key and refuses the revoked one; the CLI refuses the data directory while serve holds it', async (t) => {
      const server = await startServe(env, t);
      const tenant = await createTenant(server, created.secret, 'Acme');
      assert.equal(tenant.status, 201, `the platform key creates a tenant: ${await tenant.text()}`);
      const refused = await createTenant(server, ci.secret, 'Revoked');
      assert.equal(refused.status, 401, 'a revoked key no longer opens the platform routes');
      assert.ok(readdirSync(dataDir).includes('hubgate.lock'), 'the lock is there while serving');
      assert.deepEqual(
        openToOthers(dataDir),
        [],
        'files written while serving are 0600, in 0700 directories',
      );

      const locked = await runCli(['platform-key', 'list'], env);
      assert.equal(locked.code, 1, `exit 1 while serve holds the directory: ${locked.stderr}`);
      assert.match(locked.stderr, /in use by another hubgate process/, 'it says the directory is in use');
      assert.equal(locked.stderr.trim().split('\n').length, 1, `one line: ${locked.stderr}`);

      assert.equal(await server.stop(), 0, 'SIGTERM shuts down cleanly');
      for (const secret of [created.secret, ci.secret]) {
        assert.ok(!server.output().includes(secret), 'a platform key secret was logged');
      }
      assert.deepEqual(openToOthers(dataDir), [], 'files left after serving are 0600, in 0700 directories');
      const free = await runCli(['platform-key', 'list'], env);
      assert.equal(free.code, 0, `the lock was released: ${free.stderr}`);
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
      assert.notDeepEqual(openToOthers(dataDir), [], 'the directory was loosened for the test');

      const listed = await runCli(['platform-key', 'list'], env);
      assert.equal(listed.code, 0, `platform-key list exits 0 on a loosened directory: ${listed.stderr}`);
      assert.deepEqual(openToOthers(dataDir), [], 'platform-key list tightened everything');
      assert.equal(statSync(outside).mode & 0o777, 0o644, 'a file outside DATA_DIR is left alone');
    });
  });
}
