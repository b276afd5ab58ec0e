// The audit log's words (docs/operators/web-ui.md): every action the server records, and the names found in
// an entry's metadata, said as a person would. Plain data and string functions, no DOM: a unit test
// (test/access/audit-words.test.ts) reads it beside the server's list of actions.

/**
 * Every action hubgate records (`AUDIT_ACTIONS` in src/access/audit.ts), in words: the one table. A
 * new action without its words here fails test/access/audit-words.test.ts.
 */
export const AUDIT_ACTION_WORDS: Readonly<Record<string, string>> = {
  'sign_in.success': 'Signed in',
  'sign_in.failure': 'Sign-in failed',
  'setup.complete': 'Set up hubgate',
  'setup.failure': 'Setup refused: wrong or expired setup token',
  'api_key.create': 'Created an API key',
  'api_key.rotate': 'Rotated an API key',
  'api_key.revoke': 'Revoked an API key',
  'platform_key.create': 'Created a platform key',
  'platform_key.revoke': 'Revoked a platform key',
  'passkey.create': 'Added a passkey',
  'passkey.delete': 'Removed a passkey',
  'user.password_sign_in.update': 'Changed password sign-in',
  'user.create': 'Added a user',
  'user.invite': 'Invited a person',
  'user.activate': 'Accepted an invitation',
  'user.role.update': 'Changed a person’s role',
  'user.delete': 'Removed a person',
  'tenant.create': 'Created the organization',
  'tenant.entitlements.update': 'Changed the organization’s modules',
  'tenant.quotas.update': 'Changed the organization’s quotas',
  'connection.create': 'Created a connection',
  'connection.update': 'Edited a connection',
  'connection.credentials.bind': 'Bound credentials to a connection',
  'connection.authorize': 'Connected a connection at its provider',
  'connection.authorization.expire': 'A connection’s authorization ended',
  'connection.pause': 'Paused a connection',
  'connection.resume': 'Resumed a connection',
  'connection.recover': 'Sent failed deliveries again',
  'connection.test': 'Sent a test event',
  'connection.revoke': 'Revoked a connection',
  'connect_session.create': 'Made a connect link',
  'connect_session.revoke': 'Deleted a connect link',
  'source.create': 'Created a source',
  'source.update': 'Changed a source',
  'source.delete': 'Deleted a source',
  'source.rotate_secret': 'Rotated a source’s secret',
  'event_type.create': 'Added an event type',
  'event_type.update': 'Changed an event type',
  'event_type.delete': 'Deleted an event type',
  'oauth_provider.create': 'Added an OAuth2 provider',
  'oauth_provider.update': 'Changed an OAuth2 provider',
  'oauth_provider.delete': 'Deleted an OAuth2 provider',
  'alerting.channel.create': 'Created an alerting channel',
  'alerting.channel.update': 'Changed an alerting channel',
  'alerting.channel.delete': 'Deleted an alerting channel',
  'alerting.rules.replace': 'Replaced the alert routing rules',
  'portal_settings.update': 'Changed the portal’s framing and branding',
  'portal_session.create': 'Started a portal session',
  'portal_session.revoke': 'Ended a portal session',
  'mcp_grant.create': 'Gave an MCP client access',
  'mcp_grant.revoke': 'Revoked an MCP client’s access',
};

/** The action in words, or null for one this UI does not know (an older or newer server's). */
export function actionWords(action: string): string | null {
  return Object.hasOwn(AUDIT_ACTION_WORDS, action) ? (AUDIT_ACTION_WORDS[action] ?? null) : null;
}

/** Who acted, by the entry's `actorType`. */
export const ACTOR_WORDS: Record<string, string> = {
  user: 'User',
  anonymous: 'Not signed in',
  connect_link: 'Connect link',
  tenant_key: 'API key',
  platform_key: 'Platform key',
  portal: 'Portal session',
  mcp_grant: 'MCP client',
  cli: 'Command line',
  source: 'Source (incoming webhook)',
  system: 'hubgate',
};

/** What was acted on, by the entry's `targetType`. */
export const TARGET_WORDS: Record<string, string> = {
  api_key: 'API key',
  connection: 'Connection',
  connect_session: 'Connect link',
  session: 'Session',
  user: 'User',
  tenant: 'Organization',
  platform_key: 'Platform key',
  passkey: 'Passkey',
  event_type: 'Event type',
  source: 'Source',
  oauth_provider: 'OAuth2 provider',
  alert_channel: 'Alerting channel',
  alert_routing: 'Alert routing',
  portal_session: 'Portal session',
  mcp_grant: 'MCP client access',
};

/** How someone signed in (`method`). */
export const METHOD_WORDS: Record<string, string> = {
  password: 'with a password',
  passkey: 'with a passkey',
  sso: 'with single sign-on',
  invitation: 'with an invitation link',
};

/** Why a sign-in was refused (`reason` of `sign_in.failure`). */
export const SIGN_IN_REFUSAL_WORDS: Record<string, string> = {
  invalid_credentials: 'wrong e-mail address or password',
  password_sign_in_disabled: 'password sign-in is off for this account',
  invalid_invitation: 'the invitation link was used, expired or unknown',
  challenge: 'the passkey challenge had expired',
  unknown_credential: 'unknown passkey',
  user_handle: 'the passkey belongs to another account',
  verification: 'the passkey’s signature did not verify',
  counter: 'the passkey’s counter went back (a cloned authenticator?)',
  token: 'the Kerberos ticket did not verify',
  realm: 'a Kerberos realm hubgate does not accept',
  no_user: 'no user for that Kerberos principal',
};

/** Why a connection was paused (`reason` of `connection.pause`). */
export const PAUSE_WORDS: Record<string, string> = {
  manual: 'by hand',
  failing: 'by hubgate: its deliveries kept failing',
  gone: 'by hubgate: the receiver answered 410 Gone',
};

/** An OAuth2 provider's grant. */
export const GRANT_WORDS: Record<string, string> = {
  authorization_code: 'authorization code grant',
  client_credentials: 'client credentials grant',
};

// Words that read as capitals or a brand inside a field's name.
const WORD_OVERRIDES: Record<string, string> = {
  url: 'URL',
  urls: 'URLs',
  id: 'ID',
  ids: 'IDs',
  api: 'API',
  smtp: 'SMTP',
  oauth2: 'OAuth2',
  http: 'HTTP',
};

// Field names whose words are not their parts'.
const FIELD_OVERRIDES: Record<string, string> = {
  displayName: 'name',
  maxPerSecond: 'rate limit',
  eventTypes: 'event types',
  webhookUrl: 'Slack webhook URL',
  frameAncestors: 'sites that may frame the portal',
  brandingName: 'portal name',
  accentColor: 'accent colour',
};

/** A field's name in words: `apiBaseUrl` → "API base URL", `signing_secret` → "signing secret". */
export function fieldWords(name: string): string {
  const override = FIELD_OVERRIDES[name];
  if (override) return override;
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_]+/)
    .filter(Boolean)
    .map((word) => WORD_OVERRIDES[word.toLowerCase()] ?? word.toLowerCase())
    .join(' ');
}

/** A list of field names in words, joined as a sentence's list. */
export const fieldList = (names: readonly string[]): string => names.map(fieldWords).join(', ');
