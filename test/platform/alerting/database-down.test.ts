import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { alertEvaluations } from '../../helpers/alert-engine.js';
import { startHarness, type Harness } from '../../helpers/harness.js';
import { startReceiver } from '../../helpers/receiver.js';
import { adminQuery, createTestDatabase, ENGINE, type TestDatabase } from '../../helpers/test-database.js';
import { waitUntil } from '../../helpers/wait.js';

// DatabaseUnavailable, for real: the test database stops taking connections and its sessions are
// ended, then it is let back. PostgreSQL only (an embedded database cannot go away on its own).
if (ENGINE === 'postgres') {
  let db: TestDatabase;
  let h: Harness;
  let pager: Awaited<ReturnType<typeof startReceiver>>;
  let name: string;

  before(async () => {
    db = await createTestDatabase();
    if (db.target.kind !== 'postgres') throw new Error('unreachable');
    name = new URL(db.target.url).pathname.slice(1);
    h = await startHarness({
      testDatabase: db,
      env: {
        DELIVERY_ALLOW_HTTP: 'true',
        DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
        ALERT_EVALUATION_INTERVAL_MS: '100',
        ALERT_RETRY_SCHEDULE: '0,0,0',
      },
      workers: { pollMs: 50 },
    });
    pager = await startReceiver();
    const channel = await h.request('POST', '/api/v1/platform/alerting/channels', {
      token: h.platformToken,
      body: { name: 'ops', kind: 'HTTP', config: { url: pager.url('/notify'), method: 'POST' } },
    });
    assert.equal(channel.status, 201, channel.text);
    const rules = await h.request('PUT', '/api/v1/platform/alerting/rules', {
      token: h.platformToken,
      body: { defaults: { channelIds: [channel.body.id], repeatIntervalSeconds: 3600 }, rules: [] },
    });
    assert.equal(rules.status, 200, rules.text);
  });
  after(async () => {
    await adminQuery(`alter database ${name} allow_connections true`);
    await pager.close();
    await h.close();
    await db.drop();
  });

  const notices = () =>
    pager.received.map(
      (r) => JSON.parse(r.body) as { status: string; alerts: Array<{ labels: Record<string, string> }> },
    );

  test('DatabaseUnavailable is sent while the database is gone, and resolved once it is back', async () => {
    // Let the engine take its lease and read the rules first: a whole evaluation after they were saved.
    await alertEvaluations(h.database, 1);
    await adminQuery(`alter database ${name} allow_connections false`);
    await adminQuery(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`,
    );
    await waitUntil(() => notices().some((n) => n.status === 'firing'), {
      message: 'DatabaseUnavailable firing',
      timeoutMs: 20_000,
    });
    const firing = notices().find((n) => n.status === 'firing')!;
    assert.deepEqual(
      firing.alerts[0]!.labels,
      { alertname: 'DatabaseUnavailable', severity: 'critical' },
      'the DatabaseUnavailable notice carries other labels than its name and critical severity',
    );
    const ready = await fetch(`${h.baseUrl}/readyz`);
    assert.equal(ready.status, 503, 'the service says it is ready while its database is gone');

    await adminQuery(`alter database ${name} allow_connections true`);
    await waitUntil(() => notices().some((n) => n.status === 'resolved'), {
      message: 'DatabaseUnavailable resolved',
      timeoutMs: 20_000,
    });
    const resolved = notices().filter((n) => n.alerts[0]!.labels.alertname === 'DatabaseUnavailable');
    assert.deepEqual(
      resolved.map((n) => n.status),
      ['firing', 'resolved'],
      'one firing notice for the outage (repeat interval 1 h), then one resolved',
    );
  });
}
