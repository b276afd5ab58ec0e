import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../ui/common/api.js';
import {
  filterErrorText,
  filterTextOf,
  filterValueOf,
  jsonProblem,
} from '../../ui/connections/filter-text.js';
import {
  connectionPage,
  countText,
  deliveryPage,
  filterKey,
  filterProblems,
  filterQuery,
  filtersFrom,
  fromLocalInput,
  hasFilters,
  NO_FILTERS,
  toLocalInput,
  type LogFilters,
} from '../../ui/deliveries/filters.js';

// The event log's filters as the page's URL holds them (ui/deliveries/filters.ts), and the payload filter
// editor's text (ui/connections/filter-text.ts).
const EVENT_ID = 'evt_0123456789abcdefghijkl';

test('filters read from a URL keep what the API takes and leave out what it would refuse', () => {
  const filters = filtersFrom({
    status: 'failed,bogus,pending,failed',
    eventType: ' order.* ',
    eventId: 'not-an-id',
    since: '2026-01-01T00:00:00Z',
    until: '2025-01-01T00:00:00Z',
    test: 'maybe',
    responseStatus: '5xx',
  });
  assert.deepEqual(
    filters,
    {
      // In the order the filter offers them, each once, unknown ones dropped.
      status: ['pending', 'failed'],
      eventType: 'order.*',
      eventId: '',
      since: '2026-01-01T00:00:00.000Z',
      // Before "since": refused by the API, so not sent.
      until: '',
      test: '',
      responseStatus: '5xx',
    },
    'filters',
  );
  assert.deepEqual(filtersFrom({}), NO_FILTERS, 'no query, no filter');
  assert.equal(filtersFrom({ since: 'yesterday' }).since, '', 'an unreadable time is left out');
});

test('filters written to the URL and read back are the same filters', () => {
  const filters: LogFilters = {
    status: ['retrying', 'failed'],
    eventType: 'employee.*',
    eventId: EVENT_ID,
    since: '2026-01-01T00:00:00.000Z',
    until: '2026-02-01T00:00:00.000Z',
    test: 'false',
    responseStatus: '404',
  };
  const query = filterQuery(filters);
  assert.equal(query.status, 'retrying,failed', 'query.status');
  assert.deepEqual(filtersFrom(query), filters, 'filtersFrom(query)');
  assert.deepEqual(filterQuery(NO_FILTERS), {}, 'empty filters are left out of the query');
  assert.equal(hasFilters(NO_FILTERS), false, 'hasFilters(NO_FILTERS)');
  assert.equal(
    hasFilters({ ...NO_FILTERS, test: 'true' }),
    true,
    'hasFilters({ ...NO_FILTERS, test: "true" })',
  );
  assert.equal(
    filterKey({ ...NO_FILTERS, status: ['failed', 'pending'] }),
    'status=failed%2Cpending',
    'filterKey({ ...NO_FILTERS, status: ["failed", "pending"] })',
  );
});

test('each field the API would refuse is named with what to type instead', () => {
  assert.deepEqual(filterProblems(NO_FILTERS), {}, 'filterProblems(NO_FILTERS)');
  const problems = filterProblems({
    ...NO_FILTERS,
    eventType: 'Order Paid',
    eventId: 'evt_short',
    responseStatus: '600',
    since: '2026-01-02T00:00:00.000Z',
    until: '2026-01-01T00:00:00.000Z',
  });
  assert.deepEqual(
    Object.keys(problems).sort(),
    ['eventId', 'eventType', 'responseStatus', 'until'],
    'Object.keys(problems).sort()',
  );
  assert.match(problems.eventType!, /lowercase/, 'problems.eventType!');
  assert.match(problems.until!, /after/, 'problems.until!');
  for (const ok of ['2xx', '4xx', '5xx', '200', '503'])
    assert.equal(filterProblems({ ...NO_FILTERS, responseStatus: ok }).responseStatus, undefined, ok);
  for (const bad of ['3xx', '99', '1000', 'abc'])
    assert.ok(filterProblems({ ...NO_FILTERS, responseStatus: bad }).responseStatus, bad);
  assert.equal(
    filterProblems({ ...NO_FILTERS, since: '2026-01-01T00:00:00Z', until: '2026-01-01T00:00:00Z' }).until !==
      undefined,
    true,
    'an empty window is refused',
  );
});

