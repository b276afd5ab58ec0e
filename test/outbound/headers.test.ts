import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  HEADER_NAME_PATTERN,
  HEADER_VALUE_PATTERN,
  isSendableHeaderName,
  isSendableHeaderValue,
} from '../../src/outbound/headers.js';

test('the header-value schema pattern refuses exactly what Node’s HTTP clients refuse, character by character', () => {
  // As the request validator compiles it (Ajv: unicode flag).
  const pattern = new RegExp(HEADER_VALUE_PATTERN, 'u');
  const disagreements: string[] = [];
  const characters = [
    ...Array.from({ length: 0x10000 }, (_, code) => String.fromCharCode(code)),
    '\u{1f511}',
    '\u{10ffff}',
  ];
  for (const character of characters) {
    const value = `a${character}b`;
    if (pattern.test(value) !== isSendableHeaderValue(value)) {
      disagreements.push(character.codePointAt(0)?.toString(16) ?? '?');
    }
  }
  assert.deepEqual(
    disagreements,
    [],
    'the header-value pattern accepts or refuses characters Node refuses or accepts (hex code points)',
  );
  for (const value of ['Bearer abc', 'a\tb', 'caf\u00e9', ''])
    assert.equal(isSendableHeaderValue(value), true, `${JSON.stringify(value)} is refused as a header value`);
  for (const value of ['a\r\nb', 'a\u0000', '\u20ac', 'a\u007f'])
    assert.equal(
      isSendableHeaderValue(value),
      false,
      `${JSON.stringify(value)} is accepted as a header value though Node refuses it`,
    );
});

test('header names: tokens only', () => {
  for (const name of ['Authorization', 'X-Api-Key', "!#$%&'*+.^_`|~09"])
    assert.equal(isSendableHeaderName(name), true, `${JSON.stringify(name)} is refused as a header name`);
  for (const name of ['', 'X Api', 'X:Api', 'X-\u00c4pi', '(X)', 'a\u0000'])
    assert.equal(
      isSendableHeaderName(name),
      false,
      `${JSON.stringify(name)} is accepted as a header name though it is not a token`,
    );
  // The schema pattern agrees with Node's check on every character of Latin-1.
  const pattern = new RegExp(HEADER_NAME_PATTERN, 'u');
  for (let code = 0; code < 0x100; code++) {
    const name = `X${String.fromCharCode(code)}`;
    assert.equal(pattern.test(name), isSendableHeaderName(name), `character ${code.toString(16)}`);
  }
});
