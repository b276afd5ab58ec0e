import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRfc3339, RFC3339_PATTERN } from '../../src/http/time.js';
import '../helpers/unit.js';

// src/http/time.ts: the one reader of the RFC 3339 times clients send, and the pattern the OpenAPI
// document shows beside `format: date-time`. Both must refuse the same texts (but a day its month
// lacks, which a pattern cannot know), and the parser must name the instant the text names.

const pattern = new RegExp(RFC3339_PATTERN);

test('times it reads, with the instant each names', () => {
  for (const [text, iso] of [
    ['2026-12-07T10:00:00Z', '2026-12-07T10:00:00.000Z'],
    ['2026-12-07t10:00:00z', '2026-12-07T10:00:00.000Z'],
    ['2026-12-07T11:00:00.5+01:00', '2026-12-07T10:00:00.500Z'],
    ['2026-12-07T05:30:00-04:30', '2026-12-07T10:00:00.000Z'],
    ['2024-02-29T23:59:59.999999999Z', '2024-02-29T23:59:59.999Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['0050-03-01T00:00:00Z', '0050-03-01T00:00:00.000Z'],
    // An offset past the four-digit years reads as the nearest end: a bound that means "all".
    ['9999-12-31T23:59:59-23:59', '9999-12-31T23:59:59.999Z'],
    ['0000-01-01T00:00:00+01:00', '0000-01-01T00:00:00.000Z'],
  ]) {
    assert.equal(parseRfc3339(text!)?.toISOString(), iso, `${text} names another instant`);
    assert.ok(pattern.test(text!), `the document's pattern refuses ${text}, which the service takes`);
  }
  assert.equal(
    parseRfc3339('2026-12-07T10:00:00.0001Z', 'up')?.toISOString(),
    '2026-12-07T10:00:00.001Z',
    'a fraction finer than a millisecond is not rounded up when asked',
  );
});

test('times it refuses: a leap second, a space, hour 24, a day its month lacks, no offset …', () => {
  for (const text of [
    '2016-12-31T23:59:60Z',
    '2016-12-31T23:59:60.5+00:00',
    '2026-12-07 10:00:00Z',
    '2026-12-07T24:00:00Z',
    '2026-12-07T10:60:00Z',
    '2026-13-01T10:00:00Z',
    '2026-00-01T10:00:00Z',
    '2026-12-00T10:00:00Z',
    '2026-12-32T10:00:00Z',
    '2026-12-07T10:00:00',
    '2026-12-07T10:00Z',
    '2026-12-07',
    '2026-12-07T10:00:00+24:00',
    '2026-12-07T10:00:00+01:60',
    '2026-12-07T10:00:00+0100',
    '+02026-12-07T10:00:00Z',
    '2026-12-07T10:00:00.Z',
    '2026-12-07T10:00:00.0000000001Z',
    '2026-12-07T10:00:00Z ',
    '２０２６-12-07T10:00:00Z',
    '',
  ]) {
    assert.equal(parseRfc3339(text), undefined, `${JSON.stringify(text)} is read as a time`);
    assert.ok(!pattern.test(text), `the document's pattern takes ${JSON.stringify(text)}`);
  }
  // A day its month lacks: the pattern cannot know it, the parser refuses it.
  for (const text of ['2023-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '2026-04-31T00:00:00Z']) {
    assert.equal(parseRfc3339(text), undefined, `${text} is read as a time`);
  }
  assert.equal(parseRfc3339(`2026-12-07T10:00:00.${'1'.repeat(1_000_000)}Z`), undefined, 'a long text');
});
