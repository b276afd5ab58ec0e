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

export const scopeOf = (r: Requirement): string => `${r.module}:${r.level}`;
