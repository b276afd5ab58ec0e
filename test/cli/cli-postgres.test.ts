import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { randomBase62 } from '../../src/crypto/base62.js';
import { runCli, spawnCli, startServe } from '../helpers/cli.js';
import { adminQuery, ENGINE, testDatabaseUrl } from '../helpers/test-database.js';

// PostgreSQL mode of the CLI: these run in the PostgreSQL run of the suite only. migrate and
// platform-key run in this process (runCli); serve runs as the process it is in production.
if (ENGINE === 'postgres') {
  const name = `hubgate_cli_${randomBase62(10).toLowerCase()}`;
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  const env = { DATABASE_URL: url.toString(), HUBGATE_SECRET_KEY: randomBytes(32).toString('base64') };

  before(() => adminQuery(`create database ${name}`));
  after(() => adminQuery(`drop database if exists ${name} with (force)`));

  describe('hubgate CLI on PostgreSQL', () => {
    test('without HUBGATE_SECRET_KEY, serve refuses to start with a clear message', async () => {
      const result = await spawnCli(['serve'], { DATABASE_URL: env.DATABASE_URL });
      assert.equal(result.code, 1, `serve exits 1: ${result.stderr}`);
      assert.match(
        result.stderr,
        /HUBGATE_SECRET_KEY is required when DATABASE_URL is set/,
        'it names the missing variable',
      );
      assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
      const key = await runCli(['platform-key', 'list'], { DATABASE_URL: env.DATABASE_URL });
      assert.equal(key.code, 1, `platform-key exits 1 too: ${key.stderr}`);
      assert.match(key.stderr, /^hubgate: HUBGATE_SECRET_KEY is required/, 'with the same line');
    });

    test('before migrate, commands refuse and say to run hubgate migrate', async () => {
      const [served, listed] = await Promise.all([
        spawnCli(['serve'], env),
        runCli(['platform-key', 'list'], env),
      ]);
      for (const [what, result] of [
        ['serve', served],
        ['platform-key list', listed],
      ] as const) {
        assert.equal(result.code, 1, `${what} exits 1: ${result.stderr}`);
        assert.match(result.stderr, /hubgate migrate/, `${what} says to run hubgate migrate`);
      }
    });

    test('migrate applies the schema and is idempotent', async () => {
      const first = await runCli(['migrate'], env);
      assert.equal(first.code, 0, `the first migrate exits 0: ${first.stderr}`);
      assert.equal(first.stdout, 'database schema is up to date\n', 'migrate says it is done');
      const second = await runCli(['migrate'], env);
      assert.equal(second.code, 0, `a second migrate exits 0: ${second.stderr}`);
      assert.equal(second.stdout, 'database schema is up to date\n', 'and says so again');
    });

    test('a key from the CLI opens the platform routes of a served PostgreSQL instance', async (t) => {
      const created = await runCli(['platform-key', 'create', '--name', 'ops'], env);
      assert.equal(created.code, 0, `platform-key create exits 0: ${created.stderr}`);
      const { secret } = JSON.parse(created.stdout) as { secret: string };
      const server = await startServe(env, t);
      const tenant = await fetch(`${server.baseUrl}/api/v1/platform/tenants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Acme' }),
      });
      assert.equal(tenant.status, 201, `the key creates a tenant: ${await tenant.text()}`);
      // With PostgreSQL, several processes share the database: the CLI works while serve runs.
      const list = await runCli(['platform-key', 'list'], env);
      assert.equal(list.code, 0, `platform-key list exits 0 while serve runs: ${list.stderr}`);
      assert.ok(!server.output().includes(secret), 'the secret is never logged');
    });
  });
}
