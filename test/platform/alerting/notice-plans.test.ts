import '../../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NoticePlans, type ChannelState, type Waiting } from '../../../src/platform/alerting/notice-plans.js';
import type { AlertInstance } from '../../../src/platform/alerting/notification.js';

// The notice rules, alone: which (group, channel) is told what at an evaluation.
const T0 = new Date('2025-01-02T03:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

const alert = (tenantId: string, n: number, status: AlertInstance['status'] = 'firing'): AlertInstance => ({
  fingerprint: `${tenantId}-${n}`,
  labels: { alertname: 'DeliveryFailed', tenantId, connectionId: `con_${n}` },
  annotations: {},
  status,
  startsAt: T0,
  endsAt: status === 'resolved' ? T0 : null,
});
const route = (channelId: string, repeatIntervalSeconds = 3600) => ({ channelId, repeatIntervalSeconds });
const told = (status: ChannelState['status'], at: Date) => new Map([['chn_a', { status, at }]]);

/** One evaluation: these alerts fire (with what chn_a was told of each), those resolved. */
function evaluate(
  now: Date,
  waiting: Waiting,
  firing: Array<[AlertInstance, Map<string, ChannelState> | undefined]>,
  resolved: AlertInstance[] = [],
  repeatIntervalSeconds = 3600,
) {
  const plans = new NoticePlans();
  for (const [a, state] of firing) plans.firing(a, route('chn_a', repeatIntervalSeconds), state);
  for (const a of resolved) plans.resolved(a, 'chn_a');
  return plans.due(now, waiting);
}

test('new alerts wait one evaluation, and go together once an evaluation finds no more', () => {
  const first = evaluate(T0, new Map(), [[alert('ten_1', 1), undefined]]);
  assert.deepEqual(
    first.notices,
    [],
    'a new alert is told at its first evaluation, before the group could grow',
  );
  const second = evaluate(later(100), first.waiting, [
    [alert('ten_1', 1), undefined],
    [alert('ten_1', 2), undefined],
  ]);
  assert.deepEqual(second.notices, [], 'still growing');
  const third = evaluate(later(200), second.waiting, [
    [alert('ten_1', 1), undefined],
    [alert('ten_1', 2), undefined],
  ]);
  assert.equal(third.notices.length, 1, 'the group is not told once an evaluation finds no more alerts');
  assert.deepEqual(
    third.notices[0]?.alerts.map((a) => a.fingerprint),
    ['ten_1-1', 'ten_1-2'],
    'the notice does not hold both alerts of the group',
  );
  assert.equal(third.waiting.size, 0, 'a group already told still waits');
});

test('a burst that never stops is told 30 s after it began', () => {
  let waiting: Waiting = new Map();
  const alerts: Array<[AlertInstance, undefined]> = [];
  for (let i = 0; i <= 30; i++) {
    alerts.push([alert('ten_1', i), undefined]);
    const result = evaluate(later(i * 1000), waiting, alerts);
    if (i < 30) assert.deepEqual(result.notices, [], `second ${i}`);
    else
      assert.equal(
        result.notices[0]?.alerts.length,
        31,
        'a burst that never stops is not told at 30 s, with all its alerts',
      );
    waiting = result.waiting;
  }
});

test('a resolution is told at once, with the alerts still firing; tenants are groups of their own', () => {
  const result = evaluate(
    T0,
    new Map(),
    [
      [alert('ten_1', 1), told('firing', T0)],
      [alert('ten_2', 1), undefined],
    ],
    [alert('ten_1', 2, 'resolved')],
  );
  assert.equal(result.notices.length, 1, 'ten_2 waits; ten_1 resolves at once');
  assert.equal(
    result.notices[0]?.groupKey,
    'DeliveryFailed/ten_1',
    'the resolution is told for another group',
  );
  assert.deepEqual(
    result.notices[0]?.alerts.map((a) => [a.fingerprint, a.status]),
    [
      ['ten_1-1', 'firing'],
      ['ten_1-2', 'resolved'],
    ],
    'the resolution is not told with the alert still firing',
  );
});

test('a group told before is told again only after its repeat interval', () => {
  const firing: Array<[AlertInstance, Map<string, ChannelState>]> = [[alert('ten_1', 1), told('firing', T0)]];
  assert.deepEqual(
    evaluate(later(59_999), new Map(), firing, [], 60).notices,
    [],
    'a group is told again before its repeat interval',
  );
  assert.equal(
    evaluate(later(60_000), new Map(), firing, [], 60).notices.length,
    1,
    'a group is not told again once its repeat interval has passed',
  );
});
