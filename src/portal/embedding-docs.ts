import { MAX_LIVE_PORTAL_SESSIONS } from './caps.js';

/**
 * The portal tag's description in the OpenAPI document, which /docs shows above the portal routes:
 * how a platform embeds the portal, as one copy-paste example (docs/api/portal.md, "Embedding the
 * portal", says the same). test/portal/embedding-docs.test.ts sends these very bodies.
 */
export const PORTAL_TAG_DESCRIPTION = `Portal sessions: hubgate's view of one tenant's connections, for a person of the platform's own system who has no hubgate account, inside the platform's product.

**Embedding it.** Once per tenant, list the origin of the platform's pages that will frame the portal (its \`Content-Security-Policy: frame-ancestors\`; without it every browser refuses to show the portal framed):

\`\`\`sh
curl -X PUT "$HUB/api/v1/platform/tenants/$TENANT_ID/portal-settings" \\
  -H "Authorization: Bearer $HUBGATE_PLATFORM_KEY" -H "Content-Type: application/json" \\
  -d '{"frameAncestors":["https://app.example.com"],"branding":{"name":"Acme Payroll","logoUrl":null,"accentColor":"#0a7cff"}}'
\`\`\`

Then, on the platform's backend, each time the person opens the page (the link works once, for 10 minutes):

\`\`\`sh
curl -X POST "$HUB/api/v1/platform/tenants/$TENANT_ID/portal-sessions" \\
  -H "Authorization: Bearer $HUBGATE_PLATFORM_KEY" -H "Content-Type: application/json" \\
  -d '{"subject":"kim@customer.example","access":"operate","expiresInSeconds":3600}'
# 201 {"id":"pts_…","url":"https://hub.example.com/portal/ten_…#code=…", …}
\`\`\`

and the page at \`https://app.example.com\` frames that \`url\`:

\`\`\`html
<iframe src="https://hub.example.com/portal/ten_…#code=…" title="Integrations"
        style="width: 100%; height: 720px; border: 0"></iframe>
\`\`\`

The portal exchanges the code for a \`ptl_\` token held in the frame (no cookie, so it works with third-party cookies blocked). Keep the \`plt_\` key on the server; the \`url\` is a secret until used: do not log or cache it. If the platform's page has a Content-Security-Policy, its \`frame-src\` must admit the hub's origin. A tenant key with \`integrations:ADMIN\` mints sessions for its own tenant with \`POST /api/v1/integrations/portal-sessions\` and the same body; a tenant holds at most ${MAX_LIVE_PORTAL_SESSIONS.toLocaleString('en')} live sessions (one more is \`409 conflict\`).`;
