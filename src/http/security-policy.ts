/**
 * The browser-facing policy of docs/operators/web-ui.md, in one place: every answer that passes Fastify carries
 * these headers (web/security-headers.ts), and the answers written before routing, straight to the
 * socket (http/unplaceable.ts), carry the policy's core lines.
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

const policyOf = (directives: Record<string, readonly string[]>): string =>
  Object.entries(directives)
    .map(([name, sources]) => `${kebab(name)} ${sources.join(' ')}`)
    .join(';');

const CONTENT_SECURITY_POLICY = policyOf(CSP_DIRECTIVES);

/**
 * The same policy but for `frame-ancestors`, which lists exactly `origins` (`'none'` when there are
 * none), and `img-src`, which also admits `imageOrigins`: the tenant's portal and connect pages,
 * which the tenant's own sites may frame and which show its logo (docs/api/portal.md). The caller
 * passes origins it has validated (`https://host[:port]`), so nothing else enters the header.
 */
export function contentSecurityPolicyFramedBy(
  origins: readonly string[],
  imageOrigins: readonly string[] = [],
): string {
  return policyOf({
    ...CSP_DIRECTIVES,
    imgSrc: [...CSP_DIRECTIVES.imgSrc, ...imageOrigins],
    frameAncestors: origins.length > 0 ? origins : ["'none'"],
  });
}

// HSTS only means something over HTTPS; sent from http://localhost it would only confuse.
const HSTS_MAX_AGE_SECONDS = 180 * 24 * 60 * 60;

/**
 * Every header of the policy, named, spelled and ordered as helmet (8) writes them with the options
 * this service used to give it: its defaults but for the policy above (helmet's own allows `https:`
 * fonts and styles and inline style attributes), framing denied, no Referer, and HSTS (without
 * subdomains) only when the public URL is HTTPS. The list is made once at start-up instead of
 * helmet building it anew for every request; test/web/security-headers.test.ts holds it to what
 * helmet writes.
 */
export function securityHeaders(publicUrl: URL): ReadonlyArray<readonly [string, string]> {
  return [
    ['Content-Security-Policy', CONTENT_SECURITY_POLICY],
    ['Cross-Origin-Opener-Policy', 'same-origin'],
    ['Cross-Origin-Resource-Policy', 'same-origin'],
    ['Origin-Agent-Cluster', '?1'],
    // A secret in a fragment never travels in a Referer, but nothing else of a page needs to either.
    ['Referrer-Policy', 'no-referrer'],
    ...(publicUrl.protocol === 'https:'
      ? [['Strict-Transport-Security', `max-age=${HSTS_MAX_AGE_SECONDS}`] as const]
      : []),
    ['X-Content-Type-Options', 'nosniff'],
    ['X-DNS-Prefetch-Control', 'off'],
    ['X-Download-Options', 'noopen'],
    ['X-Frame-Options', 'DENY'],
    ['X-Permitted-Cross-Domain-Policies', 'none'],
    ['X-XSS-Protection', '0'],
  ];
}

/** The header lines of that policy that the answers written straight to the socket carry. */
export const SECURITY_HEADER_LINES: readonly string[] = [
  `content-security-policy: ${CONTENT_SECURITY_POLICY}`,
  'x-frame-options: DENY',
  'referrer-policy: no-referrer',
];
