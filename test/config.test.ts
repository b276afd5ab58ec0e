import './helpers/unit.js';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../src/config.js';
import { resolveMasterKey } from '../src/crypto/master-key.js';

test('defaults follow docs/configuration.md', () => {
  const config = parseConfig({});
  assert.deepEqual(config.database, { kind: 'embedded', dataDir: './data' }, 'embedded database in ./data');
  assert.equal(config.host, '127.0.0.1', 'HOST');
  assert.equal(config.port, 8080, 'PORT');
  assert.equal(config.publicUrl.origin, 'http://localhost:8080', 'PUBLIC_URL');
  assert.equal(config.delivery.allowHttp, false, 'DELIVERY_ALLOW_HTTP');
  assert.deepEqual(config.delivery.allowedCidrs, [], 'DELIVERY_ALLOWED_CIDRS');
  assert.deepEqual(
    config.delivery.retryScheduleSeconds,
    [5, 300, 1800, 7200, 18000, 36000, 36000],
    'DELIVERY_RETRY_SCHEDULE',
  );
  assert.equal(config.delivery.timeoutMs, 10_000, 'DELIVERY_TIMEOUT_MS');
  assert.equal(config.delivery.retentionDays, 30, 'DELIVERY_RETENTION_DAYS');
  assert.equal(config.rateLimitPerMinute, 600, 'RATE_LIMIT_PER_MINUTE');
  assert.equal(config.bodyLimitBytes, 1024 * 1024, 'body limit');
  assert.equal(config.requestTimeoutMs, 30_000, 'REQUEST_TIMEOUT_MS');
  assert.equal(config.auditRetentionDays, 365, 'AUDIT_RETENTION_DAYS');
  assert.equal(config.trustProxy, false, 'TRUST_PROXY');
});

test('PUBLIC_URL defaults to the configured port; DATABASE_URL selects PostgreSQL', () => {
  const config = parseConfig({ PORT: '9000', DATABASE_URL: 'postgres://u@127.0.0.1/db' });
  assert.equal(config.publicUrl.origin, 'http://localhost:9000', 'PUBLIC_URL follows PORT');
  assert.deepEqual(
    config.database,
    {
      kind: 'postgres',
      url: 'postgres://u@127.0.0.1/db',
      preparedStatements: true,
    },
    'DATABASE_URL selects PostgreSQL, prepared statements on',
  );
  const unprepared = parseConfig({
    DATABASE_URL: 'postgres://u@127.0.0.1/db',
    DATABASE_PREPARED_STATEMENTS: 'false',
  });
  assert.equal(
    unprepared.database.kind === 'postgres' && unprepared.database.preparedStatements,
    false,
    'DATABASE_PREPARED_STATEMENTS=false',
  );
  assert.throws(
    () => parseConfig({ DATABASE_PREPARED_STATEMENTS: 'no' }),
    /DATABASE_PREPARED_STATEMENTS/,
    'DATABASE_PREPARED_STATEMENTS=no',
  );
});

test('delivery knobs are parsed', () => {
  const config = parseConfig({
    DELIVERY_ALLOW_HTTP: 'true',
    DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32, ::1/128',
    DELIVERY_RETRY_SCHEDULE: '1, 2,3',
    DELIVERY_TIMEOUT_MS: '500',
  });
  assert.equal(config.delivery.allowHttp, true, 'DELIVERY_ALLOW_HTTP');
  assert.equal(config.delivery.allowedCidrs.length, 2, 'DELIVERY_ALLOWED_CIDRS');
  assert.deepEqual(config.delivery.retryScheduleSeconds, [1, 2, 3], 'DELIVERY_RETRY_SCHEDULE');
  assert.equal(config.delivery.timeoutMs, 500, 'DELIVERY_TIMEOUT_MS');
});

const bad: Array<[Record<string, string>, string]> = [
  [{ PORT: 'eighty' }, 'PORT'],
  [{ PORT: '70000' }, 'PORT'],
  [{ PUBLIC_URL: 'hub.example.com' }, 'PUBLIC_URL'],
  [{ PUBLIC_URL: 'https://hub.example.com/path' }, 'PUBLIC_URL'],
  [{ DELIVERY_ALLOW_HTTP: 'yes' }, 'DELIVERY_ALLOW_HTTP'],
  [{ DELIVERY_ALLOWED_CIDRS: '10.0.0.0/99' }, 'DELIVERY_ALLOWED_CIDRS'],
  [{ DELIVERY_RETRY_SCHEDULE: '5,,10' }, 'DELIVERY_RETRY_SCHEDULE'],
  [{ DELIVERY_TIMEOUT_MS: '10' }, 'DELIVERY_TIMEOUT_MS'],
  [{ DELIVERY_RETENTION_DAYS: '0' }, 'DELIVERY_RETENTION_DAYS'],
  [{ RATE_LIMIT_PER_MINUTE: '-1' }, 'RATE_LIMIT_PER_MINUTE'],
  [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
  [{ REQUEST_TIMEOUT_MS: '50' }, 'REQUEST_TIMEOUT_MS'],
  [{ REQUEST_TIMEOUT_MS: '30s' }, 'REQUEST_TIMEOUT_MS'],
  [{ AUDIT_RETENTION_DAYS: '0' }, 'AUDIT_RETENTION_DAYS'],
  [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
  [{ TRUST_PROXY: '0.0.0.0/1,128.0.0.0/1' }, 'TRUST_PROXY'],
  [{ DATABASE_URL: 'mysql://root:hunter2@db/x' }, 'DATABASE_URL'],
];
for (const [env, name] of bad) {
  test(`a bad ${name} stops start-up with one line naming it`, () => {
    assert.throws(
      () => parseConfig(env),
      (error: unknown) =>
        error instanceof ConfigError && error.message.includes(name) && !error.message.includes('\n'),
      JSON.stringify(env),
    );
  });
}

test('a bad DATABASE_URL is named but its value (which may hold a password) is not echoed', () => {
  assert.throws(
    () => parseConfig({ DATABASE_URL: 'mysql://root:hunter2@db/x' }),
    (error: unknown) => error instanceof Error && !error.message.includes('hunter2'),
    'the password is echoed',
  );
});

test('embedded mode generates the secret key once, with mode 0600, and reuses it', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'hubgate-key-'));
  const config = parseConfig({ DATA_DIR: dataDir });
  const first = resolveMasterKey(config);
  const second = resolveMasterKey(config);
  assert.equal(first.length, 32, 'a 32-byte key');
  assert.deepEqual(first, second, 'the key is reused');
  const file = join(dataDir, 'secret.key');
  assert.equal(statSync(file).mode & 0o777, 0o600, 'secret.key is private');
  assert.equal(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').length, 32, 'base64 in the file');
});

test('with DATABASE_URL, a missing HUBGATE_SECRET_KEY refuses to start with a clear message', () => {
  const config = parseConfig({ DATABASE_URL: 'postgres://127.0.0.1/x' });
  assert.throws(
    () => resolveMasterKey(config),
    /HUBGATE_SECRET_KEY is required when DATABASE_URL is set/,
    'no key with PostgreSQL',
  );
});

test('a HUBGATE_SECRET_KEY shorter than 32 bytes is refused without echoing it', () => {
  const short = Buffer.alloc(16, 7).toString('base64');
  const config = parseConfig({ DATABASE_URL: 'postgres://127.0.0.1/x', HUBGATE_SECRET_KEY: short });
  assert.throws(
    () => resolveMasterKey(config),
    (error: unknown) =>
      error instanceof Error && /at least 32/.test(error.message) && !error.message.includes(short),
    'a short key',
  );
});
