import type { Level, ModuleKey, Role } from './catalog.js';

/** A module and the least level that opens a route; a scope `module:LEVEL` or a role must reach it. */
export interface Requirement {
  module: ModuleKey;
  level: Level;
}

/** A portal session's access level (docs/api/portal.md); each includes the ones before it. */
export const PORTAL_ACCESS = ['read', 'operate', 'manage'] as const;
export type PortalAccess = (typeof PORTAL_ACCESS)[number];

/**
 * What each route declares about who may call it (`config.access`). The gate enforces these, and
 * OpenAPI security and the automation capabilities are derived from them, so the declaration is the
 * only place a rule lives. A route that declares nothing cannot be registered (see access/gate.ts).
 */
export type AccessRule =
  /** No credential needed or looked at. `unlimited` exempts it from the rate limit (health, docs). */
  | { class: 'public'; unlimited?: boolean }
  /** `Bearer plt_…` only (docs/api/platform.md). */
  | { class: 'platform' }
  /**
   * A signed-in person; `roles` narrows it (e.g. the audit log). Never an automation key; a portal
   * token only where `portal` names the least access that opens the route (docs/api/portal.md).
   */
  | { class: 'session'; roles?: readonly Role[]; portal?: PortalAccess }
  /** Key management: sessions of the key-managing roles only (docs/api/keys.md). */
  | { class: 'key_management' }
  /**
   * A tenant module route. Sessions are governed by role, keys by scope ∩ entitlement; keys only when
   * `automation` puts the route on the allowlist (docs/api/authentication.md). Any one of `anyOf` suffices.
   * A portal token only where `portal` names the least access that opens it, within the entitlements.
   */
  | {
      class: 'tenant';
      anyOf: readonly Requirement[];
      automation: boolean;
      portal?: PortalAccess;
      /** Tenant keys only (the MCP server, docs/api/mcp.md): a session gets 403 route_not_allowed. */
      keysOnly?: true;
    }
  /** A portal session's `ptl_` token only (its own session: docs/api/portal.md). */
  | { class: 'portal' };

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessRule;
  }
}

/**
 * A tenant route for tenant keys alone, opened by any one of `anyOf` (the MCP server: an agent holds
 * a key, never a person's session; docs/api/mcp.md).
 */
export const tenantKeyRule = (anyOf: readonly Requirement[]): Declared => ({
  access: { class: 'tenant', automation: true, anyOf, keysOnly: true },
});

/** What a route's `config` declares: `config: tenantRule('integrations', 'OPERATOR')`. */
export interface Declared {
  access: AccessRule;
}

/**
 * A tenant module route opened by `level` of `module`; on the automation allowlist unless
 * `automation: false` (then sessions only; a tenant key gets 403 route_not_allowed). `portal` opens
 * it to portal tokens of that access or more; without it they get 403 route_not_allowed.
 */
export const tenantRule = (
  module: ModuleKey,
  level: Level,
  options: { automation?: boolean; portal?: PortalAccess } = {},
): Declared => anyTenantRule([{ module, level }], options);

/** A tenant route that any one of several module levels opens (discovery: either module's READER). */
export const anyTenantRule = (
  anyOf: readonly Requirement[],
  { automation = true, portal }: { automation?: boolean; portal?: PortalAccess } = {},
): Declared => ({
  access: portal ? { class: 'tenant', automation, anyOf, portal } : { class: 'tenant', automation, anyOf },
});

/** No credential needed or looked at; `unlimited` exempts it from the rate limit. */
export const publicRule = (options: { unlimited?: boolean } = {}): Declared => ({
  access: { class: 'public', ...options },
});

/** A platform key only. */
export const platformRule = (): Declared => ({ access: { class: 'platform' } });

/**
 * A signed-in person, of one of `roles` when given; never an automation key. `portal` opens it to
 * portal tokens of that access or more (the connector catalog).
 */
export const sessionRule = (roles?: readonly Role[], options: { portal?: PortalAccess } = {}): Declared => ({
  access: {
    class: 'session',
    ...(roles ? { roles } : {}),
    ...(options.portal ? { portal: options.portal } : {}),
  },
});

/** A portal session's token only: the session it is (docs/api/portal.md). */
export const portalRule = (): Declared => ({ access: { class: 'portal' } });

/** Key management: sessions of the key-managing roles only. */
export const keyManagementRule = (): Declared => ({ access: { class: 'key_management' } });

export const scopeOf = (r: Requirement): string => `${r.module}:${r.level}`;
