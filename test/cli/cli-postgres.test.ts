import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { randomBase62 } from '../../src/crypto/base62.js';
import { type RunningServer, runCli, startServe } from '../helpers/cli.js';
import { adminQuery, ENGINE, testDatabaseUrl } from '../helpers/test-database.js';

// PostgreSQL mode of the CLI: these run in the PostgreSQL run of the suite only.
if (ENGINE === 'postgres') {
  const name = `hubgate_cli_${randomBase62(10).toLowerCase()}`;
  const admin = adminQuery;
  const url = new URL(testDatabaseUrl());
  url.pathname = `/${name}`;
  const env = { DATABASE_URL: url.toString(), HUBGATE_SECRET_KEY: randomBytes(32).toString('base64') };
  let server: RunningServer | undefined;

  before(() => admin(`create database ${name}`));
  after(async () => {
    await server?.stop();
    await admin(`drop database if exists ${name} with (force)`);
  });

  describe('hubgate CLI on PostgreSQL', () => {
    test('without HUBGATE_SECRET_KEY, serve refuses to start with a clear message', async () => {
      const result = await runCli(['serve'], { DATABASE_URL: env.DATABASE_URL });
      assert.equal(result.code, 1);
      assert.match(result.stderr, /HUBGATE_SECRET_KEY is required when DATABASE_URL is set/);
      assert.equal(result.stderr.trim().split('\n').length, 1);
    });

    test('before migrate, commands refuse and say to run hubgate migrate', async () => {
      for (const args of [['serve'], ['platform-key', 'list']]) {
        const result = await runCli(args, env);
        assert.equal(result.code, 1, args.join(' '));
        assert.match(result.stderr, /hubgate migrate/);
      }
    });

    test('migrate applies the schema and is idempotent', async () => {
      const first = await runCli(['migrate'], env);
      assert.equal(first.code, 0, first.stderr);
      const second = await runCli(['migrate'], env);
      assert.equal(second.code, 0, second.stderr);
    });

    test('a key from the CLI opens the platform routes of a served PostgreSQL instance', async () => {
      const created = await runCli(['platform-key', 'create', '--name', 'ops'], env);
      assert.equal(created.code, 0, created.stderr);
      const { secret } = JSON.parse(created.stdout);
      server = await startServe(env);
      const tenant = await fetch(`${server.baseUrl}/api/v1/platform/tenants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Acme' }),
      });
      assert.equal(tenant.status, 201);
      // With PostgreSQL, several processes share the database: the CLI works while serve runs.
      const list = await runCli(['platform-key', 'list'], env);
      assert.equal(list.code, 0, list.stderr);
      assert.ok(!server.output().includes(secret));
    });
  });
}
