import '../helpers/unit.js';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { crc32 } from 'node:zlib';
import { displayPrefix, generateToken, isWellFormedToken } from '../../src/crypto/api-tokens.js';
import { BASE62_ALPHABET } from '../../src/crypto/base62.js';
import { isIdOf, newId } from '../../src/crypto/ids.js';
import { createKeyring } from '../../src/crypto/keyring.js';

const decode62 = (s: string) => [...s].reduce((n, c) => n * 62 + BASE62_ALPHABET.indexOf(c), 0);

test('tokens are prefix + 32 base62 + 6 base62 of the CRC32 of the random part', () => {
  for (const prefix of ['tnt_', 'plt_'] as const) {
    const token = generateToken(prefix);
    assert.match(
      token,
      new RegExp(`^${prefix}[0-9A-Za-z]{38}$`),
      `${prefix} token does not have the documented shape`,
    );
    const random = token.slice(4, 36);
    assert.equal(
      decode62(token.slice(36)),
      crc32(random),
      `${prefix} token's last 6 characters are not the CRC32 of its random part`,
    );
    assert.ok(
      isWellFormedToken(prefix, token),
      `a freshly generated ${prefix} token is refused as malformed`,
    );
    assert.equal(
      displayPrefix(token),
      token.slice(0, 12),
      `${prefix} token's display prefix is not its first 12 characters`,
    );
  }
});

test('a token with a wrong checksum, prefix, length or alphabet is refused offline', () => {
  const token = generateToken('plt_');
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
  assert.ok(!isWellFormedToken('plt_', flip(token, 10)), 'random part changed');
  assert.ok(!isWellFormedToken('plt_', flip(token, 40)), 'checksum changed');
  assert.ok(!isWellFormedToken('tnt_', token), 'other prefix');
  assert.ok(!isWellFormedToken('plt_', token.slice(0, -1)), 'truncated');
  assert.ok(!isWellFormedToken('plt_', `${token}x`), 'too long');
  assert.ok(!isWellFormedToken('plt_', `${token.slice(0, 20)}-${token.slice(21)}`), 'not base62');
});

test('tokens and IDs do not repeat', () => {
  const tokens = new Set(Array.from({ length: 2000 }, () => generateToken('tnt_')));
  assert.equal(tokens.size, 2000, 'two of 2000 generated tokens are the same');
  const id = newId('ten');
  assert.ok(isIdOf('ten', id), 'a new tenant ID is not recognised as a tenant ID');
  assert.ok(!isIdOf('usr', id), 'a tenant ID passes as a user ID');
  assert.ok(!isIdOf('ten', `${id}x`), 'a tenant ID with a trailing character still passes as one');
});

test('sealed values open only with the same purpose, context and key', () => {
  const keyring = createKeyring(randomBytes(32));
  const sealed = keyring.seal('connection-credentials', 'whsec_secret', 'con_1');
  assert.ok(!sealed.includes('whsec_secret'), 'the sealed value shows the secret in clear');
  assert.equal(
    keyring.open('connection-credentials', sealed, 'con_1'),
    'whsec_secret',
    'the sealed secret does not open with its own purpose, context and key',
  );
  assert.throws(
    () => keyring.open('alert-channel-secrets', sealed, 'con_1'),
    'a secret sealed for connections opens as an alert channel secret',
  );
  assert.throws(
    () => keyring.open('connection-credentials', sealed, 'con_2'),
    "one connection's sealed secret opens for another connection",
  );
  assert.throws(
    () => createKeyring(randomBytes(32)).open('connection-credentials', sealed, 'con_1'),
    "a sealed secret opens with another keyring's key",
  );
  const [v, iv, body, tag] = sealed.split('.');
  const tampered = [v, iv, `${body?.slice(0, -2)}AA`, tag].join('.');
  assert.throws(
    () => keyring.open('connection-credentials', tampered, 'con_1'),
    'a tampered ciphertext opens',
  );
});

test('token hashes are keyed and per purpose', () => {
  const a = createKeyring(randomBytes(32));
  const b = createKeyring(randomBytes(32));
  assert.equal(
    a.hashToken('token-hash', 'x'),
    a.hashToken('token-hash', 'x'),
    'the same token hashes differently twice with one key',
  );
  assert.notEqual(
    a.hashToken('token-hash', 'x'),
    b.hashToken('token-hash', 'x'),
    'two keyrings give the same token hash: hashes are not keyed',
  );
  assert.notEqual(
    a.hashToken('token-hash', 'x'),
    a.hashToken('session-hash', 'x'),
    'a token hash is the same for sessions and API tokens',
  );
});
