import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { createMetrics } from '../../src/http/metrics.js';
import { registerScrapeMetrics } from '../../src/platform/scrape-metrics.js';
import { publishEvent, waitForDeliveries } from '../helpers/events.js';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness, type TestSession } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, ENGINE } from '../helpers/test-database.js';

// One retry, an hour later: a 500 leaves a delivery `retrying`; a 410 fails one at once (docs/api/events.md).
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '3600',
  DELIVERY_TIMEOUT_MS: '5000',
};

// A harness of its own: the counters are per app and the queue gauges installation-wide, so every
// figure below is exact.
let h: Harness;
before(async () => {
  h = await startHarness({ env: ENV, workers: { pollMs: 50 } });
});
after(() => h.close());

type Scrape = Map<string, PrometheusFamily> & { text: string };

function parse(text: string): Scrape {
  return Object.assign(new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f])), { text });
}

async function scrape(): Promise<Scrape> {
  const response = await h.request('GET', '/metrics', { token: h.platformToken });
  assert.equal(response.status, 200, response.text);
  assert.equal(
    response.headers.get('content-type'),
    'text/plain; version=0.0.4; charset=utf-8',
    '/metrics is not served in the Prometheus text format',
  );
  return parse(response.text);
}

function family(families: Scrape, name: string): PrometheusFamily {
  const found = families.get(name);
  assert.ok(found, `${name} is exposed`);
  return found;
}

const hasLabels = (actual: Record<string, string> | undefined, wanted: Record<string, string>) =>
  Object.entries(wanted).every(([k, v]) => actual?.[k] === v);

/** The value of the first counter or gauge sample whose labels include `labels`; undefined if none. */
function valueOf(families: Scrape, name: string, labels: Record<string, string> = {}): number | undefined {
  const sample = family(families, name).metrics.find((m) => hasLabels(m.labels, labels));
  return sample?.value === undefined ? undefined : Number(sample.value);
}

/**
 * A histogram's observation count for one label set. The parser folds the series of a labelled
 * histogram into one, so the `_count` line is read from the text it has checked.
 */
