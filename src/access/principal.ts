import { HttpProblem } from '../http/problem.js';
import type { Role } from './catalog.js';
import type { PortalAccess } from './rules.js';

/** Who is calling, once the gate has authenticated the request. */
export type Principal =
  | { kind: 'platform_key'; keyId: string }
  | {
      kind: 'tenant_key';
      keyId: string;
      prefix: string;
      tenantId: string;
      scopes: string[];
      entitlements: string[];
      expiresAt: Date;
      /**
       * The key's own requests per minute (docs/api/keys.md), null for `RATE_LIMIT_PER_MINUTE`: the
       * gate counts with it without reading the database.
       */
      rateLimitPerMinute: number | null;
      /**
       * Set for an MCP client's OAuth access token (`oat_`, docs/api/mcp.md): a grant holds scopes as
       * a key does, but only on the MCP route and the tool calls it makes; `keyId` is the grant's ID.
       */
      grant?: { clientName: string };
    }
  | {
      kind: 'session';
      sessionId: string;
      userId: string;
      email: string;
      role: Role;
      tenantId: string;
      entitlements: string[];
      authMethod: string;
    }
  | {
      /** A portal session's `ptl_` token (docs/api/portal.md): one tenant, some routes, maybe some connections. */
      kind: 'portal';
      sessionId: string;
      tenantId: string;
      /** The person in the caller's own system, recorded with every change made with the token. */
      subject: string;
      access: PortalAccess;
      /** Null: every connection of the tenant, now and later. */
      connectionIds: readonly string[] | null;
      entitlements: string[];
      expiresAt: Date;
    };

export type SessionPrincipal = Extract<Principal, { kind: 'session' }>;
export type TenantKeyPrincipal = Extract<Principal, { kind: 'tenant_key' }>;
export type PortalPrincipal = Extract<Principal, { kind: 'portal' }>;

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/**
 * The actor columns of an audit row for a principal; a portal session's also the `subject` it was
 * made for, which the row's metadata records (docs/api/portal.md).
 */
export function actorOf(principal: Principal | null): {
  actorType: string;
  actorId: string | null;
  actorSubject?: string;
} {
  if (!principal) return { actorType: 'anonymous', actorId: null };
  if (principal.kind === 'session') return { actorType: 'user', actorId: principal.userId };
  if (principal.kind === 'portal') {
    return { actorType: 'portal', actorId: principal.sessionId, actorSubject: principal.subject };
  }
  if (principal.kind === 'tenant_key' && principal.grant)
    return { actorType: 'mcp_grant', actorId: principal.keyId };
  return { actorType: principal.kind, actorId: principal.keyId };
}

/** The session a route was called with (the gate has put it there for session-class routes). */
export function sessionOf(principal: unknown): SessionPrincipal {
  const p = principal as SessionPrincipal | null;
  if (p?.kind !== 'session') throw new HttpProblem('internal');
  return p;
}
