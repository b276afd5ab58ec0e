import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ConnectorDefinition } from '../../src/connections/connector.js';
import { leaseDuration, leaseEnd, lostClaim, type ClaimedRow } from '../../src/delivery/claim.js';
import { interruptedResult, type AttemptResult } from '../../src/delivery/destination.js';
import { createDispatch } from '../../src/delivery/dispatch.js';
import { previousSecretValid, triage } from '../../src/delivery/prepare.js';
import { attemptRow, countAttempt, decideOutcome, outcomeOf } from '../../src/delivery/record.js';
import {
  claimFloor,
  claimLimit,
  createSlots,
  freeSlots,
  reservable,
  waitsAfterClaim,
} from '../../src/delivery/worker-loop.js';
import { createMetrics } from '../../src/http/metrics.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const SCHEDULE = [10, 60, 300];

function row(overrides: Partial<ClaimedRow> = {}): ClaimedRow {
  return {
    id: 'dlv_test',
    event_id: 'evt_test',
    connection_id: 'con_test',
    attempt_count: 0,
    created_at: new Date('2026-03-01T11:59:00.000Z'),
    connection_status: 'active',
    connector_key: 'webhook',
    config: { url: 'https://example.test/hook' },
    credentials_sealed: 'sealed',
    previous_credentials_sealed: null,
    previous_valid_until: null,
    type: 'order.created',
    payload_sealed: 'payload',
    event_created_at: new Date('2026-03-01T11:59:00.000Z'),
    lost_claim_at: null,
    lost_claim_until: null,
    ...overrides,
  };
}

function result(overrides: Partial<AttemptResult> = {}): AttemptResult {
  return {
    ok: false,
    status: 500,
    remoteAddress: '192.0.2.1',
    error: 'http_status',
    errorDetail: 'HTTP 500',
    retryAfterSeconds: null,
    durationMs: 120,
    ...overrides,
  };
}

const catalog = (known: boolean) => ({
  get: (key: string) => (known ? ({ key } as unknown as ConnectorDefinition) : undefined),
});

describe('decideOutcome: the next state after an attempt', () => {
  test('a success is delivered now, with the attempt counted', () => {
    const decision = decideOutcome(2, result({ ok: true, status: 200, error: null }), SCHEDULE, NOW);
    assert.deepEqual(
      decision,
      { status: 'delivered', attemptCount: 3, nextAttemptAt: null, deliveredAt: NOW },
      'a delivered attempt sets delivered_at and counts the attempt',
    );
  });

  test('a failure with the schedule left is retried after the jittered delay', () => {
    const decision = decideOutcome(1, result(), SCHEDULE, NOW, () => 0.5);
    assert.equal(decision.status, 'retrying', 'attempt 2 of 4 failing is retried');
    assert.equal(decision.attemptCount, 2, 'the failed attempt is counted');
    assert.equal(
      decision.nextAttemptAt?.getTime(),
      NOW.getTime() + 60_000,
      'the second delay of the schedule, jitter at its middle, from now',
    );
    assert.equal(decision.deliveredAt, null, 'nothing was delivered');
  });

  test('a Retry-After longer than the delay is honoured, up to twice the delay', () => {
    const honoured = decideOutcome(0, result({ retryAfterSeconds: 15 }), SCHEDULE, NOW, () => 0.5);
    assert.equal(honoured.nextAttemptAt?.getTime(), NOW.getTime() + 15_000, 'Retry-After: 15 waits 15 s');
    const capped = decideOutcome(0, result({ retryAfterSeconds: 3600 }), SCHEDULE, NOW, () => 0.5);
    assert.equal(
      capped.nextAttemptAt?.getTime(),
      NOW.getTime() + 20_000,
      'a huge Retry-After waits 2 × 10 s',
    );
  });

  test('the schedule spent: failed', () => {
    const decision = decideOutcome(SCHEDULE.length, result(), SCHEDULE, NOW);
    assert.deepEqual(
      decision,
      { status: 'failed', attemptCount: SCHEDULE.length + 1, nextAttemptAt: null, deliveredAt: null },
      'the last attempt of the schedule failing fails the delivery',
    );
  });

  test('410 Gone fails at once, whatever the schedule has left', () => {
    const decision = decideOutcome(0, result({ status: 410, errorDetail: 'HTTP 410' }), SCHEDULE, NOW);
    assert.equal(decision.status, 'failed', 'a receiver that says Gone is not asked again');
    assert.equal(decision.attemptCount, 1, 'the attempt is counted');
  });

  test('an interrupted attempt counts like any failure', () => {
    const decision = decideOutcome(0, interruptedResult(NOW, NOW), SCHEDULE, NOW, () => 0);
    assert.equal(decision.status, 'retrying', 'a lost first attempt is retried');
    assert.equal(decision.nextAttemptAt?.getTime(), NOW.getTime() + 8_000, 'after the first delay, −20 %');
  });
});

