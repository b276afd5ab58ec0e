import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { publishEvent } from '../helpers/events.js';
import { makeSignedInTenant } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import {
  auditOf,
  bindCredentials,
  createConnection,
  logOf,
  operate,
  patchConnection,
} from '../helpers/operate.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// docs/api/connections.md, Edit: moving an `http` connection to another host unbinds its credentials
// (its header must never reach a host it was not given for). The deliveries queued for it are kept
// as a pause keeps them, `skipped`, and recover sends them once credentials are bound again; they
// used to be cancelled for good by the first worker that took one while nothing was bound (issue
// 37, item 6). Receivers listen on 127.0.0.1 only; the hosts' names resolve to it below.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  // A failed attempt is retried 2 minutes later: the test moves the app's clock to make it due.
  DELIVERY_RETRY_SCHEDULE: '120,120',
  DELIVERY_TIMEOUT_MS: '5000',
  RATE_LIMIT_PER_MINUTE: '1000000',
};
const LATER = 3 * 60_000;
const names = new Map([
  ['old.host-change.test', '127.0.0.1'],
  ['new.host-change.test', '127.0.0.1'],
]);

let h: Harness;
before(async () => {
  h = await startHarness({
    env: ENV,
    workers: {
      pollMs: 50,
      resolve: async (hostname) => {
        const address = names.get(hostname);
        if (!address) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        return [{ address, family: 4 }];
      },
    },
  });
});
after(() => h.close());

test('http: deliveries queued before a host change are kept skipped and recovered once credentials are bound again', async (t) => {
  t.after(() => h.setNow(null));
  const old = await startReceiver(t, (_r, _i, res) => {
    res.statusCode = 500;
    res.end();
  });
  const fresh = await startReceiver(t);
  const { session } = await makeSignedInTenant(h);
  const oldValue = 'host-change-old-header-value-41';
  const newValue = 'host-change-new-header-value-59';
  const since = new Date(Date.now() - 1000).toISOString();
  const c = await createConnection(h, session, {
    connectorKey: 'http',
    displayName: 'erp',
    url: `http://old.host-change.test:${old.port}/erp`,
  });
  await bindCredentials(h, session, c.id, { headerName: 'X-Api-Key', headerValue: oldValue });
  const queued = [
    await publishEvent(h, session, { type: 'erp.one' }),
    await publishEvent(h, session, { type: 'erp.two' }),
  ].map((e) => e.body.id);
  // Both failed once at the old host and wait for their retry: queued.
  await waitUntil(
    async () => {
      const log = await logOf(h, session, c.id);
      return log.length === 2 && log.every((d) => d.status === 'retrying');
    },
    { message: 'both events failing once at the old host, queued for a retry' },
  );

  const moved = await patchConnection(h, session, c.id, {
    url: `http://new.host-change.test:${fresh.port}/erp`,
  });
  assert.equal(moved.status, 200, `moving the connection answered ${moved.status}: ${moved.text}`);
  assert.equal(moved.body.credentialsBound, false, 'a new host kept the credentials meant for the old one');
  // Their retry comes due while nothing is bound: a worker takes them, or they were kept already.
  h.setNow(new Date(Date.now() + LATER));
  const stopped = await waitUntil(
    async () => {
      const log = await logOf(h, session, c.id);
      return log.every((d) => d.status === 'skipped' || d.status === 'cancelled') && log;
    },
    { message: 'the queued deliveries stopped while no credentials are bound' },
  );
  assert.deepEqual(
    stopped.map((d) => d.status),
    ['skipped', 'skipped'],
    'the deliveries queued before the host change were not kept as skipped (cancelled for good?)',
  );
  assert.equal(old.received.length, 2, 'the old host was called again after the host change');
  assert.equal(fresh.received.length, 0, 'the new host was called while no credentials were bound');
  const audit = await auditOf(h, session, c.id);
  const update = audit.find((e) => e.action === 'connection.update');
  assert.equal(update?.metadata.skippedDeliveries, 2, 'the edit’s audit entry does not count the skipped');

  // The clock runs again: a recovered delivery is due a microsecond after the recover, by the clock.
  h.setNow(null);
  await bindCredentials(h, session, c.id, { headerName: 'X-Api-Key', headerValue: newValue });
  const recovered = await operate<{ queued: number }>(h, session, c.id, 'recover', {
    since,
    statuses: ['failed', 'skipped'],
  });
  assert.equal(recovered.status, 202, `recover answered ${recovered.status}: ${recovered.text}`);
  assert.equal(recovered.body.queued, 2, 'recover did not bring back the deliveries queued before the move');
  let seen = '';
  await waitUntil(
    async () => {
      seen = JSON.stringify((await logOf(h, session, c.id)).map((d) => [d.status, d.attempts.at(-1)]));
      return fresh.received.length >= 2;
    },
    { message: () => `the recovered deliveries at the new host (the log: ${seen})` },
  );
  const ids = fresh.received.map((r) => (JSON.parse(r.body) as { id: string }).id).sort();
  assert.deepEqual(ids, [...queued].sort(), 'the new host did not get the events queued before the move');
  for (const r of fresh.received) {
    assert.equal(r.headers['x-api-key'], newValue, 'the new host got another header value than its own');
  }
  assert.equal(old.received.length, 2, 'the old host was called after the host change');
  assert.ok(!h.logs().includes(oldValue) && !h.logs().includes(newValue), 'a header value is in the logs');
});
