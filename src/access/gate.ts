import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Keyring } from '../crypto/keyring.js';
import { HttpProblem } from '../http/problem.js';
import { rateLimitFields } from '../http/rate-limit-fields.js';
import { authenticate, unauthenticated, type CredentialVerifiers } from './authenticate.js';
import { addressBucket, clientAddress } from './client-address.js';
import { verifyCsrfToken } from './csrf.js';
import { decide } from './decide.js';
import type { Principal, SessionPrincipal } from './principal.js';
import type { RateLimiter, RateLimitResult } from './rate-limit.js';
import type { AccessRule } from './rules.js';
import { tenantScopeOf } from './scope.js';
import { takeViaMark, viaOf } from './via.js';

// Routes added by plugins we do not write (the docs UI) are public documentation.
const PUBLIC_PREFIXES = ['/docs'];
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface DeclaredRoute {
  method: string;
  url: string;
  access: AccessRule;
  /** The route's own schema and config: what the MCP tools are made of (src/mcp/tools.ts). */
  schema: RouteOptions['schema'];
  config: RouteOptions['config'];
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route with its access rule, in registration order: what the gate and the docs read. */
    declaredRoutes: DeclaredRoute[];
  }
}

function declareAccess(route: RouteOptions): DeclaredRoute {
  if (!route.config?.access && PUBLIC_PREFIXES.some((p) => route.url.startsWith(p))) {
    route.config = { ...route.config, access: { class: 'public', unlimited: true } };
  }
  const rule = route.config?.access;
  if (!rule) {
    // Default deny, enforced at start-up: a route without a rule never serves a request.
    throw new Error(`route ${String(route.method)} ${route.url} declares no access rule (config.access)`);
  }
  return {
    method: String(route.method),
    url: route.url,
    access: rule,
    schema: route.schema,
    config: route.config,
  };
}

function principalBucket(principal: Principal): string {
  if (principal.kind === 'session') return `session:${principal.sessionId}`;
  if (principal.kind === 'portal') return `portal:${principal.sessionId}`;
  return `${principal.kind}:${principal.keyId}`;
}

const addressOf = (request: FastifyRequest): string => addressBucket(clientAddress(request));

export interface GateDeps {
  verifiers: CredentialVerifiers;
  limiter: RateLimiter;
  /** `RATE_LIMIT_PER_MINUTE`: a credential's limit unless its key has its own, and an address's. */
  requestsPerMinute: number;
  /**
   * The tenant's `requestsPerMinute` quota (docs/api/rate-limits.md), null for none: every request
   * of the tenant's credentials counts on one bucket. Synchronous: read from memory per request.
   */
  tenantRequestLimit(tenantId: string): number | null | Promise<number | null>;
  keyring: Keyring;
  publicOrigin: string;
  now(): Date;
}

/** One bucket a request counts on, and the policy it announces (http/rate-limit-fields.ts). */
interface Bucket {
  bucket: string;
  policy: 'address' | 'credential' | 'tenant';
  limit: number;
}

const REFUSALS: Record<Bucket['policy'], string> = {
  address: 'Too many requests from this address; slow down.',
  credential: 'Too many requests for this credential; slow down.',
  tenant: "Over the tenant's requests per minute; slow down.",
};

/**
 * Sets the rate-limit fields of the counts so far (every request they admitted carries them), and
 * refuses the request when the last of them is over its limit.
 */
function enforce(reply: FastifyReply, counts: ReadonlyArray<[Bucket, RateLimitResult]>): void {
  const fields = rateLimitFields(
    counts.map(([b, result]) => ({
      policy: b.policy,
      quota: result.limit,
      windowSeconds: 60,
      remaining: result.remaining,
      resetSeconds: result.resetSeconds,
    })),
  );
  for (const [name, value] of Object.entries(fields)) reply.header(name, value);
  const last = counts.at(-1);
  if (last && !last[1].allowed) {
    throw new HttpProblem('rate_limited', REFUSALS[last[0].policy], {
      headers: { ...fields, 'retry-after': String(last[1].resetSeconds) },
    });
  }
}

/**
 * The access gate: every request to a declared route passes here before its body is read, in the
 * order of docs/api/errors.md: authenticate → CSRF for sessions → credential kind vs route class →
 * entitlement → scope or role. Rate limits apply per credential as soon as it is known.
 */
