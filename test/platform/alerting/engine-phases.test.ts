import '../../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NoticeAlert } from '../../../src/db/schema.js';
import type { Condition } from '../../../src/platform/alerting/conditions.js';
import {
  concernedFingerprints,
  decideAlerts,
  outageAlert,
  outageChannelsDue,
  planNotices,
  type RecordedFiring,
} from '../../../src/platform/alerting/evaluation.js';
import { fingerprintOf } from '../../../src/platform/alerting/fingerprint.js';
import type { ChannelState } from '../../../src/platform/alerting/notice-plans.js';
import { attemptOutcome, withResolvedFrom } from '../../../src/platform/alerting/outbox.js';
import type { RoutingDocument } from '../../../src/platform/alerting/rules.js';

// The alert engine's decisions, without a database: what fires, what resolved, who is told.
const T0 = new Date('2025-01-02T03:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

const failed = (connectionId: string, summary = 'it failed'): Condition => ({
  labels: { alertname: 'DeliveryFailed', tenantId: 'ten_1', connectionId },
  annotations: { summary },
});
const recorded = (condition: Condition, startsAt: Date): RecordedFiring => ({
  fingerprint: fingerprintOf(condition.labels),
  labels: condition.labels,
  annotations: condition.annotations,
  starts_at: startsAt.toISOString(),
});
const doc = (channelIds: string[], repeatIntervalSeconds = 3600): RoutingDocument => ({
  revision: 1,
  defaults: { channelIds, repeatIntervalSeconds },
  rules: [],
});
const told = (entries: Array<[string, string, ChannelState]>) => {
  const states = new Map<string, Map<string, ChannelState>>();
  for (const [fingerprint, channelId, state] of entries) {
    const byChannel = states.get(fingerprint) ?? new Map<string, ChannelState>();
    byChannel.set(channelId, state);
    states.set(fingerprint, byChannel);
  }
  return states;
};

test('a new condition starts firing now; one already firing keeps its start and is not written again', () => {
  const old = failed('con_old');
  const evaluation = decideAlerts([old, failed('con_new')], [recorded(old, T0)], later(60_000));
  const [kept, started] = evaluation.firing;
  assert.equal(kept?.record, null, 'an unchanged firing alert would be written at every evaluation');
  assert.deepEqual(kept?.alert.startsAt, T0, 'a firing alert would seem to start again at every evaluation');
  assert.equal(started?.record, 'start', 'a new alert would not be recorded');
  assert.deepEqual(started?.alert.startsAt, later(60_000), 'a new alert would not start at this evaluation');
  assert.deepEqual(evaluation.resolved, [], 'an alert still holding would be reported resolved');
});

test('a firing alert whose description changed is described again, not restarted', () => {
  const before = failed('con_1', '3 deliveries failed');
  const evaluation = decideAlerts(
    [failed('con_1', '4 deliveries failed')],
    [recorded(before, T0)],
    later(1000),
  );
  assert.equal(
    evaluation.firing[0]?.record,
    'describe',
    'the new description would never reach the alert row',
  );
  assert.deepEqual(evaluation.firing[0]?.alert.startsAt, T0, 'a new description would restart the alert');
});

test('a recorded alert whose condition no longer holds resolves now, keeping when it started', () => {
  const gone = failed('con_1');
  const evaluation = decideAlerts([], [recorded(gone, T0)], later(5000));
  assert.deepEqual(evaluation.firing, [], 'nothing holds, yet something would fire');
  assert.deepEqual(
    evaluation.resolved,
    [
      {
        fingerprint: fingerprintOf(gone.labels),
        labels: gone.labels,
        annotations: gone.annotations,
        status: 'resolved',
        startsAt: T0,
        endsAt: later(5000),
      },
    ],
    'the resolved alert would tell channels the wrong start or end',
  );
});

test('conditions with the same labels are one alert, and concern each fingerprint once', () => {
  const evaluation = decideAlerts([failed('con_1', 'first'), failed('con_1', 'second')], [], T0);
  assert.equal(evaluation.firing.length, 1, 'one alert would be raised twice');
  assert.equal(evaluation.firing[0]?.alert.annotations.summary, 'second', 'the last condition would not win');
  const both = decideAlerts([failed('con_2')], [recorded(failed('con_1'), T0)], T0);
  assert.deepEqual(
    concernedFingerprints(both).sort(),
    [fingerprintOf(failed('con_1').labels), fingerprintOf(failed('con_2').labels)].sort(),
    'the told states of a firing or resolved alert would not be read',
  );
});

test('firing alerts go to the enabled channels their routes name, once the burst is over', () => {
  const evaluation = decideAlerts([failed('con_1')], [], T0);
  const channels = [
    { id: 'chn_on', enabled: true },
    { id: 'chn_off', enabled: false },
  ];
  const input = { doc: doc(['chn_on', 'chn_off']), channels, told: new Map(), now: T0 };
  const first = planNotices(evaluation, { ...input, waiting: new Map() });
  assert.deepEqual(first.notices, [], 'a new alert would be told before its group could grow');
  const second = planNotices(evaluation, { ...input, waiting: first.waiting, now: later(100) });
  assert.deepEqual(
    second.notices.map((n) => n.channelId),
    ['chn_on'],
    'the notice would skip the enabled channel or reach the disabled one',
  );
  assert.equal(second.waiting.size, 0, 'a group told would still be waiting');
});

test('a resolved alert is told to the enabled channels that heard it fire; a disabled one forgets', () => {
  const gone = failed('con_1');
  const fingerprint = fingerprintOf(gone.labels);
  const evaluation = decideAlerts([], [recorded(gone, T0)], later(1000));
  const planned = planNotices(evaluation, {
    doc: doc([]),
    channels: [
      { id: 'chn_on', enabled: true },
      { id: 'chn_off', enabled: false },
      { id: 'chn_resolved', enabled: true },
    ],
    told: told([
      [fingerprint, 'chn_on', { status: 'firing', at: T0 }],
      [fingerprint, 'chn_off', { status: 'firing', at: T0 }],
      [fingerprint, 'chn_resolved', { status: 'resolved', at: T0 }],
    ]),
    waiting: new Map(),
    now: later(1000),
  });
  assert.deepEqual(
    planned.notices.map((n) => [n.channelId, n.alerts.map((a) => a.status)]),
    [['chn_on', ['resolved']]],
    'only the enabled channel told it fired should hear it resolved, at once',
  );
  assert.deepEqual(
    planned.forget,
    [{ fingerprint, channelId: 'chn_off' }],
    'the disabled channel would still count as told, and never hear the alert fire once enabled',
  );
});

test('DatabaseUnavailable goes to enabled channels not told within their repeat interval', () => {
  const lastRead = {
    doc: doc(['chn_a', 'chn_b', 'chn_off'], 60),
    channels: [
      { id: 'chn_a', enabled: true },
      { id: 'chn_b', enabled: true },
      { id: 'chn_off', enabled: false },
    ],
  };
  const due = outageChannelsDue(lastRead, new Map([['chn_a', later(0)]]), later(30_000));
  assert.deepEqual(
    due.map((c) => c.id),
    ['chn_b'],
    'a channel told 30 s ago (60 s interval) or a disabled one would be told again',
  );
  const again = outageChannelsDue(lastRead, new Map([['chn_a', later(0)]]), later(60_000));
  assert.deepEqual(
    again.map((c) => c.id),
    ['chn_a', 'chn_b'],
    'a channel would not be reminded once its repeat interval passed',
  );
  const firing = outageAlert(T0);
  const resolved = outageAlert(T0, later(1000));
  assert.equal(firing.status, 'firing', 'the outage alert would not fire while the database is down');
  assert.equal(resolved.status, 'resolved', 'the outage alert would not resolve once the database is back');
  assert.deepEqual(resolved.endsAt, later(1000), 'the outage alert would not say when it ended');
  assert.equal(firing.fingerprint, resolved.fingerprint, 'the resolved outage would not be the same alert');
});

test('a notice attempt is sent, retried on the schedule, or failed once the schedule is spent', () => {
  const notTaken = { ok: false, responseStatus: 500, error: 'HTTP 500' };
  const now = later(0);
  assert.deepEqual(
    attemptOutcome({ ok: true, responseStatus: 200, error: null }, 1, [10], now),
    { state: 'sent', attempts: 1, nextAttemptAt: null, lastError: null, sentAt: now },
    'a notice the channel took would not be marked sent',
  );
  assert.deepEqual(
    attemptOutcome(notTaken, 1, [10, 60], now),
    { state: 'pending', attempts: 1, nextAttemptAt: later(10_000), lastError: 'HTTP 500', sentAt: null },
    'a notice not taken would not be tried again after the first delay',
  );
  assert.deepEqual(
    attemptOutcome(notTaken, 3, [10, 60], now),
    { state: 'failed', attempts: 3, nextAttemptAt: null, lastError: 'HTTP 500', sentAt: null },
    'a notice would be retried beyond its schedule',
  );
});

test('a superseded notice hands on the resolved alerts the new one does not list', () => {
  const alert = (fingerprint: string, status: NoticeAlert['status']): NoticeAlert => ({
    fingerprint,
    status,
    labels: {},
    annotations: {},
    startsAt: T0.toISOString(),
    endsAt: status === 'resolved' ? T0.toISOString() : null,
  });
  const merged = withResolvedFrom(
    [alert('a', 'firing')],
    [alert('a', 'resolved'), alert('b', 'resolved'), alert('c', 'firing'), alert('b', 'resolved')],
  );
  assert.deepEqual(
    merged.map((a) => `${a.fingerprint}:${a.status}`),
    ['a:firing', 'b:resolved'],
    'a resolved alert would be lost or listed twice, or a stale firing one carried over',
  );
});