function histogramCount(families: Scrape, name: string, labels: Record<string, string> = {}): number {
  assert.equal(family(families, name).type, 'HISTOGRAM', `${name} is not a histogram`);
  for (const line of families.text.split('\n')) {
    const match = new RegExp(`^${name}_count(?:\\{(.*)\\})? (\\S+)$`).exec(line);
    if (!match) continue;
    const found = Object.fromEntries(
      [...(match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (hasLabels(found, labels)) return Number(match[2]);
  }
  return 0;
}

async function webhookTo(session: TestSession, url: string, eventTypes: string[]) {
  return (await makeWebhookConnection(h, session, url, { eventTypes })).id;
}

describe('GET /metrics', () => {
  test('needs a plt_ key: none is 401, a tenant key or a session is 403 platform_key_required', async () => {
    const none = await h.request('GET', '/metrics');
    assert.equal(none.status, 401, '/metrics answers without a credential');
    assert.equal(
      none.body.code,
      'unauthenticated',
      '/metrics without a credential is refused for another reason than unauthenticated',
    );

    const { session } = await makeSignedInTenant(h);
    const key = await makeKey(h, session);
    for (const credential of [{ token: key.secret }, { session }]) {
      const refused = await h.request('GET', '/metrics', credential);
      assert.equal(
        refused.status,
        403,
        `${Object.keys(credential)[0]}: a tenant credential is not refused on /metrics`,
      );
      assert.equal(
        refused.body.code,
        'platform_key_required',
        `${Object.keys(credential)[0]}: refused for another reason than needing a platform key`,
      );
    }
  });

  test('exposes every family in the Prometheus text format, with figures that follow what happened', async (t) => {
    const { session } = await makeSignedInTenant(h);
    const ok = await startReceiver(t);
    const gone = await startReceiver(t, (_r, _i, res) => void res.writeHead(410).end());
    const flaky = await startReceiver(t, (_r, _i, res) => void res.writeHead(500).end());
    const toOk = await webhookTo(session, ok.url(), ['ok.*']);
    const toGone = await webhookTo(session, gone.url(), ['gone.*']);
    const toFlaky = await webhookTo(session, flaky.url(), ['flaky.*']);
    for (const type of ['ok.1', 'ok.2', 'ok.3', 'gone.1', 'flaky.1'])
      await publishEvent(h, session, { type });
    await waitForDeliveries(h, session, toOk, { statuses: ['delivered', 'delivered', 'delivered'] });
    await waitForDeliveries(h, session, toGone, { statuses: ['failed'] });
    await waitForDeliveries(h, session, toFlaky, { statuses: ['retrying'] });
    const monitoring = await h.request('GET', '/api/v1/platform/monitoring', { token: h.platformToken });
    assert.equal(monitoring.status, 200, 'the monitoring snapshot cannot be read');

    const families = await scrape();
    const types: Array<[string, PrometheusFamily['type']]> = [
      ['hubgate_http_requests_total', 'COUNTER'],
      ['hubgate_http_request_duration_seconds', 'HISTOGRAM'],
      ['hubgate_deliveries_total', 'COUNTER'],
      ['hubgate_delivery_attempt_duration_seconds', 'HISTOGRAM'],
      ['hubgate_delivery_latency_seconds', 'HISTOGRAM'],
      ['hubgate_alert_notifications_total', 'COUNTER'],
      ['hubgate_delivery_queue_depth', 'GAUGE'],
      ['hubgate_delivery_queue_oldest_pending_age_seconds', 'GAUGE'],
      ['hubgate_db_pool_connections', 'GAUGE'],
      ['hubgate_db_up', 'GAUGE'],
      // prom-client's process defaults, under the same prefix.
      ['hubgate_process_cpu_user_seconds_total', 'COUNTER'],
      ['hubgate_process_resident_memory_bytes', 'GAUGE'],
      ['hubgate_nodejs_eventloop_lag_seconds', 'GAUGE'],
      ['hubgate_nodejs_heap_size_used_bytes', 'GAUGE'],
    ];
    for (const [name, type] of types) {
      const found = family(families, name);
      assert.equal(found.type, type, name);
      assert.ok(found.help.length > 0, `${name} has help`);
    }
    // Every metric the monitoring page's table documents is served, with the type it says.
    const page = readFileSync(new URL('../../docs/operators/monitoring.md', import.meta.url), 'utf8');
    const documented = [...page.matchAll(/^\| `(hubgate_[a-z_]+)`\s*\| (counter|gauge|histogram)\s*\|/gm)];
    assert.ok(documented.length >= 10, 'docs/operators/monitoring.md documents the metrics');
    for (const [, name, type] of documented) {
      assert.equal(
        family(families, name!).type,
        type!.toUpperCase(),
        `docs/operators/monitoring.md: ${name}`,
      );
    }

    // One attempt per delivery: three delivered, one failed for good, one to be retried.
    assert.equal(
      valueOf(families, 'hubgate_deliveries_total', { outcome: 'delivered' }),
      3,
      'the delivered deliveries are not counted as 3',
    );
    assert.equal(
      valueOf(families, 'hubgate_deliveries_total', { outcome: 'failed' }),
      1,
      'the failed delivery is not counted once',
    );
    assert.equal(
      valueOf(families, 'hubgate_deliveries_total', { outcome: 'retrying' }),
      1,
      'the delivery to be retried is not counted once',
    );
    assert.equal(
      valueOf(families, 'hubgate_deliveries_total', { outcome: 'cancelled' }),
      undefined,
      'a cancelled delivery is counted though none was cancelled',
    );
    assert.equal(
      histogramCount(families, 'hubgate_delivery_latency_seconds'),
      3,
      'the delivery latency was not observed for each of the 3 delivered',
    );
    const attempts = 'hubgate_delivery_attempt_duration_seconds';
    assert.equal(
      histogramCount(families, attempts, { outcome: 'delivered' }),
      3,
      "the delivered attempts' durations were not observed 3 times",
    );
    assert.equal(
      histogramCount(families, attempts, { outcome: 'failed' }),
      1,
      "the failed attempt's duration was not observed once",
    );
    assert.equal(
      histogramCount(families, attempts, { outcome: 'retrying' }),
      1,
      "the retried attempt's duration was not observed once",
    );
    const monitoringRoute = { method: 'GET', route: '/api/v1/platform/monitoring' };
    assert.equal(
      valueOf(families, 'hubgate_http_requests_total', { ...monitoringRoute, status: '200' }),
      1,
      'the one monitoring request is not counted once with its status',
    );
    assert.equal(
      histogramCount(families, 'hubgate_http_request_duration_seconds', monitoringRoute),
      1,
      "the monitoring request's duration was not observed once",
    );
    assert.equal(
      valueOf(families, 'hubgate_http_requests_total', {
        method: 'POST',
        route: '/api/v1/integrations/events',
        status: '202',
      }),
      5,
      'the 5 published events are not counted as 202s on their route',
    );
    assert.deepEqual(
      family(families, 'hubgate_alert_notifications_total').metrics,
      [],
      'an alert notification is counted though none was sent',
    );

    // The queue as the database holds it now: the retry is an hour away, so nothing is due.
    assert.equal(
      valueOf(families, 'hubgate_delivery_queue_depth', { status: 'pending' }),
      0,
      'a pending delivery is counted though none is due',
    );
    assert.equal(
      valueOf(families, 'hubgate_delivery_queue_depth', { status: 'retrying' }),
      1,
      'the delivery to be retried is not in the queue gauge',
    );
    assert.equal(
      valueOf(families, 'hubgate_delivery_queue_depth', { status: 'delivering' }),
      0,
      'a delivering delivery is counted though none is in flight',
    );
    assert.equal(
      valueOf(families, 'hubgate_delivery_queue_oldest_pending_age_seconds'),
      0,
      'the oldest pending age is not 0 with nothing pending',
    );
    assert.equal(valueOf(families, 'hubgate_db_up'), 1, 'the database is reported down');
    if (ENGINE === 'postgres') {
      const total = valueOf(families, 'hubgate_db_pool_connections', { state: 'total' });
      const idle = valueOf(families, 'hubgate_db_pool_connections', { state: 'idle' });
      assert.ok(total !== undefined && total >= 1 && total <= 20, `pool total ${total}`);
      assert.ok(
        idle !== undefined && idle <= total,
        'the pool reports more idle connections than it has, or none',
      );
      // The scrape's own read may be waiting for a connection being opened.
      const waiting = valueOf(families, 'hubgate_db_pool_connections', { state: 'waiting' });
      assert.ok(
        waiting !== undefined && Number.isInteger(waiting) && waiting >= 0,
        "the pool's waiting count is not a whole number",
      );
    } else {
      assert.deepEqual(family(families, 'hubgate_db_pool_connections').metrics, [], 'no pool when embedded');
    }
    assert.ok(
      (valueOf(families, 'hubgate_process_resident_memory_bytes') ?? 0) > 0,
      'the process memory is not reported',
    );

    // The scrape itself is counted once it is answered, and the snapshot agrees with the counter.
    const next = await scrape();
    assert.equal(
      valueOf(next, 'hubgate_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }),
      1,
      'the first scrape is not counted once the second is answered',
    );
    const answered = family(families, 'hubgate_http_requests_total').metrics.reduce(
      (sum, m) => sum + Number(m.value),
      0,
    );
    const snap = await h.request('GET', '/api/v1/platform/monitoring', { token: h.platformToken });
    // Everything the first scrape counted, plus that scrape and the second one.
    assert.equal(
      snap.body.http.requests,
      answered + 2,
      'the monitoring snapshot does not agree with the request counter',
    );
  });

  test('is described in the OpenAPI document as text for platform keys', async () => {
    const doc = (await h.request('GET', '/api/v1/openapi.json')).body;
    const operation = doc.paths['/metrics'].get;
    assert.deepEqual(
      operation.security,
      [{ platformKey: [] }],
      '/metrics is not documented as for platform keys only',
    );
    assert.ok(operation.summary, '/metrics has no summary in the OpenAPI document');
    assert.deepEqual(
      operation.responses['200'].content['text/plain'].schema,
      { type: 'string' },
      '/metrics is not documented as plain text',
    );
  });
});

describe('scrape-time gauges without a database', () => {
  test('the scrape still answers: hubgate_db_up is 0 and the queue series are absent', async () => {
    // Over HTTP the plt_ key check itself needs the database; the gauges' own fallback is observed
    // here, on a real database of this run's engine that has been dropped and closed.
    const gone = await createTestDatabase();
    await gone.drop();
    const metrics = createMetrics();
    const errors: unknown[] = [];
    registerScrapeMetrics(metrics, gone.database, { now: () => new Date(), onError: (e) => errors.push(e) });
    const families = parse(await metrics.registry.metrics());
    assert.equal(valueOf(families, 'hubgate_db_up'), 0, 'the database is reported up though it was dropped');
    assert.deepEqual(
      family(families, 'hubgate_delivery_queue_depth').metrics,
      [],
      'queue series are reported without a database',
    );
    assert.equal(
      valueOf(families, 'hubgate_delivery_queue_oldest_pending_age_seconds'),
      0,
      'the oldest pending age is not 0 without a database',
    );
    assert.ok(
      (valueOf(families, 'hubgate_process_resident_memory_bytes') ?? 0) > 0,
      'the process memory is not reported without a database',
    );
    assert.equal(errors.length, 1, 'one database read per scrape, shared by the gauges');
  });
});
