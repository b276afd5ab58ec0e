import compress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Answers of this many bytes or more are compressed; below it the headers would outweigh the gain. */
export const COMPRESS_MIN_BYTES = 1024;

/** The request header @fastify/compress reads as "leave this answer as it is". */
const NO_COMPRESSION = 'x-no-compression';

/**
 * Whether an answer may hold a secret, and must then go out uncompressed: a secret compressed next
 * to text an attacker chose leaks through the answer's length (BREACH). Only answers under
 * `Cache-Control: no-store` carry secrets, and every API answer is under it; among those, hubgate
 * hands out a secret only in the answer to the write that makes it (a key, a signing secret, an
 * invitation link, setup's platform key, sign-in's CSRF token) or beside the cookie it sets (the
 * session's CSRF token). Reads set no cookie and return no secret (secrets are write-only), so they
 * stay compressible. docs/decisions/0053-compression-never-on-secrets.md
 */
export function mayCarrySecret(request: FastifyRequest, reply: FastifyReply): boolean {
  const cacheControl = reply.getHeader('cache-control');
  if (typeof cacheControl !== 'string' || !cacheControl.includes('no-store')) return false;
  const isRead = request.method === 'GET' || request.method === 'HEAD';
  return !isRead || reply.hasHeader('set-cookie');
}

/**
 * br or gzip by the request's Accept-Encoding (q-values honoured by the plugin), for answers of
 * COMPRESS_MIN_BYTES or more of a compressible type (never `text/event-stream`), never for one that
 * may carry a secret. Register before any route: the plugin adds its hook to each route as it is
 * declared, behind the app's own `onSend` hooks, so the one here decides first.
 */
export async function registerCompression(app: FastifyInstance): Promise<void> {
  // A callback: it runs for every answer, and a promise per request is work on every request's path.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (mayCarrySecret(request, reply)) request.headers[NO_COMPRESSION] = 'secret';
    done(null, payload);
  });
  await app.register(compress, {
    threshold: COMPRESS_MIN_BYTES,
    encodings: ['br', 'gzip'],
    // Requests are never compressed: JSON bodies are limited to 1 MiB as sent (docs/api/limits.md).
    globalDecompression: false,
  });
}
