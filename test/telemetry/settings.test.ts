import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, parseConfig } from '../../src/config.js';
import { VERSION } from '../../src/version.js';

const ON = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

test('tracing is off unless an endpoint is set, and off again when disabled', () => {
  assert.equal(parseConfig({}).telemetry, null, 'tracing is on without an endpoint');
  assert.notEqual(parseConfig(ON).telemetry, null, 'OTEL_EXPORTER_OTLP_ENDPOINT does not turn tracing on');
  assert.equal(
    parseConfig({ ...ON, OTEL_TRACES_EXPORTER: 'none' }).telemetry,
    null,
    'OTEL_TRACES_EXPORTER=none leaves tracing on',
  );
});

test('the traces URL, protocol, headers and resource are read as the OpenTelemetry SDKs read them', () => {
  const base = parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).telemetry!;
  assert.equal(base.url, 'http://collector:4318/v1/traces', 'the base endpoint does not get /v1/traces');
  assert.equal(base.protocol, 'http/protobuf', 'the default protocol is not http/protobuf');
  assert.deepEqual(
    base.resource,
    { 'service.name': 'hubgate', 'service.version': VERSION },
    'the default resource is not hubgate and its version',
  );
  assert.deepEqual(
    base.sampler,
    { parentBased: true, ratio: 1 },
    'the default sampler is not parentbased_always_on',
  );

  const specific = parseConfig({
    ...ON,
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example.com/ingest',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_HEADERS: 'api-key=general,x-team=ops',
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=tr%3Dces',
    OTEL_SERVICE_NAME: 'hub-eu',
    OTEL_RESOURCE_ATTRIBUTES: 'service.name=ignored, deployment.environment.name=prod',
    OTEL_TRACES_SAMPLER: 'traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
  }).telemetry!;
  assert.equal(specific.url, 'https://traces.example.com/ingest', 'the traces endpoint is not used as given');
  assert.equal(specific.protocol, 'http/json', 'the traces protocol does not win');
  assert.deepEqual(
    specific.headers,
    { 'api-key': 'tr=ces', 'x-team': 'ops' },
    'the headers are not merged and decoded',
  );
  assert.equal(specific.resource['service.name'], 'hub-eu', 'OTEL_SERVICE_NAME does not win');
  assert.equal(specific.resource['deployment.environment.name'], 'prod', 'a resource attribute is lost');
  assert.deepEqual(specific.sampler, { parentBased: false, ratio: 0.25 }, 'traceidratio is not read');
});

test('a header value that does not decode stops start-up without echoing it', () => {
  assert.throws(
    () => parseConfig({ ...ON, OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s3cr%ZZet' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.message.startsWith('invalid OTEL_EXPORTER_OTLP_HEADERS:') &&
      !error.message.includes('s3cr'),
    'a bad OTEL_EXPORTER_OTLP_HEADERS is not refused, or its value is echoed',
  );
});
