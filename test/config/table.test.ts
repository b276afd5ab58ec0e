import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, parseConfig, type Config } from '../../src/config.js';
import { SETTINGS, type Name } from '../../src/config/table.js';

// JSON, not deepEqual: a URL's fields are internal, so two different URLs compare equal as objects.
const snapshot = (config: Config) => JSON.stringify(config);

interface Example {
  value: string;
  with?: Record<string, string>;
}

/**
 * For each variable, a value other than its default and what else it needs to matter (single sign-on
 * settings need the keytab and domain). Typed by the table's names, so a new variable without an
 * example does not compile.
 */
const OTLP = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
const EXAMPLES: Record<Name, Example> = {
  DATABASE_URL: { value: 'postgres://hubgate@db.internal/hubgate' },
  DATABASE_PREPARED_STATEMENTS: { value: 'false', with: { DATABASE_URL: 'postgres://db/x' } },
  DATA_DIR: { value: '/var/lib/hubgate' },
  HUBGATE_SECRET_KEY: { value: Buffer.alloc(32, 1).toString('base64') },
  HOST: { value: '0.0.0.0' },
  PORT: { value: '9090' },
  PUBLIC_URL: { value: 'https://hub.example.com' },
  TRUST_PROXY: { value: '10.0.0.0/8' },
  REQUEST_TIMEOUT_MS: { value: '5000' },
  SHUTDOWN_GRACE_MS: { value: '5000' },
  RATE_LIMIT_PER_MINUTE: { value: '60' },
  // Not the default on any machine this runs on: the default is the number of CPUs.
  PASSWORD_HASH_CONCURRENCY: { value: '997' },
  AUDIT_RETENTION_DAYS: { value: '90' },
  LOG_LEVEL: { value: 'warn' },
  DELIVERY_ALLOW_HTTP: { value: 'true' },
  DELIVERY_ALLOWED_CIDRS: { value: '10.1.0.0/16' },
  DELIVERY_RETRY_SCHEDULE: { value: '1,2,3' },
  DELIVERY_TIMEOUT_MS: { value: '2000' },
  DELIVERY_CONCURRENCY: { value: '8' },
  DELIVERY_RETENTION_DAYS: { value: '7' },
  DELIVERY_RESPONSE_BODY_BYTES: { value: '0' },
  CONNECTION_PAUSE_AFTER_FAILURES: { value: '0' },
  CONNECTION_PAUSE_AFTER_SECONDS: { value: '60' },
  CONNECTORS_DISABLED: { value: 'slack' },
  ALERT_EVALUATION_INTERVAL_MS: { value: '1000' },
  ALERT_RETRY_SCHEDULE: { value: '0,0' },
  ALERT_FAILURE_RATE_THRESHOLD: { value: '0.5' },
  ALERT_FAILURE_RATE_WINDOW_SECONDS: { value: '60' },
  ALERT_FAILURE_RATE_MIN_DELIVERIES: { value: '3' },
  ALERT_QUEUE_BACKLOG_THRESHOLD: { value: '5' },
  SSO_SPNEGO_KEYTAB: { value: '/etc/krb5.keytab', with: { SSO_SPNEGO_EMAIL_DOMAIN: 'example.com' } },
  SSO_SPNEGO_EMAIL_DOMAIN: {
    value: 'example.org',
    with: { SSO_SPNEGO_KEYTAB: '/k', SSO_SPNEGO_EMAIL_DOMAIN: 'example.com' },
  },
  SSO_SPNEGO_PRINCIPAL: {
    value: 'HTTP@sso.example.com',
    with: { SSO_SPNEGO_KEYTAB: '/k', SSO_SPNEGO_EMAIL_DOMAIN: 'example.com' },
  },
  SSO_SPNEGO_REALM: {
    value: 'EXAMPLE.COM',
    with: { SSO_SPNEGO_KEYTAB: '/k', SSO_SPNEGO_EMAIL_DOMAIN: 'example.com' },
  },
  SMTP_URL: { value: 'smtp://hub:p%40ss@mail.example.com:587' },
  SMTP_FROM: { value: 'people@example.com', with: { SMTP_URL: 'smtp://mail.example.com' } },
  // Tracing's variables matter once an endpoint turns it on.
  OTEL_EXPORTER_OTLP_ENDPOINT: { value: 'http://collector:4318' },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { value: 'http://collector:4318/traces' },
  OTEL_EXPORTER_OTLP_PROTOCOL: { value: 'http/json', with: OTLP },
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: { value: 'http/json', with: OTLP },
  OTEL_EXPORTER_OTLP_HEADERS: { value: 'api-key=abc', with: OTLP },
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: { value: 'api-key=abc', with: OTLP },
  OTEL_EXPORTER_OTLP_TIMEOUT: { value: '5000', with: OTLP },
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: { value: '5000', with: OTLP },
  OTEL_SERVICE_NAME: { value: 'hub-eu', with: OTLP },
  OTEL_RESOURCE_ATTRIBUTES: { value: 'deployment.environment.name=prod', with: OTLP },
  OTEL_TRACES_SAMPLER: { value: 'always_on', with: OTLP },
  OTEL_TRACES_SAMPLER_ARG: { value: '0.5', with: { ...OTLP, OTEL_TRACES_SAMPLER: 'traceidratio' } },
  OTEL_TRACES_EXPORTER: { value: 'none', with: OTLP },
  OTEL_SDK_DISABLED: { value: 'true', with: OTLP },
};