describe('the attempt and the outcome as written', () => {
  test('the attempt row is numbered after the attempts already made', () => {
    const startedAt = new Date(NOW.getTime() - 500);
    const attempt = attemptRow(row({ attempt_count: 2 }), startedAt, result({ status: 503 }));
    assert.deepEqual(
      attempt,
      {
        delivery_id: 'dlv_test',
        delivery_created_at: row().created_at,
        number: 3,
        started_at: startedAt,
        duration_ms: 120,
        remote_address: '192.0.2.1',
        response_status: 503,
        error: 'http_status',
        error_detail: 'HTTP 500',
        // Neither the request (not given here) nor an answer's headers and body (the result has none).
        request: null,
        response: null,
      },
      'the log shows attempt 3 with what the sender saw',
    );
  });

  test('a cancellation keeps the attempt count and records no attempt', () => {
    const outcome = outcomeOf(row({ attempt_count: 2 }), { status: 'cancelled' });
    assert.deepEqual(
      outcome,
      {
        deliveryId: 'dlv_test',
        connectionId: row().connection_id,
        createdAt: row().created_at,
        status: 'cancelled',
        attemptCount: 2,
        nextAttemptAt: null,
        deliveredAt: null,
        attempt: undefined,
      },
      'a cancelled delivery shows the attempts it had, and no new one',
    );
  });

  test('an interrupted attempt lasted as long as the lost claim, and says so', () => {
    const interrupted = interruptedResult(new Date(NOW.getTime() - 25_400), NOW);
    assert.equal(interrupted.error, 'interrupted', 'the log says the attempt was interrupted');
    assert.equal(interrupted.durationMs, 25_400, 'as long as the claim lasted');
    assert.equal(interrupted.status, null, 'no answer is known');
    assert.equal(interrupted.remoteAddress, null, 'no address is known');
    assert.equal(
      interrupted.errorDetail,
      'the worker stopped before recording an outcome; its claim expired after 25 s',
      'the detail says what happened, in whole seconds',
    );
    assert.equal(interruptedResult(NOW, new Date(NOW.getTime() - 1)).durationMs, 0, 'never negative');
  });

  test('metrics: an interrupted attempt is counted without a duration; a delivery adds its latency', async () => {
    const metrics = createMetrics();
    countAttempt(metrics, row(), interruptedResult(NOW, NOW), 'retrying', NOW);
    countAttempt(metrics, row(), result({ ok: true, status: 200, error: null }), 'delivered', NOW);
    const outcomes = (await metrics.deliveries.get()).values.map((v) => [v.labels.outcome, v.value]);
    assert.deepEqual(
      outcomes.sort(),
      [
        ['delivered', 1],
        ['retrying', 1],
      ],
      'each attempt is counted under its outcome',
    );
    const durations = (await metrics.deliveryAttemptDuration.get()).values.filter(
      (v) => v.metricName === 'hubgate_delivery_attempt_duration_seconds_count',
    );
    assert.deepEqual(
      durations.map((v) => [v.labels.outcome, v.value]),
      [['delivered', 1]],
      'the interrupted attempt’s claim length does not skew the duration histogram',
    );
    const latency = (await metrics.deliveryLatency.get()).values.find((v) => v.metricName?.endsWith('_sum'));
    assert.equal(latency?.value, 60, 'published a minute before it was delivered');
  });
});

describe('triage and signing: what a claimed row asks for', () => {
  test('a row retaken from an expired claim is interrupted, before anything else is looked at', () => {
    const claimedAt = new Date(NOW.getTime() - 30_000);
    const lost = row({ lost_claim_at: claimedAt, lost_claim_until: NOW, connection_status: 'disabled' });
    assert.deepEqual(lostClaim(lost), { claimedAt, claimEnded: NOW }, 'the lost claim’s bounds');
    assert.deepEqual(
      triage(lost, catalog(true)),
      { kind: 'interrupted', claimedAt, claimEnded: NOW },
      'the lost attempt is recorded even if the connection was disabled since',
    );
    assert.equal(lostClaim(row({ lost_claim_at: claimedAt })), null, 'both bounds are needed');
  });

  test('a disabled connection, or a connector switched off, cancels the delivery', () => {
    const cases: Array<[string, ClaimedRow, boolean]> = [
      ['disabled', row({ connection_status: 'disabled' }), true],
      ['disabled and unbound', row({ connection_status: 'disabled', credentials_sealed: null }), true],
      ['connector off', row(), false],
    ];
    for (const [what, claimed, known] of cases) {
      assert.deepEqual(triage(claimed, catalog(known)), { kind: 'cancelled' }, `${what}: cancelled`);
    }
    const send = triage(row(), catalog(true));
    assert.equal(send.kind, 'send', 'an active, bound connection of a known connector is sent to');
  });

  test('a paused connection, or an active one whose credentials were unbound, keeps the delivery skipped', () => {
    // docs/api/connections.md: a new host unbinds the credentials; what was queued stays replayable.
    const cases: Array<[string, ClaimedRow]> = [
      ['paused', row({ connection_status: 'paused' })],
      ['unbound', row({ credentials_sealed: null })],
    ];
    for (const [what, claimed] of cases) {
      assert.deepEqual(triage(claimed, catalog(true)), { kind: 'skipped' }, `${what}: skipped`);
    }
  });

  test('the previous secret signs only until its overlap ends', () => {
    const later = new Date(NOW.getTime() + 1000);
    const rotated = { previous_credentials_sealed: 'old', previous_valid_until: later };
    assert.equal(previousSecretValid(row(rotated), NOW), true, 'inside the overlap: both sign');
    assert.equal(previousSecretValid(row(rotated), later), false, 'at its end: the new one alone');
    assert.equal(
      previousSecretValid(row({ previous_valid_until: later }), NOW),
      false,
      'no previous credentials, no second signature',
    );
  });
});

