import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import { CSP_DIRECTIVES } from '../http/security-policy.js';

/**
 * The browser-facing headers of contract §12, on every answer: a Content-Security-Policy header
 * (never a `<meta>`) that admits nothing but this origin's own files (no inline script or style, no
 * eval, no third party; images may also be `data:`), and no framing by anyone. Helmet's defaults
 * are not used because they allow `https:` fonts and styles and inline style attributes.
 */
export async function registerSecurityHeaders(app: FastifyInstance, publicUrl: URL): Promise<void> {
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: Object.fromEntries(Object.entries(CSP_DIRECTIVES).map(([name, list]) => [name, [...list]])),
    },
    frameguard: { action: 'deny' },
    // A secret in a fragment never travels in a Referer, but nothing else of a page needs to either.
    referrerPolicy: { policy: 'no-referrer' },
    // HSTS only means something over HTTPS; sent from http://localhost it would only confuse.
    hsts: publicUrl.protocol === 'https:' ? { maxAge: 180 * 24 * 60 * 60, includeSubDomains: false } : false,
  });
}
