import { HttpProblem } from '../http/problem.js';
import type { Principal } from './principal.js';

declare const scopeBrand: unique symbol;

/**
 * The tenant a request acts for. Stores of tenant data take a TenantScope, never a bare tenant ID,
 * and only `tenantScopeOf` makes one, from the authenticated credential. So no route can query
 * another tenant's rows by passing an ID from the URL or body: the compiler refuses it.
 */
export interface TenantScope {
  readonly tenantId: string;
  /** The tenant's module entitlements as the credential was verified with them. */
  readonly entitlements: readonly string[];
  readonly [scopeBrand]: true;
}

export function tenantScopeOf(principal: Principal | null): TenantScope {
  if (!principal || principal.kind === 'platform_key') {
    // The gate lets only tenant credentials reach tenant routes; reaching here is a bug, not a 403.
    throw new HttpProblem('internal');
  }
  const scope = { tenantId: principal.tenantId, entitlements: principal.entitlements };
  return scope as unknown as TenantScope;
}
