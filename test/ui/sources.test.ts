import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventTypeMatches } from '../../src/connections/event-types.js';
import { OUTCOMES as SERVER_OUTCOMES } from '../../src/sources/ingest.js';
import { SCHEME_NAMES } from '../../src/sources/schemes/index.js';
import { OUTCOMES, SCHEMES, schemeWords, sourcePage, takesEventType } from '../../ui/sources/words.js';

// The sources pages' words (ui/sources/words.ts) against the server's lists, and which connections'
// event logs a source's event is linked to.

test('every scheme and outcome the server has is said in words, and no other', () => {
  assert.deepEqual(
    SCHEMES.map((s) => s.name).sort(),
    [...SCHEME_NAMES].sort(),
    'the form offers other schemes than the server takes',
  );
  assert.deepEqual(
    [...OUTCOMES].sort(),
    [...SERVER_OUTCOMES].sort(),
    'the log’s outcomes are not the server’s',
  );
  assert.deepEqual(
    SCHEMES.filter((s) => s.generates).map((s) => s.name),
    ['standard-webhooks'],
    'only Standard Webhooks may leave its secret to hubgate',
  );
  assert.equal(schemeWords('new-provider').label, 'new-provider', 'an unknown scheme is said as its name');
});

test('a connection’s event types take a source’s event as the fan-out does', () => {
  assert.equal(takesEventType(undefined, 'github.push'), true, 'no eventTypes: every type');
  assert.equal(takesEventType(['github.*'], 'github.pull_request.opened'), true, 'github.*');
  assert.equal(takesEventType(['stripe.*'], 'github.push'), false, 'stripe.* takes no github event');
  assert.equal(takesEventType(['*.opened'], 'github.pull_request.opened'), true, '*.opened');
  assert.equal(takesEventType(['github.*.opened'], 'github.opened'), false, 'a middle piece must be there');
  assert.equal(takesEventType(['github.push'], 'github.push'), true, 'an exact type');
  assert.equal(takesEventType(['github.push'], 'github.pushed'), false, 'an exact type, no more');
  const patterns = ['*', 'github.*', '*.opened', 'github.*.opened', 'g*b*h', 'github.push', '**', 'a*a*a'];
  const types = ['github.push', 'github.pull_request.opened', 'github.opened', 'gh', 'aaa', 'aa'];
  for (const pattern of patterns)
    for (const type of types)
      assert.equal(
        takesEventType([pattern], type),
        eventTypeMatches([pattern], type),
        `${pattern} against ${type}: the UI and the fan-out disagree`,
      );
});

test('a source’s page keeps its outcome filter and page in its address', () => {
  assert.equal(sourcePage('src_1'), '/sources/src_1', 'sourcePage("src_1")');
  assert.equal(
    sourcePage('src_1', 'invalid_signature', 'c2'),
    '/sources/src_1?outcome=invalid_signature&cursor=c2',
    'with an outcome and a cursor',
  );
});
