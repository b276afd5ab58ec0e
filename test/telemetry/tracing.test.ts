import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseConfig } from '../../src/config.js';
import { VERSION } from '../../src/version.js';
import { publishEvent } from '../helpers/events.js';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startOtlpSink, type ExportedSpan } from './otlp-sink.js';

// Receivers and the collector listen on 127.0.0.1 only; nothing else is contacted.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '0,0',
  DELIVERY_TIMEOUT_MS: '5000',
};
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;

// One database for the file; each test runs its own app on it (and closes it to read every span).
let database: TestDatabase;
before(async () => {
  database = await createTestDatabase();
});
after(() => database.drop());

/** A caller's own trace, as an upstream service propagates it. */
const upstream = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };

function one(spans: ExportedSpan[], what: string, match: (span: ExportedSpan) => boolean): ExportedSpan {
  const found = spans.filter(match);
  assert.equal(found.length, 1, `${what}: expected one span, the collector got ${found.length}`);
  return found[0]!;
}

async function tracedPublish(protocol: 'http/protobuf' | 'http/json') {
  const sink = await startOtlpSink();
  const receiver = await startReceiver();
  const h = await startHarness({
    env: { ...ENV, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol },
    testDatabase: database,
    workers: { pollMs: 50 },
  });
  let closed = false;
  try {
    const { tenant, session } = await makeSignedInTenant(h);
    const hook = await makeWebhookConnection(h, session, receiver.url());
    const key = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const published = await publishEvent(
      h,
      { token: key.secret },
      { type: 'order.created', data: { order: 7 } },
      { headers: { traceparent: `00-${upstream.traceId}-${upstream.spanId}-01` } },
    );
    assert.equal(published.status, 202, published.text);
    const [got] = await receiver.waitFor(1);
    const stored = await database.database.kysely
      .selectFrom('events')
      .select('trace_context')
      .where('id', '=', published.body.id)
      .executeTakeFirstOrThrow();
    // Closing the app exports every span ended so far.
    await h.close();
    closed = true;
    const secrets = [key.secret, hook.secret, session.cookie, session.csrfToken];
    return { sink, got: got!, tenant, published: published.body, logs: h.logs(), stored, secrets };
  } finally {
    if (!closed) await h.close();
    await receiver.close();
    await sink.close();
  }
}

