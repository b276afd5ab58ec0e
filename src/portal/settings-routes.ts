import { auditOrigin } from '../access/audit.js';
import { keyManagementRule, platformRule } from '../access/rules.js';
import { requestScope } from '../access/scope.js';
import { IdParams } from '../http/schemas.js';
import type { RoutePlugin } from '../services.js';
import { platformScopeFor } from '../tenants/tenants.js';
import { PortalSettings } from './settings-schemas.js';
import { checkPortalSettings, getPortalSettings, replacePortalSettings } from './settings.js';

// Signed-in people of the roles that manage keys; an automation key never (`interactive_session_required`).
const keyManagement = keyManagementRule();
const platform = platformRule();
const tags = ['portal'];
const platformTags = ['platform: tenants'];

const READ_DESCRIPTION =
  'A tenant that never saved its settings has the defaults: no origin may frame its portal page, no branding.';
const PUT_DESCRIPTION =
  'Replaces the settings whole: every field is sent, `null` for a branding field the tenant does not set. ' +
  '`frameAncestors` are origins as a browser writes them (`https://host` or `https://host:port`, lower case, ' +
  "no path); they become the `frame-ancestors` of the tenant's portal page (`/portal/<tenantId>`) from its " +
  'next load, on every process. A field that fails is a 400 naming it, and nothing is saved.';

/** The tenant's portal framing and branding (docs/api/portal.md), for itself and for the platform operator. */
// eslint-disable-next-line max-lines-per-function -- a route plugin: its routes, one after another
export const portalSettingsRoutes: RoutePlugin = async (app, { ctx }) => {
  app.get(
    '/api/v1/company/portal-settings',
    {
      config: keyManagement,
      schema: {
        tags,
        summary: "The tenant's portal settings: framing and branding",
        description: READ_DESCRIPTION,
        response: { 200: PortalSettings },
      },
    },
    async (request) => getPortalSettings(ctx, requestScope(request)),
  );

  app.put(
    '/api/v1/company/portal-settings',
    {
      config: keyManagement,
      schema: {
        tags,
        summary: "Replace the tenant's portal settings",
        description: PUT_DESCRIPTION,
        body: PortalSettings,
        response: { 200: PortalSettings },
      },
    },
    async (request) =>
      replacePortalSettings(ctx, requestScope(request), auditOrigin(request, ctx.now()), request.body),
  );

  app.get(
    '/api/v1/platform/tenants/:id/portal-settings',
    {
      config: platform,
      schema: {
        tags: platformTags,
        summary: "A tenant's portal settings: framing and branding",
        description: READ_DESCRIPTION,
        params: IdParams,
        response: { 200: PortalSettings },
      },
    },
    // Crosses tenants on purpose: a platform key reads the tenant the URL names, once found.
    async (request) =>
      getPortalSettings(ctx, await platformScopeFor(ctx, request.principal, request.params.id)),
  );

  app.put(
    '/api/v1/platform/tenants/:id/portal-settings',
    {
      config: platform,
      schema: {
        tags: platformTags,
        summary: "Replace a tenant's portal settings",
        description: PUT_DESCRIPTION,
        params: IdParams,
        body: PortalSettings,
        response: { 200: PortalSettings },
      },
    },
    async (request) => {
      checkPortalSettings(request.body);
      // Crosses tenants on purpose: a platform key sets the tenant the URL names, once found.
      const scope = await platformScopeFor(ctx, request.principal, request.params.id);
      return replacePortalSettings(ctx, scope, auditOrigin(request, ctx.now()), request.body);
    },
  );
};
