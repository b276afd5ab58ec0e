import type { FastifyRequest } from 'fastify';
import { HttpProblem } from '../http/problem.js';
import type { Principal } from './principal.js';

declare const scopeBrand: unique symbol;

/**
 * The tenant a request acts for. Stores of tenant data take a TenantScope, never a bare tenant ID,
 * and only the functions below make one, each for one reason; so no route can query another
 * tenant's rows by passing an ID from the URL or body: the compiler refuses it. Who may call each
 * is checked by test/access/cross-tenant.test.ts, which also refuses any cast to TenantScope.
 */
export interface TenantScope {
  readonly tenantId: string;
  /** The tenant's module entitlements as the credential was verified with them. */
  readonly entitlements: readonly string[];
  /**
   * A portal session that names its connections sees only those (docs/api/portal.md): every read of
   * the tenant's connections (connections/store.ts) starts from them, so any other is not there.
   * Null: every connection of the tenant.
   */
  readonly connections: ConnectionRestriction | null;
  readonly [scopeBrand]: true;
}

/** The connections a portal session may see, and the session, which a connection it creates joins. */
export interface ConnectionRestriction {
  readonly portalSessionId: string;
  readonly ids: readonly string[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The tenant of the credential the gate let through (a tenant key or a session); null on public
     * routes and for platform keys, which act on no tenant of their own.
     */
    tenantScope: TenantScope | null;
  }
}

// No copy of the entitlements: they are read-only wherever they come from, and the gate makes a
// scope on every request.
const scopeOf = (
  tenantId: string,
  entitlements: readonly string[],
  connections: ConnectionRestriction | null = null,
): TenantScope => ({ tenantId, entitlements, connections }) as unknown as TenantScope;

/**
 * The gate's only: the tenant of a tenant credential it has just authenticated; a portal session's
 * narrowed to the connections it names.
 */
export function tenantScopeOf(principal: Exclude<Principal, { kind: 'platform_key' }>): TenantScope {
  if (principal.kind === 'portal' && principal.connectionIds) {
    return scopeOf(principal.tenantId, principal.entitlements, {
      portalSessionId: principal.sessionId,
      ids: principal.connectionIds,
    });
  }
  return scopeOf(principal.tenantId, principal.entitlements);
}

/**
 * A narrowed scope that also sees the connection its caller has just created through it, in the
 * transaction that made the connection join the session (connections/connections.ts).
 */
export function withCreatedConnection(scope: TenantScope, connectionId: string): TenantScope {
  if (!scope.connections) return scope;
  return scopeOf(scope.tenantId, scope.entitlements, {
    ...scope.connections,
    ids: [...scope.connections.ids, connectionId],
  });
}

/** The scope the gate put on a tenant, session or key-management route's request. */
export function requestScope(request: FastifyRequest): TenantScope {
  // The gate sets it for every tenant credential it lets through; missing here is a bug, not a 403.
  if (!request.tenantScope) throw new HttpProblem('internal');
  return request.tenantScope;
}

/**
 * A platform operator acting on one tenant (its users, its entitlements): the tenant is named by
 * the URL, so the caller must have found it first (`tenant` is the row it found, 404 otherwise).
 * Platform keys belong to no tenant and may manage every one; this is the one way they get a scope.
 */
export function platformScopeOf(
  principal: Principal | null,
  tenant: { id: string; entitlements: readonly string[] },
): TenantScope {
  // Only platform routes call this, and the gate lets only platform keys reach them.
  if (principal?.kind !== 'platform_key') throw new HttpProblem('internal');
  return scopeOf(tenant.id, tenant.entitlements);
}

/**
 * Sign-in (password, passkey, single sign-on): no credential of the tenant exists yet, so the scope
 * comes from the user row the verified credential belongs to, with its tenant's entitlements.
 */
export function signInScopeOf(user: { tenantId: string; entitlements: readonly string[] }): TenantScope {
  return scopeOf(user.tenantId, user.entitlements);
}

/**
 * First-run setup: the tenant it has just created, in the transaction that creates its first user
 * too. No user exists yet to sign in as, and setup runs once: the setup token guards it (docs/operators/setup.md).
 */
export function setupScopeOf(tenant: { id: string; entitlements: readonly string[] }): TenantScope {
  return scopeOf(tenant.id, tenant.entitlements);
}

/**
 * The service acting by itself on a tenant's row it has just read (the automatic pause of a failing
 * connection, docs/api/connections.md): no credential is involved and no module is called, so no entitlements.
 */
export function systemScopeOf(tenantId: string): TenantScope {
  return scopeOf(tenantId, []);
}

/**
 * A connect link completed (docs/api/connect-links.md): its holder has no credential of the tenant,
 * so the scope comes from the link row the code named, with its tenant's entitlements read since.
 */
export function connectLinkScopeOf(link: { tenantId: string; entitlements: readonly string[] }): TenantScope {
  return scopeOf(link.tenantId, link.entitlements);
}

/**
 * An OAuth2 authorization coming back (docs/api/oauth.md): the provider sends the browser with nothing
 * but the state, whose row names the tenant; the tenant is the one of the state's owner (a user's
 * session, a portal session, a connect link), whom the callback checks again before it binds.
 */
export function authorizationReturnScopeOf(owner: {
  tenantId: string;
  entitlements: readonly string[];
}): TenantScope {
  return scopeOf(owner.tenantId, owner.entitlements);
}

/**
 * A verified request to a source's ingest URL (docs/api/sources.md): no credential, the signature
 * over its bytes proves the sender; the scope is the source's tenant's, with its entitlements.
 */
export function ingestScopeOf(source: { tenantId: string; entitlements: readonly string[] }): TenantScope {
  return scopeOf(source.tenantId, source.entitlements);
}
