import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { loadConnectorCatalog } from '../../src/connections/catalog.js';
import { budgetOf } from '../../src/deadline.js';
import { attemptDelivery, type AttemptDeps } from '../../src/delivery/attempt.js';
import { claimDue, leaseEnd, type ClaimedRow } from '../../src/delivery/claim.js';
import { httpDestination, send } from '../../src/delivery/http-destination.js';
import { createOutcomeWriter } from '../../src/delivery/outcomes.js';
import { prepare, triage } from '../../src/delivery/prepare.js';
import { createRecorder, recordAttempt } from '../../src/delivery/record.js';
import { createWakeup } from '../../src/delivery/wakeup.js';
import { createDeliveryWorker } from '../../src/delivery/worker.js';
import { createMetrics } from '../../src/http/metrics.js';
import { createLogger } from '../../src/logger.js';
import { createSender } from '../../src/outbound/sender.js';
import { publishEvent } from '../helpers/events.js';
import { makeSignedInTenant, makeWebhookConnection } from '../helpers/factories.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { startReceiver, type Responder } from '../helpers/receiver.js';
import { waitUntil } from '../helpers/wait.js';

// Receivers listen on 127.0.0.1 only, opened by DELIVERY_ALLOWED_CIDRS; nothing else is contacted.
const ENV = {
  DELIVERY_ALLOW_HTTP: 'true',
  DELIVERY_ALLOWED_CIDRS: '127.0.0.1/32',
  DELIVERY_RETRY_SCHEDULE: '30,60',
};
const WORKER = 'wrk_phaseTest0001';
const LEASE_MS = 25_000;

/**
 * Each test gets an app without workers (its deliveries stay `pending` until the test claims them)
 * and a database of its own, so a claim takes that test's deliveries only.
 */
async function setup(t: TestContext, respond?: Responder) {
  const h = await startHarness({ env: ENV });
  t.after(() => h.close());
  const receiver = await startReceiver(t, respond);
  const { session } = await makeSignedInTenant(h);
  const hook = await makeWebhookConnection(h, session, receiver.url());
  return { h, receiver, session, hook };
}

function claimAt(h: Harness, now: Date, options: { limit?: number; workerId?: string } = {}) {
  const leaseUntil = leaseEnd(now, LEASE_MS);
  const workerId = options.workerId ?? WORKER;
  return claimDue(h.database.kysely, { workerId, now, leaseUntil, limit: options.limit ?? 10 });
}

function deliveryOf(h: Harness, eventId: string) {
  return h.database.kysely
    .selectFrom('deliveries')
    .selectAll()
    .where('event_id', '=', eventId)
    .executeTakeFirstOrThrow();
}

function attemptsOf(h: Harness, deliveryId: string) {
  return h.database.kysely
    .selectFrom('delivery_attempts')
    .selectAll()
    .where('delivery_id', '=', deliveryId)
    .orderBy('number')
    .execute();
}

/** What the phases after the claim need, from the harness; `logs` holds what the recorder logged. */
function attemptDeps(h: Harness) {
  let logs = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs += chunk.toString();
      done();
    },
  });
  const log = createLogger('info', sink);
  const now = () => new Date();
  const sender = createSender({ policy: h.config.delivery, timeoutMs: h.config.delivery.timeoutMs });
  const writer = createOutcomeWriter(h.database.kysely, WORKER, now);
  const recorder = createRecorder(writer, log);
  const ctx = { keyring: h.keyring, metrics: createMetrics(), now };
  const retryScheduleSeconds = h.config.delivery.retryScheduleSeconds;
  const { timeoutMs } = h.config.delivery;
  return {
    ctx,
    sender,
    destination: httpDestination(sender, 4096),
    recorder,
    retryScheduleSeconds,
    timeoutMs,
    logs: () => logs,
  };
}

/** The event a signed request carries, once its signature checks out with `secret` (throws if not). */
function verify(secret: string, request: { headers: Record<string, string>; body: string }) {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': request.headers['webhook-id'] ?? '',
    'webhook-timestamp': request.headers['webhook-timestamp'] ?? '',
    'webhook-signature': request.headers['webhook-signature'] ?? '',
  }) as { id: string; type: string; timestamp: string; data: unknown };
}