describe('tracing on', () => {
  for (const protocol of ['http/protobuf', 'http/json'] as const) {
    test(`${protocol}: one event's trace, from the request to the receiver`, async () => {
      const { sink, got, tenant, published, logs, stored, secrets } = await tracedPublish(protocol);
      const expectedType = protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
      assert.ok(
        sink.contentTypes.length > 0 && sink.contentTypes.every((type) => type.startsWith(expectedType)),
        `exports are not ${expectedType}: ${sink.contentTypes.join(', ')}`,
      );
      const { spans } = sink;

      const server = one(spans, 'the publish request', (s) => s.name === 'POST /api/v1/integrations/events');
      assert.equal(server.kind, SERVER, 'the request span is not of kind SERVER');
      assert.equal(server.traceId, upstream.traceId, "the request span does not continue the caller's trace");
      assert.equal(
        server.parentSpanId,
        upstream.spanId,
        "the request span's parent is not the caller's span",
      );
      assert.deepEqual(
        {
          method: server.attributes['http.request.method'],
          route: server.attributes['http.route'],
          status: server.attributes['http.response.status_code'],
          path: server.attributes['url.path'],
          tenant: server.attributes['hubgate.tenant.id'],
        },
        {
          method: 'POST',
          route: '/api/v1/integrations/events',
          status: 202,
          path: '/api/v1/integrations/events',
          tenant: tenant.id,
        },
        'the request span does not say method, route, status, path and tenant',
      );
      assert.equal(server.resource['service.name'], 'hubgate', 'service.name is not hubgate');
      assert.equal(server.resource['service.version'], VERSION, 'service.version is not the package version');

      const publish = one(spans, 'the publish', (s) => s.name === 'publish');
      assert.equal(publish.kind, PRODUCER, 'the publish span is not of kind PRODUCER');
      assert.equal(
        publish.parentSpanId,
        server.spanId,
        'the publish span is not a child of the request span',
      );
      assert.equal(
        publish.attributes['hubgate.event.id'],
        published.id,
        'the publish span does not name the event',
      );
      assert.equal(
        stored.trace_context,
        `00-${publish.traceId}-${publish.spanId}-01`,
        "the event does not keep its publish span's context",
      );

      const attempt = one(spans, 'the delivery attempt', (s) => s.name === 'deliver');
      assert.equal(attempt.kind, CLIENT, 'the attempt span is not of kind CLIENT');
      assert.deepEqual(
        attempt.links,
        [{ traceId: publish.traceId, spanId: publish.spanId }],
        'the attempt span is not linked to the publish span',
      );
      assert.equal(
        attempt.attributes['hubgate.event.id'],
        published.id,
        'the attempt span does not name the event',
      );
      assert.equal(
        attempt.attributes['http.response.status_code'],
        200,
        "the attempt span lacks the receiver's status",
      );
      assert.equal(
        got.headers.traceparent,
        `00-${attempt.traceId}-${attempt.spanId}-01`,
        "the receiver's traceparent is not the attempt span's context",
      );

      const access = logs
        .split('\n')
        .filter(
          (line) => line.includes('"msg":"request"') && line.includes('"path":"/api/v1/integrations/events"'),
        )
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.equal(access.length, 1, 'there is not one access line for the publish');
      assert.equal(
        access[0]!.trace_id,
        server.traceId,
        "the access line's trace_id is not the request span's",
      );
      assert.equal(access[0]!.span_id, server.spanId, "the access line's span_id is not the request span's");

      const exported = Buffer.concat(sink.bodies).toString('latin1');
      for (const secret of secrets) {
        assert.ok(!exported.includes(secret), `a secret (${secret.slice(0, 6)}…) was exported in a span`);
      }
      assert.ok(
        !exported.includes('"order":7') && !exported.includes('order\\":7'),
        "the event's data was exported",
      );
    });
  }

  test('a failed request is an error span; the query string is never exported', async () => {
    const sink = await startOtlpSink();
    const h = await startHarness({
      env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sink.url}/v1/traces` },
      testDatabase: database,
    });
    try {
      const r = await h.request('GET', '/api/v1/integrations/connections/con_missing?secret=hunter2', {
        token: 'tnt_wrong',
      });
      assert.equal(r.status, 401, r.text);
      await h.close();
      const span = one(
        sink.spans,
        'the refused request',
        (s) => s.name === 'GET /api/v1/integrations/connections/:id',
      );
      assert.equal(span.attributes['http.response.status_code'], 401, 'the span lacks the status');
      assert.equal(
        span.attributes['url.path'],
        '/api/v1/integrations/connections/con_missing',
        'url.path is not the path alone',
      );
      assert.equal(span.statusCode, 0, 'a 4xx is marked an error (only 5xx are)');
      const exported = Buffer.concat(sink.bodies).toString('latin1');
      assert.ok(!exported.includes('hunter2'), 'the query string was exported');
      assert.ok(!exported.includes('tnt_wrong'), 'the credential was exported');
    } finally {
      await h.close();
      await sink.close();
    }
  });
});

describe('tracing off', () => {
  test('nothing is exported, the logs have no trace IDs, and the delivery carries a fresh traceparent', async () => {
    const sink = await startOtlpSink();
    const receiver = await startReceiver();
    const h = await startHarness({ env: ENV, testDatabase: database, workers: { pollMs: 50 } });
    try {
      const { session } = await makeSignedInTenant(h);
      await makeWebhookConnection(h, session, receiver.url());
      const incoming = `00-${upstream.traceId}-${upstream.spanId}-01`;
      const published = await publishEvent(
        h,
        session,
        { type: 'order.created' },
        { headers: { traceparent: incoming } },
      );
      assert.equal(published.status, 202, published.text);
      const [got] = await receiver.waitFor(1);
      const sent = String(got!.headers.traceparent);
      const [, traceId, spanId] = TRACEPARENT.exec(sent) ?? [];
      assert.ok(traceId && spanId, `the delivery carries no valid traceparent: ${sent}`);
      assert.ok(sent.endsWith('-01'), 'the traceparent of an untraced delivery is not sampled');
      assert.notEqual(traceId, upstream.traceId, "the caller's trace was passed on with tracing off");
      const stored = await database.database.kysely
        .selectFrom('events')
        .select('trace_context')
        .where('id', '=', published.body.id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.trace_context, null, 'a trace context is stored with tracing off');
      await h.close();
      assert.ok(!h.logs().includes('trace_id'), 'a log line carries a trace_id with tracing off');
      assert.equal(sink.bodies.length, 0, 'something was sent to a collector with tracing off');
    } finally {
      await h.close();
      await receiver.close();
      await sink.close();
    }
  });

  test('an unsupported protocol stops start-up with one line', () => {
    assert.throws(
      () =>
        parseConfig({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        }),
      (error: unknown) =>
        error instanceof Error &&
        error.message.startsWith('invalid OTEL_EXPORTER_OTLP_PROTOCOL="grpc"') &&
        !error.message.includes('\n'),
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc does not stop start-up with one line naming it',
    );
    assert.equal(
      parseConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })
        .telemetry,
      null,
      'OTEL_SDK_DISABLED=true does not turn tracing off',
    );
  });
});
