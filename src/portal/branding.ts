import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

/** How the portal page presents itself for a tenant (docs/api/portal.md). */
export interface Branding {
  name: string | null;
  logoUrl: string | null;
  accentColor: string | null;
}

/**
 * The tenant's portal branding. Until portal settings exist every tenant has none; this is the one
 * place the portal reads it from, so the settings replace this function and nothing else.
 */
export function brandingOf(_db: Kysely<DB>, _tenantId: string): Promise<Branding> {
  return Promise.resolve({ name: null, logoUrl: null, accentColor: null });
}