const examples = new Map<string, Example>(Object.entries(EXAMPLES));

// Free text is taken as given; what it names (a directory, a key, a keytab) is checked where it is used.
const FREE_TEXT = new Set<string>([
  'DATA_DIR',
  'HUBGATE_SECRET_KEY',
  'HOST',
  'SSO_SPNEGO_KEYTAB',
  'OTEL_SERVICE_NAME',
]);
const NONSENSE = ['-1', 'not valid!', '99999999999', 'true'];

describe('every variable of the table is read', () => {
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const example = examples.get(name) ?? { value: '' };

    test(`${name} reaches the configuration`, () => {
      assert.ok(examples.has(name), `${name} has no example in EXAMPLES`);
      const base = example.with ?? {};
      assert.notEqual(
        snapshot(parseConfig({ ...base, [name]: example.value })),
        snapshot(parseConfig(base)),
        `${name}=${example.value} changed nothing in the configuration`,
      );
    });

    const bad = NONSENSE.find((raw) => !setting.parse(raw).ok);
    if (bad === undefined) {
      test(`${name} is free text`, () => {
        assert.ok(FREE_TEXT.has(name), `${name} accepts ${NONSENSE.join(', ')}: give it a parser`);
      });
      continue;
    }
    test(`a bad ${name} stops start-up with one line naming it and what it expects`, () => {
      assert.throws(
        () => parseConfig({ [name]: bad }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.startsWith(`invalid ${name}`) &&
          error.message.includes(`expected ${setting.expects}`) &&
          !error.message.includes('\n'),
        `${name}=${bad}`,
      );
    });
  }
});

describe('values and messages', () => {
  test('a blank value is unset', () => {
    const config = parseConfig({ PORT: ' ', DELIVERY_RETRY_SCHEDULE: '', TRUST_PROXY: '  ' });
    assert.equal(config.port, 8080, 'PORT');
    assert.deepEqual(
      config.delivery.retryScheduleSeconds,
      [5, 300, 1800, 7200, 18000, 36000, 36000],
      'schedule',
    );
    assert.equal(config.trustProxy, false, 'TRUST_PROXY');
  });

  test('a message says what is expected and, when it helps, what is wrong', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ PORT: 'eighty' }, 'invalid PORT="eighty": expected a whole number from 0 to 65535'],
      [
        { PORT: '70000' },
        'invalid PORT="70000": expected a whole number from 0 to 65535; 70000 is more than 65535',
      ],
      [
        { DELIVERY_RETRY_SCHEDULE: '5,,10' },
        'invalid DELIVERY_RETRY_SCHEDULE="5,,10": expected a comma-separated list of whole seconds such as 5,300,1800; entry 2 is empty',
      ],
      [
        { CONNECTORS_DISABLED: 'slack,Http' },
        'invalid CONNECTORS_DISABLED="slack,Http": expected a comma-separated list of connector keys such as slack,http; "Http" is not a connector key',
      ],
      [
        { DATABASE_URL: 'mysql://root:hunter2@db/x' },
        'invalid DATABASE_URL: expected a postgres:// or postgresql:// URL',
      ],
    ];
    for (const [env, message] of cases) {
      assert.throws(() => parseConfig(env), { name: 'Error', message }, JSON.stringify(env));
    }
  });

  test('lists are read entry by entry, spaces around entries ignored', () => {
    const config = parseConfig({
      ALERT_RETRY_SCHEDULE: ' 1 , 2 ',
      CONNECTORS_DISABLED: 'slack, http',
      TRUST_PROXY: '10.0.0.0/8, 192.0.2.1',
    });
    assert.deepEqual(config.alerts.retryScheduleSeconds, [1, 2], 'ALERT_RETRY_SCHEDULE');
    assert.deepEqual(config.disabledConnectors, ['slack', 'http'], 'CONNECTORS_DISABLED');
    assert.deepEqual(config.trustProxy, ['10.0.0.0/8', '192.0.2.1/32'], 'TRUST_PROXY');
  });

  test('each default is written as an operator would write it, and reads back as the default', () => {
    for (const [name, setting] of Object.entries(SETTINGS)) {
      if (setting.default === undefined) continue;
      assert.equal(
        snapshot(parseConfig({ [name]: setting.default })),
        snapshot(parseConfig({})),
        `${name}=${setting.default}`,
      );
    }
  });
});
