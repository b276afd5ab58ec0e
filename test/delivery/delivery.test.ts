import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { makeKey, makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { type Harness, type TestSession, startHarness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';

// Receivers listen on 127.0.0.1 only, opened by DELIVERY_ALLOWED_CIDRS; nothing else is contacted.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '0,0',
  DELIVERY_TIMEOUT_MS: '400',
};

let h: Harness;
const names = new Map<string, string>();
const mixed = new Map<string, string[]>();
const rebinding = new Map<string, () => string>();
before(async () => {
  h = await startHarness({
    env: ENV,
    workers: {
      pollMs: 50,
      // Names resolve through this table only: a test decides what DNS answers.
      resolve: async (hostname) => {
        const several = mixed.get(hostname);
        if (several) return several.map((address) => ({ address, family: 4 }));
        const next = rebinding.get(hostname);
        if (next) return [{ address: next(), family: 4 }];
        const address = names.get(hostname);
        if (!address) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
        return [{ address, family: address.includes(':') ? 6 : 4 }];
      },
    },
  });
});
after(() => h.close());

const CONNECTIONS = '/api/v1/integrations/connections';

const webhookTo = (session: TestSession, url: string, extra: Record<string, unknown> = {}) =>
  makeWebhookConnection(h, session, url, extra);

async function publish(
  session: TestSession,
  type: string,
  data: unknown,
  headers: Record<string, string> = {},
) {
  return h.request('POST', '/api/v1/integrations/events', { session, body: { type, data }, headers });
}

async function logOf(session: TestSession, connectionId: string, query = '') {
  const r = await h.request('GET', `${CONNECTIONS}/${connectionId}/events${query}`, { session });
  assert.equal(r.status, 200, r.text);
  return r.body;
}

async function settled(session: TestSession, connectionId: string, count = 1, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const log = await logOf(session, connectionId);
    const done = log.data.filter((d: { status: string }) =>
      ['delivered', 'failed', 'cancelled'].includes(d.status),
    );
    if (done.length >= count) return log.data;
    if (Date.now() > deadline) throw new Error(`not settled: ${JSON.stringify(log.data)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('delivery', () => {
  test('a published event reaches the webhook once, signed as Standard Webhooks, and the log says so', async () => {
    const receiver = await startReceiver();
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      const r = await publish(session, 'employee.created', { name: 'Ada', id: 7 });
      assert.equal(r.status, 202, r.text);
      assert.match(r.body.id, /^evt_/);
      assert.equal(r.body.deliveries, 1);
      const [got] = await receiver.waitFor(1);
      assert.ok(got);
      assert.equal(got.method, 'POST');
      assert.equal(got.headers['webhook-id'], r.body.id);
      assert.match(String(got.headers['user-agent']), /^hubgate\//);
      assert.equal(got.headers['content-type'], 'application/json');
      const verified = new Webhook(hook.secret).verify(got.body, {
        'webhook-id': String(got.headers['webhook-id']),
        'webhook-timestamp': String(got.headers['webhook-timestamp']),
        'webhook-signature': String(got.headers['webhook-signature']),
      });
      assert.deepEqual(verified, {
        id: r.body.id,
        type: 'employee.created',
        timestamp: r.body.createdAt,
        data: { name: 'Ada', id: 7 },
      });
      const [entry] = await settled(session, hook.id);
      assert.equal(entry.status, 'delivered');
      assert.equal(entry.eventId, r.body.id);
      assert.equal(entry.eventType, 'employee.created');
      assert.equal(entry.attemptCount, 1);
      assert.ok(entry.deliveredAt);
      assert.equal(entry.attempts.length, 1);
      assert.equal(entry.attempts[0].responseStatus, 200);
      assert.equal(entry.attempts[0].remoteAddress, '127.0.0.1');
      assert.equal(entry.attempts[0].error, null);
      assert.ok(!JSON.stringify(entry).includes('Ada'), 'the log holds no payload');
    } finally {
      await receiver.close();
    }
  });

  test('during a secret overlap both signatures are sent and either secret verifies', async () => {
    const receiver = await startReceiver();
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      const rebound = await h.request('PUT', `${CONNECTIONS}/${hook.id}/credentials`, { session, body: {} });
      const fresh = rebound.body.credentials.signingSecret as string;
      await publish(session, 'x.y', {});
      const [got] = await receiver.waitFor(1);
      assert.ok(got);
      const headers = {
        'webhook-id': String(got.headers['webhook-id']),
        'webhook-timestamp': String(got.headers['webhook-timestamp']),
        'webhook-signature': String(got.headers['webhook-signature']),
      };
      assert.equal(headers['webhook-signature'].split(' ').length, 2);
      new Webhook(fresh).verify(got.body, headers);
      new Webhook(hook.secret).verify(got.body, headers);
    } finally {
      await receiver.close();
    }
  });

  test('eventTypes filter the fan-out', async () => {
    const receiver = await startReceiver();
    try {
      const { session } = await makeSignedInTenant(h);
      const employees = await webhookTo(session, receiver.url('/employees'), { eventTypes: ['employee.*'] });
      await webhookTo(session, receiver.url('/all'));
      assert.equal((await publish(session, 'employee.updated', {})).body.deliveries, 2);
      assert.equal((await publish(session, 'invoice.paid', {})).body.deliveries, 1);
      await receiver.waitFor(3);
      const paths = receiver.received.map((r) => r.url).sort();
      assert.deepEqual(paths, ['/all', '/all', '/employees']);
      assert.equal((await logOf(session, employees.id)).data.length, 1);
    } finally {
      await receiver.close();
    }
  });

  test('a failing-then-healing receiver is retried until delivered', async () => {
    const receiver = await startReceiver((_r, i, res) => {
      res.statusCode = i < 2 ? 503 : 200;
      res.end();
    });
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      await publish(session, 'a.b', {});
      const [entry] = await settled(session, hook.id);
      assert.equal(entry.status, 'delivered');
      assert.equal(entry.attemptCount, 3);
      assert.deepEqual(
        entry.attempts.map((a: { responseStatus: number; error: string | null }) => [
          a.responseStatus,
          a.error,
        ]),
        [
          [503, 'http_status'],
          [503, 'http_status'],
          [200, null],
        ],
      );
      // Every attempt carries the same webhook-id: receivers deduplicate by it.
      assert.equal(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size, 1);
    } finally {
      await receiver.close();
    }
  });

  test('after the last scheduled attempt the delivery fails; a manual retry sends it once more', async () => {
    let healthy = false;
    const receiver = await startReceiver((_r, _i, res) => {
      res.statusCode = healthy ? 204 : 500;
      res.end();
    });
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      await publish(session, 'a.b', {});
      const [entry] = await settled(session, hook.id);
      assert.equal(entry.status, 'failed');
      assert.equal(entry.attemptCount, 3, 'the first attempt and the two of the schedule');
      assert.equal(entry.nextAttemptAt, null);
      healthy = true;
      const retry = await h.request('POST', `${CONNECTIONS}/${hook.id}/events/${entry.id}/retry`, {
        session,
      });
      assert.equal(retry.status, 202, retry.text);
      await receiver.waitFor(4);
      const [after] = await settled(session, hook.id);
      assert.equal(after.status, 'delivered');
      const again = await h.request('POST', `${CONNECTIONS}/${hook.id}/events/${entry.id}/retry`, {
        session,
      });
      assert.equal(again.status, 409, 'only failed deliveries can be retried');
    } finally {
      await receiver.close();
    }
  });

  test('a delivery retaken after its worker died logs the lost attempt as interrupted and goes on with the schedule', async () => {
    const receiver = await startReceiver();
    try {
      const { tenant, session } = await makeSignedInTenant(h);
      // A connection that this event does not fan out to: the test writes the deliveries itself, as a
      // worker that claimed them and died before recording anything would have left them.
      const hook = await webhookTo(session, receiver.url(), { eventTypes: ['never.*'] });
      const event = await publish(session, 'a.b', {});
      assert.equal(event.body.deliveries, 0);
      const claimedAt = new Date(Date.now() - 30_000);
      // A delivery is created with its event: the same moment, the same partition.
      const createdAt = new Date(event.body.createdAt);
      const lost = (id: string, attemptCount: number) => ({
        id,
        tenant_id: tenant.id,
        event_id: event.body.id,
        connection_id: hook.id,
        status: 'delivering' as const,
        attempt_count: attemptCount,
        next_attempt_at: claimedAt,
        lease_until: new Date(claimedAt.getTime() + 25_000),
        leased_by: 'wrk_gone',
        created_at: createdAt,
        updated_at: claimedAt,
        delivered_at: null,
      });
      const earlier = (id: string, number: number) => ({
        delivery_id: id,
        delivery_created_at: createdAt,
        number,
        started_at: claimedAt,
        duration_ms: 3,
        remote_address: '127.0.0.1',
        response_status: 500,
        error: 'http_status',
        error_detail: 'HTTP 500',
      });
      // The first attempt lost; and the last one the schedule allows (0,0: three attempts) lost.
      await h.database.kysely
        .insertInto('deliveries')
        .values([lost('dlv_interruptedFirst000000', 0), lost('dlv_interruptedLast0000000', 2)])
        .execute();
      await h.database.kysely
        .insertInto('delivery_attempts')
        .values([earlier('dlv_interruptedLast0000000', 1), earlier('dlv_interruptedLast0000000', 2)])
        .execute();

      const log = await settled(session, hook.id, 2);
      const entry = (id: string) => log.find((d: { id: string }) => d.id === id);
      const first = entry('dlv_interruptedFirst000000');
      assert.equal(first.status, 'delivered');
      assert.equal(first.attemptCount, 2);
      assert.deepEqual(
        first.attempts.map((a: { number: number; error: string | null }) => [a.number, a.error]),
        [
          [1, 'interrupted'],
          [2, null],
        ],
      );
      const [interrupted] = first.attempts;
      assert.equal(interrupted.startedAt, claimedAt.toISOString(), 'it started when the lost claim was made');
      assert.equal(interrupted.durationMs, 25_000, 'as long as the claim lasted');
      assert.equal(interrupted.responseStatus, null);
      assert.equal(interrupted.remoteAddress, null);
      assert.match(interrupted.errorDetail, /^the worker stopped before recording an outcome/);
      assert.equal(receiver.received.length, 1, 'attempt 2 only: the test played attempt 1');

      const last = entry('dlv_interruptedLast0000000');
      assert.equal(last.status, 'failed', 'a lost last attempt spends the schedule like any failure');
      assert.equal(last.attemptCount, 3);
      assert.deepEqual(
        last.attempts.map((a: { number: number; error: string | null }) => [a.number, a.error]),
        [
          [1, 'http_status'],
          [2, 'http_status'],
          [3, 'interrupted'],
        ],
      );
    } finally {
      await receiver.close();
    }
  });

  test('410 Gone fails at once, without retries', async () => {
    const receiver = await startReceiver((_r, _i, res) => {
      res.statusCode = 410;
      res.end();
    });
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      await publish(session, 'a.b', {});
      const [entry] = await settled(session, hook.id);
      assert.equal(entry.status, 'failed');
      assert.equal(entry.attemptCount, 1);
      assert.equal(entry.attempts[0].responseStatus, 410);
    } finally {
      await receiver.close();
    }
  });

  test('redirects are refused and the redirect target never receives anything', async () => {
    const target = await startReceiver();
    const receiver = await startReceiver((_r, _i, res) => {
      res.statusCode = 302;
      res.setHeader('location', target.url('/stolen'));
      res.end();
    });
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      await publish(session, 'a.b', {});
      const [entry] = await settled(session, hook.id);
      assert.equal(entry.status, 'failed');
      assert.ok(entry.attempts.every((a: { error: string }) => a.error === 'redirect_refused'));
      assert.equal(target.received.length, 0);
    } finally {
      await Promise.all([receiver.close(), target.close()]);
    }
  });

  test('a receiver slower than DELIVERY_TIMEOUT_MS is a timeout, and the worker carries on', async () => {
    const receiver = await startReceiver((_r, _i, res) => {
      setTimeout(() => res.end(), 1_500);
    });
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      await publish(session, 'a.b', {});
      const [entry] = await settled(session, hook.id);
      assert.equal(entry.status, 'failed');
      assert.ok(
        entry.attempts.every((a: { error: string }) => a.error === 'timeout'),
        JSON.stringify(entry),
      );
      assert.ok(entry.attempts.every((a: { durationMs: number }) => a.durationMs < 1_400));
    } finally {
      await receiver.close();
    }
  });

  test('at send time every resolved address is checked: a name that resolves to 127.0.0.2 is refused', async () => {
    const receiver = await startReceiver();
    try {
      const { session } = await makeSignedInTenant(h);
      names.set('refused.hub.test', '127.0.0.2');
      names.set('allowed.hub.test', '127.0.0.1');
      const refused = await webhookTo(session, `http://refused.hub.test:${receiver.port}/hook`);
      const allowed = await webhookTo(session, `http://allowed.hub.test:${receiver.port}/hook`);
      await publish(session, 'a.b', {});
      const [bad] = await settled(session, refused.id);
      assert.equal(bad.status, 'failed');
      assert.equal(bad.attempts[0].error, 'destination_forbidden');
      assert.match(bad.attempts[0].errorDetail, /127\.0\.0\.2/);
      const [good] = await settled(session, allowed.id);
      assert.equal(good.status, 'delivered');
      assert.equal(good.attempts[0].remoteAddress, '127.0.0.1');
      assert.equal(receiver.received.length, 1);
    } finally {
      await receiver.close();
    }
  });
});

