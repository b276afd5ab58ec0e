import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parsePlatformKeyArgs } from '../../src/cli/platform-key.js';
import { USAGE } from '../../src/cli/usage.js';
import { runCli } from '../helpers/cli.js';

// Everything here is answered before a command opens anything: the unit marker above fails a test
// that would open the database. The commands themselves: cli-embedded and cli-postgres.
const dataDir = join(mkdtempSync(join(tmpdir(), 'hubgate-usage-')), 'data');
const env = { DATA_DIR: dataDir };

describe('hubgate usage', () => {
  test('no command, help, --help and -h print the usage on stdout and exit 0', async () => {
    for (const args of [[], ['help'], ['--help'], ['-h']]) {
      const result = await runCli(args, env);
      assert.equal(result.code, 0, `hubgate ${args.join(' ')} exits 0: ${result.stderr}`);
      assert.equal(result.stdout, `${USAGE}\n`, `hubgate ${args.join(' ')} prints the usage`);
      assert.equal(result.stderr, '', `hubgate ${args.join(' ')} prints nothing on stderr`);
    }
  });

  test('the usage names every command of docs/operators/deployment.md', () => {
    for (const command of [
      'serve',
      'worker',
      'migrate',
      'platform-key create --name N [--expires-at T]',
      'platform-key list',
      'platform-key revoke ID',
    ]) {
      assert.ok(USAGE.includes(`  ${command} `), `the usage lists "${command}"`);
    }
  });

  test('bad arguments exit 2 with a line saying what is wrong, then the usage', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['platform-key', 'create'], /needs --name NAME/],
      [['platform-key', 'create', '--name', '   '], /needs --name NAME/],
      [['platform-key', 'create', '--name', 'x'.repeat(101)], /1 to 100 characters/],
      [['platform-key', 'create', '--name', 'x', '--expires-at', 'tomorrow'], /RFC 3339/],
      [['platform-key', 'create', '--name', 'x', '--expires-at', '2031-01-31'], /RFC 3339/],
      // One RFC 3339 reader for every time (docs/api/conventions.md): no leap second, no space for the T.
      [['platform-key', 'create', '--name', 'x', '--expires-at', '2031-12-31T23:59:60Z'], /RFC 3339/],
      [['platform-key', 'create', '--name', 'x', '--expires-at', '2031-01-31 12:00:00Z'], /RFC 3339/],
      [['platform-key', 'create', '--name', 'x', '--expires-at', '2001-01-01T00:00:00Z'], /in the future/],
      [['platform-key', 'create', '--name', 'x', '--bogus'], /--bogus/],
      [['platform-key', 'list', 'extra'], /extra/],
      [['platform-key', 'frobnicate'], /takes create, list or revoke/],
      [['platform-key'], /takes create, list or revoke/],
      [['platform-key', 'revoke'], /needs one key ID/],
      [['platform-key', 'revoke', 'pkey_a', 'pkey_b'], /needs one key ID/],
      [['nonsense'], /unknown command "nonsense"/],
    ];
    for (const [args, why] of cases) {
      const result = await runCli(args, env);
      const what = `hubgate ${args.join(' ')}`;
      assert.equal(result.code, 2, `${what} exits 2: ${result.stderr}`);
      const [first, ...rest] = result.stderr.split('\n');
      assert.match(first ?? '', /^hubgate: /, `${what} starts its complaint with "hubgate: "`);
      assert.match(first ?? '', why, `${what} says what is wrong`);
      assert.equal(rest.join('\n'), `${USAGE}\n`, `${what} prints the usage after the line`);
      assert.equal(result.stdout, '', `${what} prints nothing on stdout`);
    }
    assert.ok(!existsSync(dataDir), 'no bad command line created the data directory');
  });

  test('a bad configuration value stops with one line naming the variable, exit 1', async () => {
    const result = await runCli(['platform-key', 'list'], { ...env, PORT: 'eighty' });
    assert.equal(result.code, 1, `exit 1: ${result.stderr}`);
    assert.equal(result.stderr.trim().split('\n').length, 1, `one line: ${result.stderr}`);
    assert.match(result.stderr, /^hubgate: .*PORT/, 'the line names PORT');
    assert.equal(result.stdout, '', 'nothing on stdout');
  });
});

describe('platform-key arguments', () => {
  const now = new Date('2030-06-01T00:00:00Z');

  test('create: the name trimmed, no expiry unless given', () => {
    assert.deepEqual(
      parsePlatformKeyArgs(['create', '--name', '  ops  '], now),
      { action: 'create', name: 'ops', expiresAt: null },
      'the name is trimmed and the key does not expire',
    );
    const longest = 'x'.repeat(100);
    assert.deepEqual(
      parsePlatformKeyArgs(['create', `--name=${longest}`], now),
      { action: 'create', name: longest, expiresAt: null },
      'a name of 100 characters is accepted, also as --name=…',
    );
  });

  test('create --expires-at: an RFC 3339 time with an offset is the same instant', () => {
    const command = parsePlatformKeyArgs(
      ['create', '--name', 'ci', '--expires-at', '2099-01-31T12:00:00+01:00'],
      now,
    );
    assert.equal(command.action, 'create', 'a create command');
    assert.equal(
      command.action === 'create' ? command.expiresAt?.toISOString() : undefined,
      '2099-01-31T11:00:00.000Z',
      'the expiry is the instant given, in UTC',
    );
    assert.throws(
      () => parsePlatformKeyArgs(['create', '--name', 'ci', '--expires-at', now.toISOString()], now),
      /in the future/,
      'an expiry of now is refused',
    );
  });

  test('list and revoke', () => {
    assert.deepEqual(parsePlatformKeyArgs(['list'], now), { action: 'list' }, 'list takes nothing');
    assert.deepEqual(
      parsePlatformKeyArgs(['revoke', 'pkey_0000000000000000000000'], now),
      { action: 'revoke', id: 'pkey_0000000000000000000000' },
      'revoke takes one ID, checked against the database later',
    );
  });
});