test("a connection's and a delivery's pages carry the filters, encoded", () => {
  assert.equal(connectionPage('con_1'), '/connections/con_1/events', 'connectionPage("con_1")');
  assert.equal(
    connectionPage('con 1', { ...NO_FILTERS, status: ['failed'] }, 'abc'),
    '/connections/con%201/events?status=failed&cursor=abc',
    'connectionPage("con 1", { ...NO_FILTERS, status: ["failed"] }, "abc")',
  );
  assert.equal(connectionPage('con_1', NO_FILTERS, null), '/connections/con_1/events', 'no cursor, no page');
  assert.equal(
    deliveryPage('con_1', 'dlv/2', { status: 'failed' }),
    '/connections/con_1/events/dlv%2F2?status=failed',
    'deliveryPage("con_1", "dlv/2", { status: "failed" })',
  );
});

test('datetime-local values and API times convert both ways, to the minute', () => {
  const local = toLocalInput('2026-11-27T14:05:33.000Z');
  assert.match(local, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/, 'local');
  assert.equal(fromLocalInput(local), new Date(local).toISOString(), 'fromLocalInput(local)');
  assert.equal(Date.parse(fromLocalInput(local)) % 60_000, 0, 'seconds are dropped');
  assert.equal(toLocalInput('garbage'), '', 'toLocalInput("garbage")');
  assert.equal(fromLocalInput(''), '', 'fromLocalInput("")');
  assert.equal(fromLocalInput('garbage'), '', 'fromLocalInput("garbage")');
});

test('a count is said honestly: "more than" once it stopped at its bound', () => {
  assert.equal(countText({ count: 1, more: false }), '1 delivery', 'countText({ count: 1, more: false })');
  assert.equal(
    countText({ count: 12, more: false }),
    '12 deliveries',
    'countText({ count: 12, more: false })',
  );
  assert.equal(
    countText({ count: 1000, more: true }),
    `more than ${(1000).toLocaleString()} deliveries`,
    'countText({ count: 1000, more: true })',
  );
  assert.equal(
    countText({ count: 2, more: false }, 'event', 'events'),
    '2 events',
    'countText({ count: 2, more: false }, "event", "events")',
  );
});

test('the payload filter editor: typed text to the API and back, problems in words', () => {
  assert.equal(filterValueOf('  '), undefined, 'an empty filter is no filter');
  assert.deepEqual(
    filterValueOf('{"type": "order.paid"}'),
    { type: 'order.paid' },
    'filterValueOf("{"type": "order.paid"}")',
  );
  assert.equal(
    filterValueOf('{oops'),
    '{oops',
    'text that is not JSON is sent as it is, for the API to refuse',
  );
  assert.equal(filterTextOf(null), '', 'filterTextOf(null)');
  assert.equal(filterTextOf({ a: 1 }), '{\n  "a": 1\n}', 'filterTextOf({ a: 1 })');
  assert.equal(jsonProblem('', 'filter'), undefined, 'jsonProblem("", "filter")');
  assert.equal(jsonProblem('{"a":1}', 'filter'), undefined, 'jsonProblem("{"a":1}", "filter")');
  assert.match(
    jsonProblem('{a:1}', 'sample event')!,
    /^The sample event is not valid JSON/,
    'jsonProblem("{a:1}", "sample event")!',
  );
  const refused = new ApiError(422, 'validation_failed', 'refused', [
    { path: '/filter/data.tier/gtt', message: 'is not an operator' },
    { path: 'filter', message: 'must be an object' },
    { path: 'url', message: 'not about the filter' },
  ]);
  assert.equal(
    filterErrorText(refused),
    '/filter/data.tier/gtt: is not an operator. The filter must be an object.',
    'filterErrorText(refused)',
  );
  assert.equal(
    filterErrorText(new ApiError(422, 'validation_failed', 'refused', [])),
    undefined,
    'filterErrorText(new ApiError(422, "validation_failed", "refused", []))',
  );
  assert.equal(filterErrorText(undefined), undefined, 'filterErrorText(undefined)');
});