describe('publishing', () => {
  test('bad input: the contract codes, nothing enqueued', async () => {
    const { session } = await makeSignedInTenant(h);
    const receiver = await startReceiver();
    try {
      const hook = await webhookTo(session, receiver.url());
      const cases: Array<[string, unknown, number, string]> = [
        ['type pattern', { type: 'Employee Created', data: {} }, 400, 'validation_failed'],
        ['no type', { data: {} }, 400, 'validation_failed'],
        ['data array', { type: 'a.b', data: [1] }, 400, 'validation_failed'],
        ['data string', { type: 'a.b', data: 'x' }, 400, 'validation_failed'],
        ['unknown field', { type: 'a.b', data: {}, extra: 1 }, 400, 'validation_failed'],
        ['data over 256 KiB', { type: 'a.b', data: { blob: 'x'.repeat(262_200) } }, 413, 'payload_too_large'],
        ['body over 1 MiB', { type: 'a.b', data: { blob: 'x'.repeat(1_100_000) } }, 413, 'payload_too_large'],
      ];
      for (const [name, body, status, code] of cases) {
        const r = await h.request('POST', '/api/v1/integrations/events', { session, body });
        assert.equal(r.status, status, `${name}: ${r.text}`);
        assert.equal(r.body.code, code, name);
      }
      const longKey = await publish(session, 'a.b', {}, { 'idempotency-key': 'k'.repeat(256) });
      assert.equal(longKey.status, 400);
      assert.equal((await logOf(session, hook.id)).data.length, 0);
      assert.equal(receiver.received.length, 0);
    } finally {
      await receiver.close();
    }
  });

  test('Idempotency-Key: same key and body → same answer, one fan-out; other body → 409', async () => {
    const receiver = await startReceiver();
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      const key = { 'idempotency-key': 'order-42' };
      const first = await publish(session, 'order.paid', { n: 1 }, key);
      const second = await publish(session, 'order.paid', { n: 1 }, key);
      assert.equal(first.status, 202);
      assert.deepEqual(second.body, first.body);
      const other = await publish(session, 'order.paid', { n: 2 }, key);
      assert.equal(other.status, 409);
      assert.equal(other.body.code, 'conflict');
      await settled(session, hook.id);
      assert.equal((await logOf(session, hook.id)).data.length, 1);
      // Keys belong to a tenant: another tenant may use the same one.
      const them = await makeSignedInTenant(h);
      const theirs = await publish(them.session, 'order.paid', { n: 1 }, key);
      assert.notEqual(theirs.body.id, first.body.id);
    } finally {
      await receiver.close();
    }
  });

  test('a key needs integrations:OPERATOR to publish; READER reads the log', async () => {
    const { session } = await makeSignedInTenant(h);
    const reader = await makeKey(h, session, { scopes: ['integrations:READER'] });
    const operator = await makeKey(h, session, { scopes: ['integrations:OPERATOR'] });
    const body = { type: 'a.b', data: {} };
    const denied = await h.request('POST', '/api/v1/integrations/events', { token: reader.secret, body });
    assert.equal(denied.body.code, 'insufficient_scope');
    const ok = await h.request('POST', '/api/v1/integrations/events', { token: operator.secret, body });
    assert.equal(ok.status, 202);
    assert.equal(ok.body.deliveries, 0);
  });
});

