// What the connect page reads from its address and keeps between its visits (docs/api/connect-links.md):
// the link's code from the fragment, the tenant from the path, the OAuth2 callback's return from the
// query, and what is kept in this tab while the person is at the provider. Pure, save `stored.ts`'s
// use of them; tested in test/ui/connect.test.ts.
import { ApiError } from '../common/api.js';
import type { Branding, ConnectCompletion, ConnectField } from '../common/routes.js';

/** `/connect/<tenantId>` (and anything under it): the connect page, which needs no session. */
export const isConnectPath = (path: string): boolean => path === '/connect' || path.startsWith('/connect/');

/** The tenant of `/connect/<tenantId>`, or null for a path without one. */
export function tenantIdOf(path: string): string | null {
  const segment = path.split('/')[2];
  if (!segment) return null;
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The code of `#code=…`: the fragment never reaches a server or a log. */
export function codeOf(hash: string): string | null {
  return /(?:^#|&)code=([A-Za-z0-9]+)/.exec(hash)?.[1] ?? null;
}

/** How the OAuth2 callback came back to the page, if it did: connected, or why not in words. */
export type CallbackReturn = { kind: 'completed' } | { kind: 'failed'; words: string };

export function callbackReturnOf(search: string): CallbackReturn | null {
  const query = new URLSearchParams(search);
  const failure = query.get('authorizationError');
  if (failure !== null) {
    return { kind: 'failed', words: failure.trim() || 'The provider did not grant access.' };
  }
  return query.get('status') === 'completed' ? { kind: 'completed' } : null;
}

/** What the page showed, kept for when it is shown again after the provider. */
export interface Shown {
  tenantName: string;
  connectorName: string;
  branding: Branding;
}

/**
 * What this tab keeps while the person is at the OAuth2 provider: the code (to try again), what was
 * sent with it (no credentials: an authorization-code connector takes its tokens from the provider),
 * and what the page showed.
 */
export interface StoredLink extends Shown {
  code: string;
  displayName?: string;
  config?: Record<string, unknown>;
}

/** One key per tenant: two links of two tenants open in one tab do not meet. */
export const storageKeyOf = (tenantId: string): string => `hubgate.connect.${tenantId}`;

const isText = (value: unknown): value is string => typeof value === 'string';
const isTextOrNull = (value: unknown) => value === null || isText(value);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function isStoredLink(value: unknown): value is StoredLink {
  if (!isObject(value) || !isObject(value.branding)) return false;
  const { branding } = value;
  return (
    isText(value.code) &&
    isText(value.tenantName) &&
    isText(value.connectorName) &&
    isTextOrNull(branding.name) &&
    isTextOrNull(branding.logoUrl) &&
    isTextOrNull(branding.accentColor) &&
    (value.displayName === undefined || isText(value.displayName)) &&
    (value.config === undefined || isObject(value.config))
  );
}

/** What was kept, if it is what this page keeps; anything else (an older page's, edited) is nothing. */
export function parseStored(text: string | null): StoredLink | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return isStoredLink(value) ? value : null;
  } catch {
    return null;
  }
}

/** An OAuth2 connector (`oauth2:<provider>`): its connection calls the provider's API through hubgate. */
export const isOAuthConnector = (connectorKey: string): boolean => connectorKey.startsWith('oauth2:');

/**
 * The fields this page offers: text, lists and choices. An object field (a payload filter, a
 * receiver's OAuth2 client) has no form here; the link's maker fixes it, or the tenant sets it later.
 * Of an OAuth2 connector's settings only the throttle applies (to calls through it), as the tenant
 * UI's forms say (ui/connections/status.tsx, `withApplicableFields`).
 */
export const offeredFields = (connectorKey: string, fields: ConnectField[]): ConnectField[] =>
  fields.filter(
    (field) =>
      field.type !== 'object' &&
      (!isOAuthConnector(connectorKey) || field.kind !== 'config' || field.name === 'maxPerSecond'),
  );

/** Credential values sent as typed, but for these, which are names and addresses, not secrets. */
const TRIMMED = new Set(['headerName', 'webhookUrl']);

/** A config field's text as the API takes it, or undefined to leave it out (fields.tsx's `valueOf`). */
export type ValueOf = (field: ConnectField, text: string) => unknown;

/**
 * The complete's body from what was typed in the `fields` offered: config values as `valueOf` makes them (lists split,
 * numbers as numbers), credentials as typed, empty optional fields left out. `credentials` is sent
 * whenever the connector has credential fields, empty or not, so that a generated one is made.
 */
export function completionOf(
  code: string,
  fields: ConnectField[],
  typed: { displayName: string; values: Record<string, string> },
  valueOf: ValueOf,
): ConnectCompletion {
  const { displayName, values } = typed;
  const config: Record<string, unknown> = {};
  const credentials: Record<string, string> = {};
  for (const field of fields) {
    const text = values[field.name] ?? '';
    if (field.kind === 'config') {
      const value = valueOf(field, text);
      if (value !== undefined) config[field.name] = value;
    } else if (text.trim() !== '' || field.required) {
      credentials[field.name] = TRIMMED.has(field.name) ? text.trim() : text;
    }
  }
  const name = displayName.trim();
  return {
    code,
    ...(name ? { displayName: name } : {}),
    ...(Object.keys(config).length > 0 ? { config } : {}),
    ...(fields.some((f) => f.kind === 'credentials') ? { credentials } : {}),
  };
}

/**
 * A refusal with its field errors named as the form names its fields: the complete names them as its
 * body holds them (`config.url`, `credentials.signingSecret`), the address policy by the field alone.
 */
export function onFormFields(error: ApiError): ApiError {
  const fieldErrors = error.fieldErrors.map((e) => ({
    ...e,
    path: e.path.replace(/^(config|credentials)\./, ''),
  }));
  return new ApiError(
    error.status,
    error.code,
    error.message,
    fieldErrors,
    error.requestId,
    error.retryAfterSeconds,
  );
}
