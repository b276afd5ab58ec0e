import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { explainFilter, filterAccepts, type FilterMeter } from '../../src/connections/filter-match.js';
import { checkFilter, FILTER_LIMITS } from '../../src/connections/filter.js';
import { HttpProblem } from '../../src/http/problem.js';

// The filter language of docs/api/connections.md, evaluated on a delivered body as receivers get it.
const body = {
  id: 'evt_1',
  type: 'order.paid',
  timestamp: '2026-11-27T10:00:00.000Z',
  data: {
    total: 120,
    currency: 'EUR',
    note: null,
    paidAt: '2026-11-27T11:30:00+01:00',
    customer: { tier: 'gold', tags: ['vip', 'eu'], address: { country: 'DE', city: 'Berlin' } },
    lines: [{ sku: 'A-1', qty: 2 }],
  },
};

const accepts = (filter: Record<string, unknown>) => filterAccepts(filter, () => body);

describe('each operator, holding and not', () => {
  const cases: Array<[string, Record<string, unknown>, boolean]> = [
    ['plain string equality', { 'data.customer.tier': 'gold' }, true],
    ['plain string inequality', { 'data.customer.tier': 'silver' }, false],
    ['plain number equality (numbers as numbers)', { 'data.total': 120.0 }, true],
    ['a number never equals its text', { 'data.total': '120' }, false],
    ['plain null matches a null value', { 'data.note': null }, true],
    ['plain null does not match a missing value', { 'data.missing': null }, false],
    ['a plain array equals item by item', { 'data.customer.tags': ['vip', 'eu'] }, true],
    ['an array in another order is not equal', { 'data.customer.tags': ['eu', 'vip'] }, false],
    [
      'eq on an object ignores key order',
      { 'data.customer.address': { eq: { city: 'Berlin', country: 'DE' } } },
      true,
    ],
    ['eq on an object with a key fewer', { 'data.customer.address': { eq: { country: 'DE' } } }, false],
    [
      'eq on an object with a key more',
      { 'data.customer.address': { eq: { country: 'DE', city: 'Berlin', zip: 1 } } },
      false,
    ],
    ['eq', { type: { eq: 'order.paid' } }, true],
    ['eq false', { type: { eq: 'order.created' } }, false],
    ['ne', { 'data.currency': { ne: 'USD' } }, true],
    ['ne false', { 'data.currency': { ne: 'EUR' } }, false],
    ['ne holds for a missing value', { 'data.nothing': { ne: 'EUR' } }, true],
    ['in', { 'data.currency': { in: ['USD', 'EUR'] } }, true],
    ['in false', { 'data.currency': { in: ['USD', 'GBP'] } }, false],
    ['in never holds for a missing value', { 'data.nothing': { in: [null] } }, false],
    ['nin', { 'data.currency': { nin: ['USD', 'GBP'] } }, true],
    ['nin false', { 'data.currency': { nin: ['EUR'] } }, false],
    ['gt', { 'data.total': { gt: 100 } }, true],
    ['gt false at equality', { 'data.total': { gt: 120 } }, false],
    ['gte at equality', { 'data.total': { gte: 120 } }, true],
    ['gte false', { 'data.total': { gte: 121 } }, false],
    ['lt', { 'data.total': { lt: 120.5 } }, true],
    ['lt false', { 'data.total': { lt: 120 } }, false],
    ['lte at equality', { 'data.total': { lte: 120 } }, true],
    ['lte false', { 'data.total': { lte: 119 } }, false],
    ['gt on instants across offsets', { 'data.paidAt': { gt: '2026-11-27T10:29:59Z' } }, true],
    ['lt on instants across offsets', { 'data.paidAt': { lt: '2026-11-27T10:30:00Z' } }, false],
    [
      'lte on the same instant written otherwise',
      { 'data.paidAt': { lte: '2026-11-27T10:30:00.000Z' } },
      true,
    ],
    ['gte on the body timestamp', { timestamp: { gte: '2026-11-27T00:00:00Z' } }, true],
    ['a number against an instant never matches', { 'data.total': { gt: '2026-01-01T00:00:00Z' } }, false],
    ['text against a number never matches', { 'data.currency': { lt: 5 } }, false],
    ['text that is no instant never matches', { 'data.currency': { gt: '2026-01-01T00:00:00Z' } }, false],
    ['exists true', { 'data.note': { exists: true } }, true],
    ['exists true on a missing path', { 'data.nothing': { exists: true } }, false],
    ['exists false on a missing path', { 'data.customer.vat': { exists: false } }, true],
    ['exists false on a present null', { 'data.note': { exists: false } }, false],
    ['prefix', { type: { prefix: 'order.' } }, true],
    ['prefix false', { type: { prefix: 'user.' } }, false],
    ['prefix on a number never matches', { 'data.total': { prefix: '12' } }, false],
    ['a number segment indexes an array', { 'data.lines.0.sku': 'A-1' }, true],
    ['an index past the end is missing', { 'data.lines.1.sku': { exists: false } }, true],
    ['a path through a string is missing', { 'data.currency.length': { exists: false } }, true],
    ['inherited properties are not in the body', { 'data.constructor': { exists: false } }, true],
    ['operators on one path must all hold', { 'data.total': { gt: 100, lt: 110 } }, false],
    ['conditions on several paths must all hold', { type: 'order.paid', 'data.total': { gte: 100 } }, true],
  ];
  for (const [name, filter, expected] of cases) {
    test(name, () => {
      assert.equal(
        accepts(filter),
        expected,
        `${JSON.stringify(filter)} should ${expected ? '' : 'not '}match the event`,
      );
    });
  }
});

