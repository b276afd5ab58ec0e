import type { Level, ModuleKey, Role } from './catalog.js';

/** A module and the least level that opens a route; a scope `module:LEVEL` or a role must reach it. */
export interface Requirement {
  module: ModuleKey;
  level: Level;
}

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
  /** A signed-in person; `roles` narrows it (e.g. the audit log). Never an automation key. */
  | { class: 'session'; roles?: readonly Role[] }
  /** Key management: sessions of the key-managing roles only (docs/api/keys.md). */
  | { class: 'key_management' }
  /**
   * A tenant module route. Sessions are governed by role, keys by scope ∩ entitlement; keys only when
   * `automation` puts the route on the allowlist (docs/api/authentication.md). Any one of `anyOf` suffices.
   */
  | { class: 'tenant'; anyOf: readonly Requirement[]; automation: boolean };

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessRule;
  }
}

/** What a route's `config` declares: `config: tenantRule('integrations', 'OPERATOR')`. */
export interface Declared {
  access: AccessRule;
}

/**
 * A tenant module route opened by `level` of `module`; on the automation allowlist unless
 * `automation: false` (then sessions only; a tenant key gets 403 route_not_allowed).
 */
export const tenantRule = (
  module: ModuleKey,
  level: Level,
  options: { automation?: boolean } = {},
): Declared => anyTenantRule([{ module, level }], options);

/** A tenant route that any one of several module levels opens (discovery: either module's READER). */
export const anyTenantRule = (
  anyOf: readonly Requirement[],
  { automation = true }: { automation?: boolean } = {},
): Declared => ({ access: { class: 'tenant', automation, anyOf } });

/** No credential needed or looked at; `unlimited` exempts it from the rate limit. */
export const publicRule = (options: { unlimited?: boolean } = {}): Declared => ({
  access: { class: 'public', ...options },
});

/** A platform key only. */
export const platformRule = (): Declared => ({ access: { class: 'platform' } });

/** A signed-in person, of one of `roles` when given; never an automation key. */
export const sessionRule = (roles?: readonly Role[]): Declared => ({
  access: roles ? { class: 'session', roles } : { class: 'session' },
});

/** Key management: sessions of the key-managing roles only. */
export const keyManagementRule = (): Declared => ({ access: { class: 'key_management' } });

export const scopeOf = (r: Requirement): string => `${r.module}:${r.level}`;
