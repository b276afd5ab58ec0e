import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { accessLineWriter, createLogger, type AccessLine } from '../../src/logger.js';

/** A logger made as the server makes it, writing into `lines` (one string per write). */
function capturing(level = 'info') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger(level, sink), lines };
}

/** The access line pino itself writes: the request's child logger, the fields, then the message. */
function pinoLine(line: AccessLine): string {
  const { logger, lines } = capturing();
  const { requestId, ...fields } = line;
  logger.child({ requestId }).info(fields, 'request');
  return lines.join('');
}

function writtenLine(line: AccessLine): string {
  const { logger, lines } = capturing();
  accessLineWriter(logger)(line);
  return lines.join('');
}

// Both lines carry the time they were written; everything else must be equal, byte for byte.
const withoutTime = (text: string) => text.replace(/,"time":[0-9]+,/, ',"time":0,');

const cases: Array<[string, AccessLine]> = [
  [
    'an answered request',
    { requestId: 'req_Im81FVWVsB1g8RAfTyYMNB', method: 'GET', path: '/api/v1/x', statusCode: 200, ms: 1.3 },
  ],
  ['a whole number of ms', { requestId: 'req_a', method: 'POST', path: '/a', statusCode: 201, ms: 12 }],
  ['an aborted request (no ms)', { requestId: 'req_b', method: 'PUT', path: '/b', statusCode: 499 }],
  [
    'a path with quotes, backslashes, control and non-ASCII characters',
    { requestId: 'x:1.2-3_4', method: 'GET', path: '/a"b\\c\u0001d\u00e9\u2028', statusCode: 404, ms: 0 },
  ],
  [
    'a path longer than pino writes without JSON.stringify',
    { requestId: 'req_f', method: 'GET', path: `/${'a"'.repeat(80)}`, statusCode: 414, ms: 0.1 },
  ],
  [
    'a duration that is not a number',
    { requestId: 'req_c', method: 'GET', path: '/', statusCode: 200, ms: NaN },
  ],
];

for (const [what, line] of cases) {
  test(`the access line is the line pino writes: ${what}`, () => {
    const expected = pinoLine(line);
    const actual = writtenLine(line);
    assert.equal(
      withoutTime(actual),
      withoutTime(expected),
      `the access line differs from pino's for ${what}`,
    );
    assert.match(actual, /,"time":[0-9]{13},/, `the access line of ${what} has no epoch-millisecond time`);
    assert.ok(actual.endsWith('}\n'), `the access line of ${what} is not one line ending in a newline`);
    assert.deepEqual(
      Object.keys(JSON.parse(actual) as object),
      [
        'level',
        'time',
        'service',
        'requestId',
        'method',
        'path',
        'statusCode',
        ...('ms' in line ? ['ms'] : []),
        'msg',
      ],
      `the access line of ${what} does not have the documented fields in order`,
    );
  });
}

test('no access line is written below the logger level, and one is once the level allows it', () => {
  const { logger, lines } = capturing('warn');
  const write = accessLineWriter(logger);
  const line = { requestId: 'req_d', method: 'GET', path: '/', statusCode: 200, ms: 1 };
  write(line);
  assert.deepEqual(lines, [], 'an access line was written at level warn');
  logger.level = 'info';
  write(line);
  assert.equal(lines.length, 1, 'no access line was written once the level became info');
});

test('access lines and other log lines reach the output in the order they were written', () => {
  const { logger, lines } = capturing();
  const write = accessLineWriter(logger);
  logger.info('first');
  write({ requestId: 'req_e', method: 'GET', path: '/', statusCode: 200, ms: 1 });
  logger.info('third');
  assert.deepEqual(
    lines.map((l) => (JSON.parse(l) as { msg: string }).msg),
    ['first', 'request', 'third'],
    'the access line was not written between the lines logged before and after it',
  );
});
