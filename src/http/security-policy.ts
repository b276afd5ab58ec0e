/**
 * The browser-facing policy of contract §12, in one place: helmet sends it on every answer that
 * passes Fastify (web/security-headers.ts), and the answers written before routing, straight to the
 * socket (http/unplaceable.ts), carry the same.
 */
export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'"],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
} as const;

const kebab = (name: string): string => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The header lines of that policy, as helmet writes them. */
export const SECURITY_HEADER_LINES: readonly string[] = [
  `content-security-policy: ${Object.entries(CSP_DIRECTIVES)
    .map(([name, sources]) => `${kebab(name)} ${sources.join(' ')}`)
    .join(';')}`,
  'x-frame-options: DENY',
  'referrer-policy: no-referrer',
];
