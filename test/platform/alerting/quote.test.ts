import '../../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inline, quoted } from '../../../src/platform/alerting/quote.js';

test('tenant text is a JSON string literal that parses back to what the tenant wrote', () => {
  for (const text of [
    'orders',
    'a\nb\r\nc\td\u2028e\u2029f\u0085g\u00a0h\u200bi\u202ej\ufeffk',
    '<https://evil.example|click> <!channel> & <b>x</b>',
    'quote " and backslash \\ and \u0000 and \u007f',
    'tag \u{e0041} private \u{f0000} emoji 🚀 accents é',
    'lone \ud800 surrogate',
  ]) {
    const literal = quoted(text);
    assert.equal(JSON.parse(literal), text, literal);
    // Nothing left that breaks a line, hides text or is markup; spaces are U+0020 only.
    assert.ok(!/[\p{C}\p{Zl}\p{Zp}<>&]|(?! )\p{Zs}/u.test(literal), literal);
  }
  assert.equal(quoted('a\nb'), '"a\\nb"', 'a line break is not escaped as \\n');
  assert.equal(
    quoted('<!channel>'),
    '"\\u003c!channel\\u003e"',
    'Slack markup is not escaped as \\u003c and \\u003e',
  );
  assert.equal(quoted('tag \u{e0041}'), '"tag \\udb40\\udc41"', 'an invisible tag character is not escaped');
});

test('what a tenant wrote is cut at 200 characters, the cut shown outside the quotes', () => {
  const long = '🚀'.repeat(250);
  const literal = quoted(long);
  assert.ok(literal.endsWith('"…'), literal);
  assert.equal(
    [...(JSON.parse(literal.slice(0, -1)) as string)].length,
    200,
    'tenant text is not cut at 200 characters',
  );
  assert.equal(quoted('x'.repeat(200)), `"${'x'.repeat(200)}"`, 'text of exactly 200 characters is cut');
});

test('inline keeps ordinary text and escapes only what breaks or marks up a line', () => {
  assert.equal(
    inline('12 % of "orders" failed: see dlv_1'),
    '12 % of "orders" failed: see dlv_1',
    'inline escapes ordinary text',
  );
  assert.equal(
    inline('a\nb\u2028c<d'),
    'a\\nb\\u2028c\\u003cd',
    'inline leaves a line break, line separator or markup as it is',
  );
});