describe('event log', () => {
  test('pages without gaps or repeats, filters by status, and is 404 for other tenants', async () => {
    const receiver = await startReceiver((_r, i, res) => {
      res.statusCode = i % 2 === 0 ? 200 : 410;
      res.end();
    });
    try {
      const { session } = await makeSignedInTenant(h);
      const hook = await webhookTo(session, receiver.url());
      for (let i = 0; i < 5; i++) await publish(session, `n.e${i}`, {});
      await settled(session, hook.id, 5);
      const seen: string[] = [];
      let cursor = '';
      for (;;) {
        const page = await logOf(session, hook.id, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.data.map((d: { id: string }) => d.id));
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      assert.equal(seen.length, 5);
      assert.equal(new Set(seen).size, 5);
      const failed = await logOf(session, hook.id, '?status=failed');
      const delivered = await logOf(session, hook.id, '?status=delivered');
      assert.equal(failed.data.length + delivered.data.length, 5);
      assert.ok(failed.data.every((d: { status: string }) => d.status === 'failed'));
      const bad = await h.request('GET', `${CONNECTIONS}/${hook.id}/events?status=lost`, { session });
      assert.equal(bad.status, 400);
      const other = await makeSignedInTenant(h);
      const theirs = await h.request('GET', `${CONNECTIONS}/${hook.id}/events`, { session: other.session });
      assert.equal(theirs.status, 404);
    } finally {
      await receiver.close();
    }
  });
});

describe('revocation', () => {
  test('revoking a connection cancels its open deliveries; nothing is sent to it, ever', async () => {
    // No workers here: the deliveries stay pending until the revocation.
    const idle = await startHarness({ env: ENV });
    const receiver = await startReceiver();
    try {
      const { session } = await makeSignedInTenant(idle);
      const created = await idle.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'webhook', displayName: 'h', url: receiver.url() },
      });
      await idle.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, { session, body: {} });
      for (let i = 0; i < 3; i++) {
        await idle.request('POST', '/api/v1/integrations/events', {
          session,
          body: { type: 'a.b', data: {} },
        });
      }
      const before = await idle.request('GET', `${CONNECTIONS}/${created.body.id}/events`, { session });
      assert.deepEqual(
        before.body.data.map((d: { status: string }) => d.status),
        ['pending', 'pending', 'pending'],
      );
      const overview = await idle.request('GET', '/api/v1/integration-hub/overview', { session });
      assert.deepEqual(overview.body.deliveries24h, { delivered: 0, failed: 0, pending: 3 });
      await idle.request('POST', `${CONNECTIONS}/${created.body.id}/revoke`, { session });
      const afterRevoke = await idle.request('GET', `${CONNECTIONS}/${created.body.id}/events`, { session });
      assert.deepEqual(
        afterRevoke.body.data.map((d: { status: string; nextAttemptAt: string | null }) => [
          d.status,
          d.nextAttemptAt,
        ]),
        [
          ['cancelled', null],
          ['cancelled', null],
          ['cancelled', null],
        ],
      );
      const published = await idle.request('POST', '/api/v1/integrations/events', {
        session,
        body: { type: 'a.b', data: {} },
      });
      assert.equal(published.body.deliveries, 0, 'a disabled connection takes no new event');
      assert.equal(receiver.received.length, 0);
    } finally {
      await receiver.close();
      await idle.close();
    }
  });
});

