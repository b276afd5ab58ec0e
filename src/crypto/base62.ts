import { randomBytes } from 'node:crypto';

export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` uniformly random base62 characters (rejection sampling keeps the distribution flat). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: bytes at or above it would bias the first characters of the alphabet.
      if (byte < 248) out += BASE62_ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** A non-negative integer as exactly `width` base62 characters, zero-padded. */
export function encodeBase62Fixed(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = BASE62_ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}
