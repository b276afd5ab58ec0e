import { timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../crypto/base62.js';
import type { Keyring } from '../crypto/keyring.js';

/**
 * OWASP's signed double-submit token: a random value and an HMAC over the session ID and that value.
 * The server checks the HMAC, never the cookie copy, so a token planted in a cookie by a sibling
 * domain is useless without the session it was made for.
 */
export function issueCsrfToken(keyring: Keyring, sessionId: string): string {
  const random = randomBase62(22);
  return `${random}.${keyring.hashToken('csrf', `${sessionId}.${random}`)}`;
}

export function verifyCsrfToken(keyring: Keyring, sessionId: string, token: string | undefined): boolean {
  if (!token) return false;
  const [random, mac, ...rest] = token.split('.');
  if (!random || !mac || rest.length > 0 || !/^[0-9A-Za-z]{22}$/.test(random)) return false;
  const expected = Buffer.from(keyring.hashToken('csrf', `${sessionId}.${random}`));
  const given = Buffer.from(mac);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
