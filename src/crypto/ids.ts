import { randomBase62 } from './base62.js';

/** The ID prefixes of docs/api/conventions.md, plus internal records that never leave the service. */
export type IdPrefix =
  | 'ten'
  | 'usr'
  | 'key'
  | 'pkey'
  | 'con'
  | 'evt'
  | 'dlv'
  | 'chn'
  | 'pky'
  | 'aud'
  | 'ses'
  | 'rul'
  | 'ntf'
  | 'pts'
  | 'cns'
  /** MCP clients, their authorization requests and grants (docs/api/mcp.md). */
  | 'mcc'
  | 'mcq'
  | 'mcg'
  /** Sources of incoming webhooks and the requests they log (docs/api/sources.md). */
  | 'src'
  | 'srq';

// 22 base62 characters carry ~131 bits: unguessable, so an ID never needs to be secret.
const ID_BODY_LENGTH = 22;

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(ID_BODY_LENGTH)}`;
}

/** Shape check used before any lookup: anything else is a plain 404. */
export function isIdOf(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_[0-9A-Za-z]{${ID_BODY_LENGTH}}$`).test(value);
}

export const ID_PATTERN = (prefix: IdPrefix): string => `^${prefix}_[0-9A-Za-z]{${ID_BODY_LENGTH}}$`;
