import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryDelaySeconds } from '../../src/delivery/retry.js';

const SCHEDULE = [5, 300, 1800];
const near = (actual: number | null, expected: number) =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-9, `${actual} ≠ ${expected}`);

test('the scheduled delay with ±20 % jitter, then none when the schedule is spent', () => {
  near(
    retryDelaySeconds(1, SCHEDULE, null, () => 0),
    4,
  );
  near(
    retryDelaySeconds(1, SCHEDULE, null, () => 1),
    6,
  );
  near(
    retryDelaySeconds(2, SCHEDULE, null, () => 0.5),
    300,
  );
  near(
    retryDelaySeconds(3, SCHEDULE, null, () => 0.5),
    1800,
  );
  assert.equal(
    retryDelaySeconds(4, SCHEDULE, null, () => 0.5),
    null,
    'a delivery is retried after the schedule is spent',
  );
});

test('Retry-After lengthens the delay, up to twice the scheduled one, and never shortens it', () => {
  assert.equal(
    retryDelaySeconds(2, SCHEDULE, 450, () => 0.5),
    450,
    'a Retry-After of 450 s within twice the scheduled delay is not honoured',
  );
  assert.equal(
    retryDelaySeconds(2, SCHEDULE, 5_000, () => 0.5),
    600,
    'a Retry-After beyond twice the scheduled delay is not capped at twice',
  );
  assert.equal(
    retryDelaySeconds(2, SCHEDULE, 10, () => 0.5),
    300,
    'a short Retry-After shortens the scheduled delay',
  );
  assert.equal(
    retryDelaySeconds(4, SCHEDULE, 10, () => 0.5),
    null,
    'a Retry-After revives a spent schedule',
  );
});