describe('claim', () => {
  test('takes due deliveries up to the limit, holds them with a lease, and retakes them once it runs out', async (t) => {
    const { h, session, hook } = await setup(t);
    const first = await publishEvent(h, session, { type: 'claim.one', data: { n: 1 } });
    await publishEvent(h, session, { type: 'claim.two', data: { n: 2 } });
    const at = new Date();

    const one = await claimAt(h, at, { limit: 1 });
    assert.equal(one.length, 1, 'a claim takes no more than its limit');
    const two = await claimAt(h, at);
    assert.equal(two.length, 1, 'the next claim takes what the first left');
    assert.equal((await claimAt(h, at)).length, 0, 'a delivery held by a live claim is not taken again');

    const claimed = [...one, ...two].find((r) => r.event_id === first.body.id);
    assert.ok(claimed, 'the first event’s delivery was claimed');
    assert.equal(claimed.connection_id, hook.id, 'with its connection');
    assert.equal(claimed.connector_key, 'webhook', 'and what sending needs of the connection');
    assert.equal(claimed.connection_status, 'active', 'as the connection was at the claim');
    assert.ok(claimed.credentials_sealed, 'with the sealed credentials');
    assert.equal(claimed.type, 'claim.one', 'and the event’s type');
    assert.ok(claimed.payload_sealed, 'and its sealed payload');
    assert.equal(claimed.attempt_count, 0, 'no attempt made yet');
    assert.equal(claimed.lost_claim_at, null, 'a due delivery, not a retaken one');

    const stored = await deliveryOf(h, first.body.id);
    assert.equal(stored.status, 'delivering', 'the claim is visible in the table');
    assert.equal(stored.leased_by, WORKER, 'held by the claiming worker');
    assert.equal(new Date(stored.lease_until!).getTime(), at.getTime() + LEASE_MS, 'until its lease ends');

    const later = new Date(at.getTime() + LEASE_MS + 1000);
    const retaken = await claimAt(h, later, { workerId: 'wrk_phaseTest0002' });
    assert.equal(retaken.length, 2, 'expired claims are due again');
    const again = retaken.find((r) => r.event_id === first.body.id);
    assert.equal(new Date(again!.lost_claim_at!).getTime(), at.getTime(), 'the lost claim was made then');
    assert.equal(
      new Date(again!.lost_claim_until!).getTime(),
      at.getTime() + LEASE_MS,
      'and ran out at the end of its lease',
    );
    assert.equal(
      (await deliveryOf(h, first.body.id)).leased_by,
      'wrk_phaseTest0002',
      'now the other worker’s',
    );
  });
});

describe('prepare', () => {
  test('renders the connector’s request from the decrypted payload and signs it, with both secrets during a rotation', async (t) => {
    const { h, receiver, session, hook } = await setup(t);
    const event = await publishEvent(h, session, { type: 'order.created', data: { order: 42 } });
    const [row] = await claimAt(h, new Date());
    assert.ok(row, 'the delivery was claimed');
    const plan = triage(row, await loadConnectorCatalog([]));
    assert.equal(plan.kind, 'send', 'an active, bound webhook is sent to');
    if (plan.kind !== 'send') return;
    const prepared = prepare(row, plan, h.keyring, new Date());
    assert.equal(prepared.request.url, receiver.url(), 'to the connection’s URL');
    assert.deepEqual(
      verify(hook.secret, prepared.request),
      { id: event.body.id, type: 'order.created', timestamp: event.body.createdAt, data: { order: 42 } },
      'the event as published, signed with the connection’s secret',
    );

    const rebound = await h.request<{ credentials: { signingSecret: string } }>(
      'PUT',
      `/api/v1/integrations/connections/${hook.id}/credentials`,
      {
        session,
        body: {},
      },
    );
    assert.equal(rebound.status, 200, rebound.text);
    await publishEvent(h, session, { type: 'order.updated' });
    const [next] = await claimAt(h, new Date());
    assert.ok(next, 'the second event’s delivery was claimed');
    const rotated = triage(next, await loadConnectorCatalog([]));
    if (rotated.kind !== 'send') return assert.fail('the rebound connection is still sent to');
    const signed = prepare(next, rotated, h.keyring, new Date()).request;
    assert.equal(signed.headers['webhook-signature']?.split(' ').length, 2, 'two signatures in the overlap');
    const fresh = rebound.body.credentials.signingSecret;
    assert.equal(verify(fresh, signed).type, 'order.updated', 'the new secret verifies');
    assert.equal(verify(hook.secret, signed).type, 'order.updated', 'the replaced one still does');
  });
});