describe('$all and $any', () => {
  test('$all holds only when every filter holds', () => {
    assert.equal(
      accepts({ $all: [{ type: 'order.paid' }, { 'data.total': { gt: 100 } }] }),
      true,
      '$all of two true filters does not match',
    );
    assert.equal(
      accepts({ $all: [{ type: 'order.paid' }, { 'data.total': { gt: 500 } }] }),
      false,
      '$all with one false filter matches',
    );
  });
  test('$any holds when one filter holds', () => {
    assert.equal(
      accepts({ $any: [{ type: 'user.created' }, { 'data.currency': 'EUR' }] }),
      true,
      '$any with one true filter does not match',
    );
    assert.equal(
      accepts({ $any: [{ type: 'user.created' }, { 'data.currency': 'USD' }] }),
      false,
      '$any of two false filters matches',
    );
  });
  test('nested four levels deep', () => {
    const filter = {
      $any: [
        { type: 'nope' },
        { $all: [{ 'data.total': 120 }, { $any: [{ 'data.customer.tier': 'gold' }] }] },
      ],
    };
    assert.equal(accepts(filter), true, 'a nested filter that holds through $any/$all/$any does not match');
  });
  test('the explanation names each failed condition, none from an $any branch that matched', () => {
    const result = explainFilter(
      {
        'data.customer.tier': { in: ['platinum'] },
        'data.region': 'eu',
        $any: [{ type: 'x' }, { 'data.total': 120 }],
      },
      body,
    );
    assert.equal(result.matches, false, 'a filter with failing conditions is shown as matching');
    assert.deepEqual(
      result.failed,
      [
        {
          filterPath: '/filter/data.customer.tier/in',
          path: 'data.customer.tier',
          operator: 'in',
          expected: ['platinum'],
          actualType: 'string',
          actual: 'gold',
        },
        {
          filterPath: '/filter/data.region',
          path: 'data.region',
          operator: 'equals',
          expected: 'eu',
          actualType: 'missing',
          actual: null,
        },
      ],
      'the failed conditions shown are not the two that failed',
    );
  });
});

describe('work bounded by the filter, not the payload', () => {
  test('a 256 KiB payload costs what a small one does', () => {
    const big: Record<string, unknown> = {};
    for (let i = 0; i < 2000; i++) big[`k${i}`] = { text: 'x'.repeat(100), list: [1, 2, 3] };
    const large = { ...body, data: { ...body.data, big, blob: 'y'.repeat(50_000) } };
    // 50 conditions, each walking a path and comparing against the largest values the body has.
    const filter: Record<string, unknown> = {};
    for (let i = 0; i < 48; i++) filter[`data.big.k${i}.text`] = { ne: 'z', prefix: 'x' };
    filter['data.big'] = { eq: { k0: 1 } };
    filter['data.blob'] = { in: ['a', 'b'], gt: '2026-01-01T00:00:00Z' };
    assert.doesNotThrow(() => checkFilter(filter), 'the 50-condition filter is refused');
    const small: FilterMeter = { steps: 0 };
    const huge: FilterMeter = { steps: 0 };
    filterAccepts(filter, () => body, small);
    filterAccepts(filter, () => large, huge);
    // Each condition: a step, a step per path segment, and the operand's own size (at most a few).
    assert.ok(huge.steps <= 50 * 8, `evaluating 50 conditions on a 256 KiB payload took ${huge.steps} steps`);
    const explained: FilterMeter = { steps: 0 };
    explainFilter(filter, large, explained);
    assert.ok(explained.steps <= 50 * 8, `explaining the filter took ${explained.steps} steps`);
  });
});

