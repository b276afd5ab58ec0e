import { crc32 } from 'node:zlib';
import { encodeBase62Fixed, randomBase62 } from './base62.js';

/**
 * Bearer secrets of docs/api/authentication.md: `<prefix>` + 32 random base62 characters + 6 base62 characters of
 * the CRC32 of the random part. The checksum lets a scanner confirm a leaked token offline and lets
 * us refuse a mistyped one without touching the database.
 */
/** `oat_`/`ort_`: an MCP client's OAuth access and refresh tokens (docs/api/mcp.md). */
export type TokenPrefix = 'tnt_' | 'plt_' | 'ptl_' | 'oat_' | 'ort_';

const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const DISPLAY_PREFIX_LENGTH = 12;

function checksum(random: string): string {
  return encodeBase62Fixed(crc32(random), CHECKSUM_LENGTH);
}

export function generateToken(prefix: TokenPrefix): string {
  const random = randomBase62(RANDOM_LENGTH);
  return `${prefix}${random}${checksum(random)}`;
}

/** True when the token has the exact shape and a correct checksum for the given prefix. */
export function isWellFormedToken(prefix: TokenPrefix, token: string): boolean {
  if (token.length !== prefix.length + RANDOM_LENGTH + CHECKSUM_LENGTH || !token.startsWith(prefix)) {
    return false;
  }
  const body = token.slice(prefix.length);
  if (!/^[0-9A-Za-z]+$/.test(body)) return false;
  const random = body.slice(0, RANDOM_LENGTH);
  return checksum(random) === body.slice(RANDOM_LENGTH);
}

export function displayPrefix(token: string): string {
  return token.slice(0, DISPLAY_PREFIX_LENGTH);
}