describe('send', () => {
  test('sends the prepared request to the receiver and reports its answer, touching no database', async (t) => {
    const { h, receiver, session } = await setup(t, (_r, index, res) => {
      if (index === 0) return void res.end('ok');
      res.writeHead(503, { 'retry-after': '7' }).end('busy');
    });
    const deps = attemptDeps(h);
    t.after(() => deps.sender.close());
    const catalog = await loadConnectorCatalog([]);
    const event = await publishEvent(h, session, { type: 'send.me' });
    await publishEvent(h, session, { type: 'send.again' });
    const rows = await claimAt(h, new Date());
    // The first event first: the receiver answers its first request 200, the next 503.
    const ordered = [
      ...rows.filter((r) => r.event_id === event.body.id),
      ...rows.filter((r) => r.event_id !== event.body.id),
    ];
    assert.equal(ordered.length, 2, 'both deliveries were claimed');
    const results = [];
    for (const row of ordered) {
      const plan = triage(row, catalog);
      if (plan.kind !== 'send') return assert.fail('both deliveries are sent');
      const prepared = prepare(row, plan, h.keyring, new Date());
      results.push(await send(deps.sender, prepared, 4096, budgetOf(h.config.delivery.timeoutMs)));
    }
    const [ok, busy] = results;
    assert.equal(ok?.ok, true, 'a 200 answer is a success');
    assert.equal(ok?.status, 200, 'with its status');
    assert.equal(ok?.remoteAddress, '127.0.0.1', 'and the address the request went to');
    assert.equal(receiver.received[0]?.headers['webhook-id'], event.body.id, 'the receiver got the event');
    assert.equal(busy?.ok, false, 'a 503 is a failure');
    assert.equal(busy?.error, 'http_status', 'of the receiver’s making');
    assert.equal(busy?.retryAfterSeconds, 7, 'its Retry-After is read');
    const stored = await deliveryOf(h, event.body.id);
    assert.equal(stored.status, 'delivering', 'sending records nothing: the claim still holds');
    assert.equal((await attemptsOf(h, stored.id)).length, 0, 'and no attempt is written by the send');
  });
});

describe('record', () => {
  test('writes each attempt and the next state while the claim is ours, the attempt alone once it is not', async (t) => {
    const { h, session } = await setup(t);
    const deps = attemptDeps(h);
    const published = await Promise.all(
      ['record.ok', 'record.retry', 'record.lost'].map((type) => publishEvent(h, session, { type })),
    );
    const at = new Date();
    const rows = await claimAt(h, at);
    const byType = (type: string) => rows.find((r) => r.type === type)!;
    assert.equal(rows.length, 3, 'the three deliveries were claimed');
    // The third claim is no longer this worker's: another one took it over (as after an expired lease).
    await h.database.kysely
      .updateTable('deliveries')
      .set({ leased_by: 'wrk_phaseTest0002' })
      .where('id', '=', byType('record.lost').id)
      .execute();

    const answer = { remoteAddress: '127.0.0.1', errorDetail: null, retryAfterSeconds: null, durationMs: 12 };
    const success = { ...answer, ok: true, status: 200, error: null };
    const failure = {
      ...answer,
      ok: false,
      status: 500,
      error: 'http_status' as const,
      errorDetail: 'HTTP 500',
    };
    recordAttempt(deps, byType('record.ok'), at, success);
    recordAttempt(deps, byType('record.retry'), at, failure);
    recordAttempt(deps, byType('record.lost'), at, success);
    await deps.recorder.settled();

    const [delivered, retrying, lost] = await Promise.all(published.map((p) => deliveryOf(h, p.body.id)));
    assert.equal(delivered!.status, 'delivered', 'a success is delivered');
    assert.equal(delivered!.attempt_count, 1, 'after one attempt');
    assert.ok(delivered!.delivered_at, 'with the moment it was');
    assert.equal(delivered!.leased_by, null, 'and the claim ends');
    assert.equal(retrying!.status, 'retrying', 'a failure with the schedule left is retried');
    const wait = new Date(retrying!.next_attempt_at!).getTime() - at.getTime();
    assert.ok(wait >= 24_000 && wait <= 37_000, `after 30 s ± 20 % (waits ${wait} ms)`);
    assert.equal(lost!.status, 'delivering', 'another worker’s claim is left alone');
    assert.equal(lost!.leased_by, 'wrk_phaseTest0002', 'still held by the other worker');

    const attempts = await attemptsOf(h, retrying!.id);
    assert.deepEqual(
      attempts.map((a) => [a.number, a.response_status, a.error, a.error_detail]),
      [[1, 500, 'http_status', 'HTTP 500']],
      'the failed attempt is in the log',
    );
    assert.equal((await attemptsOf(h, lost!.id)).length, 1, 'an attempt that happened is recorded anyway');
    const outcomes = (await deps.ctx.metrics.deliveries.get()).values.map((v) => [v.labels.outcome, v.value]);
    assert.deepEqual(
      outcomes.sort(),
      [
        ['delivered', 2],
        ['retrying', 1],
      ],
      'every attempt is counted',
    );
    assert.equal(deps.logs(), '', 'nothing went wrong worth a log line');
  });
});