describe('slots, claims and leases', () => {
  test('claims wait for a quarter of the slots, at least one', () => {
    assert.equal(claimFloor(64), 16, 'a quarter of 64');
    assert.equal(claimFloor(3), 1, 'never zero: an idle small worker still claims');
    assert.equal(freeSlots(64, 40, 8), 16, 'slots neither sending nor promised');
    assert.equal(claimLimit(16, 16), 16, 'enough free slots: claim them all');
    assert.equal(claimLimit(15, 16), 0, 'too few free slots: claim nothing yet');
  });

  test('the loop sleeps unless a claim filled every slot it asked for', () => {
    assert.equal(waitsAfterClaim(0, 0), true, 'nothing claimed (or nothing asked): sleep');
    assert.equal(waitsAfterClaim(3, 16), true, 'the backlog ran out: sleep');
    assert.equal(waitsAfterClaim(16, 16), false, 'a full claim: more may be due, claim again');
  });

  test('a publish gets the free slots it wants, none once the worker stops', () => {
    assert.equal(reservable(true, 10, 4), 4, 'no more than are free');
    assert.equal(reservable(true, 2, 4), 2, 'no more than wanted');
    assert.equal(reservable(true, 2, -1), 0, 'never negative');
    assert.equal(reservable(false, 10, 64), 0, 'a stopping worker takes nothing');
  });

  test('a lease outlasts two timeouts', () => {
    assert.equal(leaseDuration(10_000), 25_000, 'twice the timeout, plus 5 s to record the outcome');
    assert.equal(leaseEnd(NOW, 25_000).getTime(), NOW.getTime() + 25_000, 'from the claim');
  });

  test('a slot is held while its attempt runs, and promised slots count as taken', async () => {
    const slots = createSlots(4);
    let finish!: () => void;
    const released: string[] = [];
    slots.hold(new Promise<void>((resolve) => (finish = resolve)), () => released.push('one'));
    slots.reserve(2);
    assert.equal(slots.free(), 1, 'one sending, two promised');
    assert.equal(slots.limit(), 1, 'one free slot meets the floor of one');
    finish();
    await slots.drained();
    assert.deepEqual(released, ['one'], 'the slot was released once');
    slots.unreserve(2);
    assert.equal(slots.free(), 4, 'every slot free again');
  });

  test('direct dispatch reserves slots, then tracks the rows it is handed', () => {
    const slots = createSlots(4);
    const tracked: string[] = [];
    let wakes = 0;
    let running = true;
    const dispatch = createDispatch({
      workerId: 'wrk_test',
      isRunning: () => running,
      slots,
      leaseUntil: () => leaseEnd(NOW, 1000),
      track: (r) => tracked.push(r.id),
      wakeIfFree: () => wakes++,
    });
    const reservation = dispatch.reserve(6);
    assert.deepEqual(
      reservation,
      { slots: 4, workerId: 'wrk_test', leaseUntil: leaseEnd(NOW, 1000) },
      'every free slot, claimed by this worker until the lease ends',
    );
    assert.equal(slots.free(), 0, 'the promised slots are taken');
    dispatch.hand([row({ id: 'dlv_a' })], reservation.slots);
    assert.deepEqual(tracked, ['dlv_a'], 'the committed row is sent');
    assert.equal(slots.free(), 4, 'the reservation is returned (the tracker here holds no slot)');
    assert.equal(wakes, 1, 'the loop is told slots may be free');
    running = false;
    assert.equal(dispatch.reserve(3).slots, 0, 'a stopped worker takes no publish');
  });
});