export function registerGate(app: FastifyInstance, deps: GateDeps): void {
  const declared: DeclaredRoute[] = [];
  app.decorate('declaredRoutes', declared);
  app.decorateRequest('principal', null);
  app.decorateRequest('tenantScope', null);
  app.addHook('onRoute', (route) => {
    declared.push(declareAccess(route));
  });

  const gate: Gate = { deps, lookups: new Map() };
  app.addHook('onRequest', (request, reply, done) => {
    takeViaMark(request);
    let checked: Promise<void> | void;
    try {
      checked = check(gate, request, reply);
    } catch (error) {
      done(error as Error);
      return;
    }
    if (checked) checked.then(() => done(), done);
    else done();
  });
}

interface Gate {
  deps: GateDeps;
  /** Credential lookups in flight per address bucket, in this process. */
  lookups: Map<string, number>;
}

function release(gate: Gate, address: string): void {
  const left = (gate.lookups.get(address) ?? 1) - 1;
  if (left > 0) gate.lookups.set(address, left);
  else gate.lookups.delete(address);
}

/**
 * Counts a request on its buckets in order (the credential's, then its tenant's) and sets the
 * fields of the counts; a bucket that refuses ends it, uncounted on the buckets after it. A
 * promise only when a count must wait for a lease from the shared row.
 */
function limit(
  deps: GateDeps,
  reply: FastifyReply,
  buckets: readonly Bucket[],
  counts: Array<[Bucket, RateLimitResult]> = [],
): Promise<void> | void {
  const now = deps.now();
  for (let i = counts.length; i < buckets.length; i++) {
    const b = buckets[i]!;
    const counted = deps.limiter.hit(b.bucket, now, b.limit);
    if (counted instanceof Promise) {
      return counted.then((result) => {
        counts.push([b, result]);
        if (!result.allowed) return enforce(reply, counts);
        return limit(deps, reply, buckets, counts);
      });
    }
    counts.push([b, counted]);
    if (!counted.allowed) break;
  }
  enforce(reply, counts);
}

const addressBuckets = (deps: GateDeps, request: FastifyRequest): Bucket[] => [
  { bucket: addressOf(request), policy: 'address', limit: deps.requestsPerMinute },
];

/** A credential's bucket (a key's own limit, else the global), then its tenant's if it has a quota. */
function principalBuckets(deps: GateDeps, principal: Principal): Bucket[] | Promise<Bucket[]> {
  const own = principal.kind === 'tenant_key' ? principal.rateLimitPerMinute : null;
  const buckets: Bucket[] = [
    { bucket: principalBucket(principal), policy: 'credential', limit: own ?? deps.requestsPerMinute },
  ];
  const tenantId = principal.kind === 'platform_key' ? null : principal.tenantId;
  const tenantLimit = tenantId === null ? null : deps.tenantRequestLimit(tenantId);
  const withTenant = (limit: number | null) => {
    if (limit !== null) buckets.push({ bucket: `tenant:${tenantId}`, policy: 'tenant', limit });
    return buckets;
  };
  // A promise only while this process knows nothing of the tenant's quotas yet (src/quotas/book.ts).
  return tenantLimit instanceof Promise ? tenantLimit.then(withTenant) : withTenant(tenantLimit);
}

/**
 * The checks of one request, in order; a promise only when one of them must wait (a credential
 * not in the caches, a count to share with the database). A key that is in the cache goes
 * through without a promise: several per request were a measurable part of a cheap route
 * (docs/benchmarks.md). What is checked, and in which order, is the same either way.
 */
