import { HttpProblem } from '../http/problem.js';
import type { Role } from './catalog.js';

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
    };

export type SessionPrincipal = Extract<Principal, { kind: 'session' }>;
export type TenantKeyPrincipal = Extract<Principal, { kind: 'tenant_key' }>;

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The actor columns of an audit row for a principal. */
export function actorOf(principal: Principal | null): { actorType: string; actorId: string | null } {
  if (!principal) return { actorType: 'anonymous', actorId: null };
  if (principal.kind === 'session') return { actorType: 'user', actorId: principal.userId };
  return { actorType: principal.kind, actorId: principal.keyId };
}

/** The session a route was called with (the gate has put it there for session-class routes). */
export function sessionOf(principal: unknown): SessionPrincipal {
  const p = principal as SessionPrincipal | null;
  if (p?.kind !== 'session') throw new HttpProblem('internal');
  return p;
}