describe('retention', () => {
  test('finished deliveries and their payloads are deleted after DELIVERY_RETENTION_DAYS', async () => {
    const receiver = await startReceiver();
    const hub = await startHarness({
      env: { ...ENV, DELIVERY_RETENTION_DAYS: '1' },
      workers: { pollMs: 50, retentionIntervalMs: 100 },
    });
    try {
      const { session } = await makeSignedInTenant(hub);
      const created = await hub.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'webhook', displayName: 'h', url: receiver.url() },
      });
      await hub.request('PUT', `${CONNECTIONS}/${created.body.id}/credentials`, { session, body: {} });
      await hub.request('POST', '/api/v1/integrations/events', { session, body: { type: 'a.b', data: {} } });
      await receiver.waitFor(1);
      // A key, not the session: the session would have expired by the time the clock is moved to.
      const reader = await makeKey(hub, session, { scopes: ['integrations:READER'] });
      const log = async () => {
        const r = await hub.request('GET', `${CONNECTIONS}/${created.body.id}/events`, {
          token: reader.secret,
        });
        assert.equal(r.status, 200, r.text);
        return r.body.data;
      };
      for (let i = 0; i < 100 && (await log())[0]?.status !== 'delivered'; i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.equal((await log()).length, 1);
      hub.setNow(new Date(Date.now() + 2 * 86_400_000));
      const deadline = Date.now() + 5_000;
      while ((await log()).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(await log(), []);
      const events = await hub.database.kysely.selectFrom('events').select('id').execute();
      assert.equal(events.length, 0, 'the payload went with it');
    } finally {
      hub.setNow(null);
      await hub.close();
      await receiver.close();
    }
  });
});

