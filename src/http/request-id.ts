import type { IncomingMessage } from 'node:http';
import { randomBase62 } from '../crypto/base62.js';

// A caller's own ID is kept for tracing across systems, but only in a shape that is safe to log.
const SAFE_INCOMING = /^[A-Za-z0-9._:-]{1,128}$/;

export function generateRequestId(request: IncomingMessage): string {
  const incoming = request.headers['x-request-id'];
  if (typeof incoming === 'string' && SAFE_INCOMING.test(incoming)) return incoming;
  return `req_${randomBase62(22)}`;
}
