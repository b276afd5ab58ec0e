import type { Tenant } from './PlatformTypes.js';

/** The dialog open over the tenants page, if any. */
export type TenantDialog =
  { kind: 'create' } | { kind: 'entitlements'; tenant: Tenant } | { kind: 'user'; tenant: Tenant } | null;
