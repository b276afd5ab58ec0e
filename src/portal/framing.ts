import type { Kysely } from 'kysely';
import { isIdOf } from '../crypto/ids.js';
import type { DB } from '../db/schema.js';
import { contentSecurityPolicyFramedBy } from '../http/security-policy.js';
import { portalSettingsOf } from './settings.js';

/**
 * The Content-Security-Policy of `GET /portal/<tenantId>` (docs/api/portal.md): the UI's own, with
 * `frame-ancestors` listing exactly the origins the tenant allows, `'none'` when it allows none. Read
 * at every load of the page, so a change made on any process holds from the next load. An ID that is
 * malformed or names no tenant gets `'none'`, like a tenant that allows nothing: the page does not
 * tell whether a tenant exists.
 */
export async function portalPagePolicy(db: Kysely<DB>, tenantId: string): Promise<string> {
  const origins = isIdOf('ten', tenantId) ? (await portalSettingsOf(db, tenantId)).frameAncestors : [];
  return contentSecurityPolicyFramedBy(origins);
}
