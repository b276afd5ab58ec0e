import type { FastifyInstance } from 'fastify';
import { securityHeaders } from '../http/security-policy.js';

/**
 * The browser-facing headers of docs/operators/web-ui.md, on every answer: a Content-Security-Policy header
 * (never a `<meta>`) that admits nothing but this origin's own files (no inline script or style, no
 * eval, no third party; images may also be `data:`), no framing by anyone, no Referer, and helmet's
 * other defaults (http/security-policy.ts). They were set by @fastify/helmet, which builds helmet's
 * middleware anew for every request (parsing the policy each time): under load that cost more than
 * the access check. The same headers are now a list made once, set on the response in the same
 * order and spelling, so answers are byte for byte what they were.
 */
export function registerSecurityHeaders(app: FastifyInstance, publicUrl: URL): void {
  const headers = securityHeaders(publicUrl);
  app.addHook('onRequest', (_request, reply, done) => {
    // On the response itself, as helmet did: these lines come first, before Fastify's own headers.
    const raw = reply.raw;
    for (const [name, value] of headers) raw.setHeader(name, value);
    done();
  });
}