function problemOf(filter: unknown): HttpProblem {
  try {
    checkFilter(filter);
  } catch (error) {
    assert.ok(error instanceof HttpProblem, `checking the filter threw ${String(error)}`);
    return error;
  }
  assert.fail(`the filter ${JSON.stringify(filter).slice(0, 200)} was accepted`);
}

const nested = (levels: number): Record<string, unknown> =>
  levels === 1 ? { type: 'a' } : { $all: [nested(levels - 1)] };

describe('checked when saved', () => {
  const refused: Array<[string, unknown, string]> = [
    ['an unknown operator', { 'data.tier': { gtt: 1 } }, '/filter/data.tier/gtt'],
    [
      'an unknown operator inside $any',
      { $any: [{ type: 'a' }, { 'data.tier': { regex: 'a' } }] },
      '/filter/$any/1/data.tier/regex',
    ],
    ['nesting 5 levels', nested(5), '/filter/$all/0/$all/0/$all/0/$all/0'],
    ['an unknown combinator', { $none: [{ type: 'a' }] }, '/filter/$none'],
    ['a path outside the delivered body', { 'payload.tier': 'gold' }, '/filter/payload.tier'],
    ['an empty path segment', { 'data..tier': 'gold' }, '/filter/data..tier'],
    ['in with no array', { 'data.a': { in: 'gold' } }, '/filter/data.a/in'],
    [
      'in with 101 values',
      { 'data.a': { in: Array.from({ length: 101 }, (_, i) => i) } },
      '/filter/data.a/in',
    ],
    ['nin with no values', { 'data.a': { nin: [] } }, '/filter/data.a/nin'],
    ['gt on text that is no instant', { 'data.a': { gt: 'tomorrow' } }, '/filter/data.a/gt'],
    ['lte on a boolean', { 'data.a': { lte: true } }, '/filter/data.a/lte'],
    ['exists on a string', { 'data.a': { exists: 'yes' } }, '/filter/data.a/exists'],
    ['prefix on a number', { 'data.a': { prefix: 1 } }, '/filter/data.a/prefix'],
    ['an empty operator object', { 'data.a': {} }, '/filter/data.a'],
    ['an empty filter', {}, '/filter'],
    ['$all with no filters', { $all: [] }, '/filter/$all'],
    ['$any holding a string', { $any: ['type'] }, '/filter/$any/0'],
    ['a key with a slash, escaped', { 'data.a/b': { nope: 1 } }, '/filter/data.a~1b/nope'],
    ['over 4 KiB', { 'data.a': { in: Array.from({ length: 100 }, () => 'x'.repeat(40)) } }, '/filter'],
  ];
  for (const [name, filter, path] of refused) {
    test(`${name} → 400 naming ${path}`, () => {
      const problem = problemOf(filter);
      assert.equal(problem.code, 'validation_failed', `${name} is refused with ${problem.code}`);
      assert.equal(problem.errors?.[0]?.path, path, `${name} is refused naming another place`);
    });
  }

  test('50 conditions pass, the 51st (wherever it stands) is refused', () => {
    const fifty: Record<string, unknown> = {};
    for (let i = 0; i < 25; i++) fifty[`data.a${i}`] = i;
    const inner: Record<string, unknown> = {};
    for (let i = 0; i < 25; i++) inner[`data.b${i}`] = i;
    assert.doesNotThrow(() => checkFilter({ ...fifty, $any: [inner] }), '50 conditions are refused');
    const problem = problemOf({ ...fifty, $any: [inner, { 'data.c': 1 }] });
    assert.equal(
      problem.errors?.[0]?.path,
      '/filter/$any/1/data.c',
      'the 51st condition is not the one named',
    );
    assert.equal(FILTER_LIMITS.conditions, 50, 'the documented bound changed');
  });

  test('4 levels pass; null and absent mean no filter', () => {
    assert.doesNotThrow(() => checkFilter(nested(4)), 'a filter nested 4 levels is refused');
    assert.doesNotThrow(() => checkFilter(null), 'null is refused');
    assert.equal(
      filterAccepts(null, () => body),
      true,
      'no filter does not pass every event',
    );
  });
});
