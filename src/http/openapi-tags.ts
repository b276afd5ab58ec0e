/**
 * What each group of routes is, for the OpenAPI document's tags (/docs shows the line above the
 * group's routes). A domain with more to say gives its own (the portal's embedding example,
 * portal/embedding-docs.ts), which app.ts puts over these. scripts/lint-openapi.ts holds every tag to
 * having one.
 */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  health: 'Liveness and readiness of the process and its database, for load balancers and orchestrators.',
  setup: 'First-run setup: the one-time link that creates the first organization and its administrator.',
  'sign-in':
    'Interactive sign-in (password, SSO) and the browser session it gives: its CSRF token, sign-out.',
  passkeys: 'WebAuthn passkeys: register, list and remove them, and sign in with one.',
  people: "The organization's people: invite, change a role, remove; invitation links.",
  'api keys':
    'Tenant automation keys (`tnt_…`): create with scopes and an expiry, rotate with an overlap, revoke.',
  audit: "The organization's audit log: who changed what, from where, with which request.",
  automation: "What a tenant key may call: its capabilities, from the routes' own rules.",
  'integration hub': 'The connector catalog, the credential readiness and the overview of deliveries.',
  connections:
    'Connections between the tenant and a connector: create, edit, bind credentials, pause, resume, revoke; OAuth2 authorization and the credential proxy.',
  events: 'Publish events, and read, retry, recover and test their deliveries: the event log.',
  'event types':
    "The tenant's event-type catalog: names, descriptions and the JSON schemas events are checked against.",
  sources:
    'Incoming webhooks: sources that verify another system’s signed requests at their ingest URL and publish each as an event.',
  usage:
    "The tenant's usage per hour or day: events published, deliveries by outcome, attempts, proxy calls, ingested requests.",
  mcp: "The tenant's MCP server for AI agents: tools over connections and deliveries, with a key's reach, and the consent and grants of MCP clients that sign in with OAuth.",
  'connect-links':
    'Connect links: a link an end user with no hubgate account follows to make one new connection.',
  'platform: tenants': 'Operators (`plt_…` keys): tenants, their modules and their people.',
  'platform: monitoring': 'Operators: live monitoring of the hub and its history.',
  'platform: alerting': 'Operators: alerting channels, routing rules and the alerts firing now.',
  'platform: usage': "Operators: every tenant's usage per hour or day, as JSON or CSV.",
  'platform: oauth providers': 'Operators: the OAuth2 providers whose connectors tenants can use.',
};
