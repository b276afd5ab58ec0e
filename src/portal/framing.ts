import type { Kysely } from 'kysely';
import { isIdOf } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import { contentSecurityPolicyFramedBy } from '../http/security-policy.js';
import { portalSettingsOf } from './settings.js';

/**
 * The origin of a logo given as an https URL, for `img-src`; none for a `data:` logo (already
 * admitted) or none at all. The settings admitted only https and data URLs when they were saved.
 */
function logoOriginOf(logoUrl: string | null): string[] {
  if (!logoUrl || !URL.canParse(logoUrl)) return [];
  const url = new URL(logoUrl);
  return url.protocol === 'https:' ? [url.origin] : [];
}

/**
 * The Content-Security-Policy of `GET /portal/<tenantId>` (docs/api/portal.md): the UI's own, with
 * `frame-ancestors` listing exactly the origins the tenant allows, `'none'` when it allows none, and
 * the origin of the tenant's logo among the images it may show. Read at every load of the page, so a
 * change made on any process holds from the next load. An ID that is malformed or names no tenant
 * gets `'none'`, like a tenant that allows nothing: the page does not tell whether a tenant exists.
 */
export async function portalPagePolicy(db: Kysely<DB>, tenantId: string): Promise<string> {
  if (!isIdOf('ten', tenantId)) return contentSecurityPolicyFramedBy([]);
  const { frameAncestors, branding } = await portalSettingsOf(db, tenantId);
  return contentSecurityPolicyFramedBy(frameAncestors, logoOriginOf(branding.logoUrl));
}

/**
 * The connect page's, `GET /connect/<tenantId>`: framed by nobody, like every page but the portal,
 * but showing the tenant's logo as the portal does.
 */
export async function connectPagePolicy(db: Kysely<DB>, tenantId: string): Promise<string> {
  if (!isIdOf('ten', tenantId)) return contentSecurityPolicyFramedBy([]);
  const { branding } = await portalSettingsOf(db, tenantId);
  return contentSecurityPolicyFramedBy([], logoOriginOf(branding.logoUrl));
}