describe('the phases together', () => {
  test('an attempt sends, then records; a retaken claim records its lost attempt and sends nothing', async (t) => {
    const { h, receiver, session } = await setup(t);
    const deps: AttemptDeps & ReturnType<typeof attemptDeps> = {
      ...attemptDeps(h),
      catalog: await loadConnectorCatalog([]),
    };
    t.after(() => deps.sender.close());
    const sent = await publishEvent(h, session, { type: 'whole.sent' });
    const lost = await publishEvent(h, session, { type: 'whole.lost' });
    const at = new Date();
    const rows = await claimAt(h, at);
    const lostRow = rows.find((r) => r.event_id === lost.body.id)!;
    // The lost one: retaken from a claim that ran out (as claim() reports it) by this worker.
    const retaken: ClaimedRow = {
      ...lostRow,
      lost_claim_at: new Date(at.getTime() - LEASE_MS),
      lost_claim_until: at,
    };
    await attemptDelivery(
      deps,
      rows.find((r) => r.event_id === sent.body.id)!,
    );
    await attemptDelivery(deps, retaken);
    await deps.recorder.settled();

    assert.equal(receiver.received.length, 1, 'only the due delivery was sent');
    assert.equal(receiver.received[0]?.headers['webhook-id'], sent.body.id, 'the event sent is the due one');
    assert.equal((await deliveryOf(h, sent.body.id)).status, 'delivered', 'and it is delivered');
    const interrupted = await deliveryOf(h, lost.body.id);
    assert.equal(interrupted.status, 'retrying', 'the lost attempt counts as a failure, retried later');
    const [attempt] = await attemptsOf(h, interrupted.id);
    assert.equal(attempt?.error, 'interrupted', 'the lost attempt is logged as interrupted');
    assert.equal(attempt?.duration_ms, LEASE_MS, 'as long as the lost claim lasted');
  });
});

describe('the worker loop', () => {
  test('claims what is due within its concurrency, sends it all, and stops cleanly', async (t) => {
    let open = 0;
    let most = 0;
    const { h, receiver, session } = await setup(t, (_r, _i, res) => {
      open++;
      most = Math.max(most, open);
      setTimeout(() => {
        open--;
        res.end('ok');
      }, 100);
    });
    const published = await Promise.all(
      Array.from({ length: 10 }, (_, i) => publishEvent(h, session, { type: 'loop.event', data: { i } })),
    );
    const ctx = {
      config: h.config,
      db: h.database.kysely,
      keyring: h.keyring,
      log: createLogger('info', new Writable({ write: (_c, _e, done) => done() })),
      metrics: createMetrics(),
      now: () => new Date(),
      usage: { count: () => {}, flush: () => Promise.resolve() },
    };
    const worker = createDeliveryWorker({ ctx, catalog: await loadConnectorCatalog([]) }, createWakeup(), {
      concurrency: 4,
      pollMs: 50,
    });
    assert.equal(worker.dispatch.reserve(2).slots, 0, 'a worker not started takes no publish');
    worker.start();
    let stopped = false;
    t.after(() => (stopped ? undefined : worker.stop()));
    await receiver.waitFor(10);
    const ids = published.map((p) => p.body.id as string);
    await waitUntil(
      async () => {
        const rows = await Promise.all(ids.map((id) => deliveryOf(h, id)));
        return rows.every((r) => r.status === 'delivered');
      },
      { message: 'every delivery recorded as delivered' },
    );
    assert.ok(most <= 4, `never more than 4 requests in flight (saw ${most})`);
    await worker.stop();
    stopped = true;
    assert.equal(worker.dispatch.reserve(2).slots, 0, 'a stopped worker takes no publish');
  });
});