function check(gate: Gate, request: FastifyRequest, reply: FastifyReply): Promise<void> | void {
  const { deps, lookups } = gate;
  const rule = request.routeOptions.config.access;
  // Only the not-found route declares nothing: what no route takes is limited per address.
  if (!rule) return limit(deps, reply, addressBuckets(deps, request));
  if (rule.class === 'public')
    return rule.unlimited ? undefined : limit(deps, reply, addressBuckets(deps, request));

  const now = deps.now();
  // An address that has spent its allowance of unauthenticated and failed requests is refused
  // before its credential costs a lookup, so garbage tokens cannot load the database (docs/api/limits.md).
  // Lookups still in flight count as spent: a burst must not pass before its failures are counted.
  const address = addressOf(request);
  const pending = lookups.get(address) ?? 0;
  const early = deps.limiter.peek(address, now, deps.requestsPerMinute, pending);
  // Passed, it is counted again once the credential is known, and that count sets the headers.
  if (!early.allowed) enforce(reply, [[addressBuckets(deps, request)[0]!, early]]);
  lookups.set(address, pending + 1);
  let found: Promise<Principal | null> | Principal | null;
  try {
    found = authenticate(request, deps.verifiers, now);
  } catch (error) {
    return refuse(gate, request, reply, address, error);
  }
  if (found instanceof Promise) {
    return found.then(
      (principal) => admit(gate, request, reply, rule, address, principal),
      (error: unknown) => refuse(gate, request, reply, address, error),
    );
  }
  return admit(gate, request, reply, rule, address, found);
}

/** After a failed credential: guessing credentials is limited per client address. */
function refuse(
  gate: Gate,
  request: FastifyRequest,
  reply: FastifyReply,
  address: string,
  error: unknown,
): Promise<never> {
  // The lookup stays counted as spent until the failure itself is.
  let counted: Promise<void> | void;
  try {
    counted = limit(gate.deps, reply, addressBuckets(gate.deps, request));
  } catch (refusal) {
    release(gate, address);
    throw refusal;
  }
  return Promise.resolve(counted).then(
    () => {
      release(gate, address);
      throw error;
    },
    (refusal: unknown) => {
      release(gate, address);
      throw refusal;
    },
  );
}

/** Once the credential is known (or known to be absent): its count, then what it may do here. */
function admit(
  gate: Gate,
  request: FastifyRequest,
  reply: FastifyReply,
  rule: AccessRule,
  address: string,
  principal: Principal | null,
): Promise<void> | void {
  release(gate, address);
  // A tool call's own request was counted as the MCP request that made it: counting it again would
  // halve a key's limit through MCP (docs/api/mcp.md).
  if (principal && viaOf(request) === 'mcp') return allow(gate.deps, request, rule, principal);
  const buckets = principal ? principalBuckets(gate.deps, principal) : addressBuckets(gate.deps, request);
  const counted =
    buckets instanceof Promise
      ? buckets.then((known) => limit(gate.deps, reply, known))
      : limit(gate.deps, reply, buckets);
  if (counted) return counted.then(() => allow(gate.deps, request, rule, principal));
  allow(gate.deps, request, rule, principal);
}

function allow(deps: GateDeps, request: FastifyRequest, rule: AccessRule, principal: Principal | null): void {
  if (!principal) throw unauthenticated();
  request.principal = principal;

  // A keys-only route refuses every session: there is no session's change to protect from forgery.
  const keysOnly = rule.class === 'tenant' && rule.keysOnly === true;
  if (principal.kind === 'session' && !keysOnly) checkCsrf(request, deps, principal);
  // An MCP client's access token is for the MCP route alone (its resource, RFC 8707) and the tool
  // calls it makes; anywhere else it is no credential (docs/api/mcp.md).
  if (principal.kind === 'tenant_key' && principal.grant && !keysOnly && viaOf(request) !== 'mcp') {
    throw new HttpProblem('unauthenticated', 'This access token is for the MCP server (/api/v1/mcp) only.', {
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    });
  }

  const decision = decide(rule, principal);
  if (!decision.allowed) throw decision.problem;
  // Every tenant credential carries its tenant's scope to the route; a platform key carries none.
  if (principal.kind !== 'platform_key') request.tenantScope = tenantScopeOf(principal);
}

/** An unsafe method with a session needs the session's CSRF token, from this origin (docs/api/errors.md). */
function checkCsrf(request: FastifyRequest, deps: GateDeps, session: SessionPrincipal): void {
  if (!UNSAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  const header = request.headers['x-csrf-token'];
  const token = typeof header === 'string' ? header : undefined;
  if (
    (origin !== undefined && origin !== deps.publicOrigin) ||
    !verifyCsrfToken(deps.keyring, session.sessionId, token)
  ) {
    throw new HttpProblem('csrf_failed', 'This request needs the X-CSRF-Token of the session.');
  }
}
