import { randomFillSync } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BASE62_ALPHABET } from '../crypto/base62.js';

// A caller's own ID is kept for tracing across systems, but only in a shape that is safe to log.
const SAFE_INCOMING = /^[A-Za-z0-9._:-]{1,128}$/;
const ID_LENGTH = 22;

// Request IDs are not secrets, only unique: they draw from a pool refilled in large blocks, which
// costs a tenth of asking the system for fresh bytes on every request.
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** A fresh ID, for what Fastify never saw as a request (a request line Node's parser refused). */
export function newRequestId(): string {
  let out = 'req_';
  while (out.length < ID_LENGTH + 4) {
    if (offset === pool.length) {
      randomFillSync(pool);
      offset = 0;
    }
    const byte = pool[offset++] as number;
    // 248 = 62 * 4: bytes at or above it would bias the first characters of the alphabet.
    if (byte < 248) out += BASE62_ALPHABET[byte % 62];
  }
  return out;
}

// Fastify keeps a request's headers until it answers: whoever must answer for it without Fastify
// (a request cut off while its body was arriving: a timeout, a bad chunk) finds its ID on the
// request itself (a property, not a WeakMap entry: one of those per request is work for every
// garbage collection while the request lives).
const ID = Symbol('hubgate.requestId');
type Identified = IncomingMessage & { [ID]?: string };

export function generateRequestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  const id = typeof incoming === 'string' && SAFE_INCOMING.test(incoming) ? incoming : newRequestId();
  (request as Identified)[ID] = id;
  return id;
}

/** The ID Fastify gave this request, if it reached Fastify. */
export const requestIdOf = (request: IncomingMessage): string | undefined => (request as Identified)[ID];
