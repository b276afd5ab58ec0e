import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createKeyring } from '../../src/crypto/keyring.js';
import { startWorker } from '../helpers/cli.js';
import { publishEvent } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTestDatabase, ENGINE, type TestDatabase } from '../helpers/test-database.js';
import { startOtlpSink } from './otlp-sink.js';

// `hubgate worker` in its own process links its attempt to the publish span another process made
// (docs/operators/telemetry.md). PostgreSQL only: the embedded database belongs to one process.
if (ENGINE === 'postgres') {
  const DELIVERY = { DELIVERY_ALLOW_HTTP: 'true', DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32' };
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase();
  });
  after(() => database.drop());

  test('an attempt made by hubgate worker links to the publish span of serve', async (t) => {
    if (database.target.kind !== 'postgres') throw new Error('unreachable');
    const sink = await startOtlpSink();
    t.after(() => sink.close());
    const receiver = await startReceiver(t);
    const secretKey = randomBytes(32);
    const env = { ...DELIVERY, OTEL_EXPORTER_OTLP_ENDPOINT: sink.url };
    // The app publishes; with no worker of its own every delivery waits for the worker process.
    const h = await startHarness({ env, testDatabase: database, keyring: createKeyring(secretKey) });
    let closed = false;
    t.after(() => (closed ? undefined : h.close()));
    const { session } = await makeSignedInTenant(h);
    await makeWebhookConnection(h, session, receiver.url());
    const published = await publishEvent(h, session, { type: 'order.created' });
    assert.equal(published.status, 202, published.text);

    const worker = await startWorker(
      { ...env, DATABASE_URL: database.target.url, HUBGATE_SECRET_KEY: secretKey.toString('base64') },
      t,
    );
    const [got] = await receiver.waitFor(1);
    assert.equal(await worker.stop(), 0, `the worker did not exit 0:\n${worker.output()}`);
    await h.close();
    closed = true;

    const publish = sink.spans.find((s) => s.name === 'publish');
    const attempt = sink.spans.find((s) => s.name === 'deliver');
    assert.ok(publish, 'serve exported no publish span');
    assert.ok(attempt, `the worker exported no attempt span before it exited:\n${worker.output()}`);
    assert.deepEqual(
      attempt.links,
      [{ traceId: publish.traceId, spanId: publish.spanId }],
      "the worker's attempt span is not linked to serve's publish span",
    );
    assert.equal(
      got!.headers.traceparent,
      `00-${attempt.traceId}-${attempt.spanId}-01`,
      "the receiver's traceparent is not the worker's attempt span",
    );
  });
}
