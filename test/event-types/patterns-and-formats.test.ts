import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import addFormatsModule from 'ajv-formats';
import { RE2JS } from 're2js';
import { isUrl } from '../../src/event-types/formats.js';
import {
  compilePattern,
  estimatedStates,
  patternClock,
  PatternTimeout,
} from '../../src/event-types/patterns.js';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const ajvUrl = (addFormatsModule as unknown as { get: (name: string) => RegExp }).get('url');

test('the size read from a pattern’s text is within a few instructions of what RE2 compiles', () => {
  const patterns = [
    '.{1,1000}.{1,1000}.{1,1000}!',
    '[a-z]{1,1000}[0-9]{1,1000}[A-Z]{1,1000}',
    '[a-z]{1,160}[0-9]{1,160}[A-Z]{1,149}',
    '^(a+)+$',
    '^[A-Z]{3}-[0-9]+$',
    'ok$',
    '(?i)abc\\d{2,}',
    '(?P<x>a|b){3}',
    '[]a]{5}',
    '\\Q.{1000}\\E',
    '\\p{Greek}{10}',
    '(?:ab){0,10}',
    'x*?y+?z??',
    '[[:alpha:]]{4}',
    '^[a-zA-Z0-9._%+-]{1,64}@[a-zA-Z0-9-]{1,63}(\\.[a-zA-Z0-9-]{1,63})+$',
    '[ab]*a[ab]{300}c',
  ];
  for (const pattern of patterns) {
    const real = RE2JS.compile(pattern).re2Input.numberOfInstructions();
    const estimate = estimatedStates(pattern);
    assert.ok(
      Math.abs(real - estimate) <= Math.max(4, real * 0.6),
      `${pattern}: estimated ${estimate}, RE2 compiles ${real}`,
    );
  }
  // A million instructions are read as such, without compiling them.
  assert.ok(estimatedStates('.{1,1000}'.repeat(300)) > 500_000, 'a huge program was read as small');
});

test('a match stops at the clock’s deadline, and the pattern still answers afterwards', () => {
  const pattern = compilePattern('[ab]*a[ab]{300}c');
  let x = 1;
  let text = '';
  for (let i = 0; i < 250_000; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    text += (x >>> 16) % 2 ? 'a' : 'b';
  }
  patternClock.deadline = performance.now() + 5;
  const startedAt = performance.now();
  try {
    assert.throws(() => pattern.test(`${text}\nc`), PatternTimeout, 'the match ran past its deadline');
  } finally {
    patternClock.deadline = Number.POSITIVE_INFINITY;
  }
  const tookMs = performance.now() - startedAt;
  assert.ok(tookMs < 200, `the match stopped ${tookMs.toFixed(0)} ms after it started, for a 5 ms deadline`);
  assert.equal(pattern.test(`${'a'.repeat(301)}c`), true, 'the pattern no longer matches after a timeout');
  assert.equal(pattern.test('abc'), false, 'the pattern matches what it must not');
});

test('url: the linear check agrees with ajv-formats’ expression on ordinary values', () => {
  const values = [
    'http://example.com',
    'https://example.com/a/b?c=d#e',
    'ftp://files.example.org/x',
    'HTTPS://EXAMPLE.COM',
    'http://user:pass@example.com:8080/p',
    'http://user@example.com',
    'http://@example.com',
    'http://example.com:1',
    'http://example.com:123456',
    'http://example',
    'http://exa_mple.com',
    'http://-a.com',
    'http://a-.com',
    'http://a--b.com',
    'http://a.b-c.com',
    'http://a.c0m',
    'http://例え.テスト',
    'http://8.8.8.8',
    'http://8.8.8.8:80/x',
    'http://10.0.0.1',
    'http://127.0.0.1',
    'http://192.168.1.1',
    'http://172.16.0.1',
    'http://172.32.0.1',
    'http://169.254.1.1',
    'http://1.2.3.255',
    'http://0.1.2.3',
    'http://224.1.1.1',
    'http://1.2.3',
    'http://example.com/a b',
    'http://example.com/\t',
    'mailto:a@example.com',
    'http//example.com',
    'http:/example.com',
    'https://',
    'http://a.com?x=1',
    'http://a.com#x',
  ];
  for (const value of values) {
    assert.equal(isUrl(value), ajvUrl.test(value), `${JSON.stringify(value)}: ours and ajv-formats’ differ`);
  }
});
