import type { Kysely } from 'kysely';
import { recordAudit, type AuditOrigin } from '../access/audit.js';
import type { TenantScope } from '../access/scope.js';
import type { AppContext } from '../context.js';
import type { DB } from '../db/schema.js';
import { HttpProblem, type FieldError } from '../http/problem.js';
import type { Branding, PortalSettings } from './settings-schemas.js';
import { findPortalSettingsRow, upsertPortalSettingsRow, type PortalSettingsRow } from './settings-store.js';

/** A tenant that never saved its settings: no site may frame its portal, and it shows no branding. */
const DEFAULTS: PortalSettings = {
  frameAncestors: [],
  branding: { name: null, logoUrl: null, accentColor: null },
};

const toSettings = (row: PortalSettingsRow | undefined): PortalSettings =>
  row
    ? {
        frameAncestors: row.frame_ancestors,
        branding: {
          name: row.branding_name,
          logoUrl: row.branding_logo_url,
          accentColor: row.branding_accent_color,
        },
      }
    : structuredClone(DEFAULTS);

/** The settings of `tenantId` as stored, or the defaults; for the framing of its portal page. */
export async function portalSettingsOf(db: Kysely<DB>, tenantId: string): Promise<PortalSettings> {
  return toSettings(await findPortalSettingsRow(db, tenantId));
}

/**
 * The branding a portal or connect page shows for `tenantId` (docs/api/portal.md), all null when the
 * tenant set none. The caller names a tenant it found (a portal session's, a connect link's).
 */
export async function brandingOf(db: Kysely<DB>, tenantId: string): Promise<Branding> {
  return (await portalSettingsOf(db, tenantId)).branding;
}

export function getPortalSettings(ctx: AppContext, scope: TenantScope): Promise<PortalSettings> {
  return portalSettingsOf(ctx.db, scope.tenantId);
}

// The host of an origin: DNS labels, or an IP address (v4 in the first form, v6 in brackets). No `*`:
// frame-ancestors would read it as a wildcard, and the contract admits one host per entry.
const HOST = /^(?:[a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/;
const ORIGIN_WORDS =
  'must be an origin as a browser writes it: https://host or https://host:port, in lower case, ' +
  'with no path, no default port (443) and no wildcard';

/**
 * Whether `text` is exactly the origin a browser would send for a page of that site, so that it
 * goes into the Content-Security-Policy header as is and matches what the browser compares.
 */
function isHttpsOrigin(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return url.protocol === 'https:' && url.origin === text && HOST.test(url.hostname);
}

const DATA_IMAGE = /^data:image\/(?:png|jpeg|svg\+xml);base64,[A-Za-z0-9+/]+={0,2}$/;
const LOGO_WORDS = 'must be an https URL or a data:image/(png|jpeg|svg+xml);base64, URL';

function isLogoUrl(text: string): boolean {
  if (text.startsWith('data:')) return DATA_IMAGE.test(text);
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  // No credentials in a URL every visitor's browser is given.
  return url.protocol === 'https:' && url.username === '' && url.password === '';
}

/**
 * What the schema cannot say, every field named (docs/api/errors.md): a 400 before anything is looked
 * up or written. The platform route calls it before it looks the tenant up (validation comes before
 * the 404 of an unknown tenant).
 */
export function checkPortalSettings(settings: PortalSettings): void {
  const errors: FieldError[] = settings.frameAncestors.flatMap((origin, i) =>
    isHttpsOrigin(origin) ? [] : [{ path: `frameAncestors.${i}`, message: ORIGIN_WORDS }],
  );
  const { logoUrl } = settings.branding;
  if (logoUrl !== null && !isLogoUrl(logoUrl)) errors.push({ path: 'branding.logoUrl', message: LOGO_WORDS });
  const first = errors[0];
  if (first) throw new HttpProblem('validation_failed', `${first.path}: ${first.message}`, { errors });
}

/** The names of what a PUT changed, for the audit row: never the logo itself, which may be 64 KiB. */
function changedFields(before: PortalSettings, after: PortalSettings): string[] {
  const changed: string[] = [];
  if (JSON.stringify(before.frameAncestors) !== JSON.stringify(after.frameAncestors))
    changed.push('frameAncestors');
  if (before.branding.name !== after.branding.name) changed.push('brandingName');
  if (before.branding.logoUrl !== after.branding.logoUrl) changed.push('logoUrl');
  if (before.branding.accentColor !== after.branding.accentColor) changed.push('accentColor');
  return changed;
}

/**
 * Replaces the tenant's portal settings whole (a PUT: a field left out is a 400, not kept), with the
 * audit row in the same transaction. The next load of the portal page on any process reads them.
 */
export async function replacePortalSettings(
  ctx: AppContext,
  scope: TenantScope,
  origin: AuditOrigin,
  settings: PortalSettings,
): Promise<PortalSettings> {
  checkPortalSettings(settings);
  const { tenantId } = scope;
  return ctx.db.transaction().execute(async (trx) => {
    const before = await portalSettingsOf(trx, tenantId);
    await upsertPortalSettingsRow(trx, scope, {
      frame_ancestors: settings.frameAncestors,
      branding_name: settings.branding.name,
      branding_logo_url: settings.branding.logoUrl,
      branding_accent_color: settings.branding.accentColor,
      updated_at: origin.at,
    });
    await recordAudit(trx, origin, {
      action: 'portal_settings.update',
      tenantId,
      targetType: 'tenant',
      targetId: tenantId,
      metadata: { changedFields: changedFields(before, settings), frameAncestors: settings.frameAncestors },
    });
    return { frameAncestors: [...settings.frameAncestors], branding: { ...settings.branding } };
  });
}