describe('receivers that misbehave', () => {
  async function outcome(url: string) {
    const { session } = await makeSignedInTenant(h);
    const hook = await webhookTo(session, url);
    await publish(session, 'a.b', {});
    const [entry] = await settled(session, hook.id);
    return entry;
  }

  test('garbage instead of HTTP is a connection_error', async () => {
    const server = createServer((socket) => {
      socket.once('data', () => socket.end('garbage, not http\r\n\r\n'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const entry = await outcome(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
      assert.equal(entry.status, 'failed');
      assert.equal(entry.attempts[0].error, 'connection_error', JSON.stringify(entry.attempts[0]));
    } finally {
      server.close();
    }
  });

  test('a huge answer is read only up to a cap: the attempt succeeds quickly', async () => {
    const receiver = await startReceiver((_r, _i, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 120);
      let sent = 0;
      const pump = () => {
        while (sent < 50 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
        if (sent < 50 * 1024 * 1024) res.once('drain', pump);
        else res.end();
      };
      res.on('error', () => {});
      pump();
    });
    try {
      const entry = await outcome(receiver.url());
      assert.equal(entry.status, 'delivered');
      assert.ok(entry.attempts[0].durationMs < 2_000, `${entry.attempts[0].durationMs} ms`);
    } finally {
      await receiver.close();
    }
  });

  test('a connection closed in the middle of the answer is a connection_error', async () => {
    const receiver = await startReceiver((_r, _i, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    try {
      const entry = await outcome(receiver.url());
      assert.equal(entry.status, 'failed');
      assert.equal(entry.attempts[0].error, 'connection_error', JSON.stringify(entry.attempts[0]));
    } finally {
      await receiver.close();
    }
  });

  test('TLS to a plain HTTP port is a tls_error', async () => {
    const receiver = await startReceiver();
    try {
      const entry = await outcome(`https://127.0.0.1:${receiver.port}/hook`);
      assert.equal(entry.status, 'failed');
      assert.equal(entry.attempts[0].error, 'tls_error', JSON.stringify(entry.attempts[0]));
      assert.equal(receiver.received.length, 0);
    } finally {
      await receiver.close();
    }
  });

  test('a name with one refused address among allowed ones is refused: every address is checked', async () => {
    const receiver = await startReceiver();
    try {
      names.set('mixed.hub.test', '127.0.0.1');
      mixed.set('mixed.hub.test', ['127.0.0.1', '127.0.0.2']);
      const entry = await outcome(`http://mixed.hub.test:${receiver.port}/hook`);
      assert.equal(entry.status, 'failed');
      assert.equal(entry.attempts[0].error, 'destination_forbidden');
      assert.match(entry.attempts[0].errorDetail, /127\.0\.0\.2/);
      assert.equal(receiver.received.length, 0);
    } finally {
      await receiver.close();
    }
  });

  test('DNS rebinding: the socket goes to the address that was checked, whatever DNS says next', async () => {
    const receiver = await startReceiver();
    try {
      // First answer allowed, every later answer refused: a second lookup would be refused, so a
      // delivered request proves the connection used the checked answer and asked no one again.
      let calls = 0;
      rebinding.set('rebind.hub.test', () => (calls++ === 0 ? '127.0.0.1' : '127.0.0.2'));
      const entry = await outcome(`http://rebind.hub.test:${receiver.port}/hook`);
      assert.equal(entry.status, 'delivered');
      assert.equal(entry.attempts[0].remoteAddress, '127.0.0.1');
      assert.equal(calls, 1);
      assert.equal(receiver.received.length, 1);
    } finally {
      await receiver.close();
    }
  });
});

describe('connectors render events their own way', () => {
  test('http: the event JSON with the bound header, by the configured method; slack: a message', async () => {
    const receiver = await startReceiver();
    try {
      const { session } = await makeSignedInTenant(h);
      const http = await h.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'http', displayName: 'erp', url: receiver.url('/erp'), method: 'PUT' },
      });
      await h.request('PUT', `${CONNECTIONS}/${http.body.id}/credentials`, {
        session,
        body: { headerName: 'X-Api-Key', headerValue: 'erp-secret-value' },
      });
      const slack = await h.request('POST', CONNECTIONS, {
        session,
        body: { connectorKey: 'slack', displayName: '#hr' },
      });
      await h.request('PUT', `${CONNECTIONS}/${slack.body.id}/credentials`, {
        session,
        body: { webhookUrl: receiver.url('/slack') },
      });
      const published = await publish(session, 'employee.created', { name: 'Grace' });
      assert.equal(published.body.deliveries, 2);
      await receiver.waitFor(2);
      const erp = receiver.received.find((r) => r.url === '/erp');
      const message = receiver.received.find((r) => r.url === '/slack');
      assert.ok(erp && message);
      assert.equal(erp.method, 'PUT');
      assert.equal(erp.headers['x-api-key'], 'erp-secret-value');
      assert.equal(erp.headers['webhook-signature'], undefined, 'only webhook connections are signed');
      assert.deepEqual(JSON.parse(erp.body), {
        id: published.body.id,
        type: 'employee.created',
        timestamp: published.body.createdAt,
        data: { name: 'Grace' },
      });
      assert.equal(message.method, 'POST');
      const text = JSON.parse(message.body).text as string;
      assert.ok(
        text.includes('employee.created') && text.includes(published.body.id) && text.includes('Grace'),
      );
    } finally {
      await receiver.close();
    }
  });
});
