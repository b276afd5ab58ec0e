import type { ConnectorCatalog } from '../connections/catalog.js';
import type { ConnectorDefinition, OutboundEvent, RenderedDelivery } from '../connections/connector.js';
import type { Keyring } from '../crypto/keyring.js';
import { TRACEPARENT_HEADER } from '../outbound/headers.js';
import { REDACTED } from '../outbound/redact.js';
import { signatureHeaders } from '../outbound/signing.js';
import { lostClaim, type ClaimedRow } from './claim.js';

/** What to do with a claimed delivery, decided from the row alone (no decryption yet). */
export type Triage =
  /** Retaken from an expired claim: record that lost attempt, send nothing now (see record.ts). */
  | { kind: 'interrupted'; claimedAt: Date; claimEnded: Date }
  /** The connection was disabled, or its connector switched off since the publish. */
  | { kind: 'cancelled' }
  /**
   * The connection is paused, or its credentials were unbound (a new host, docs/api/connections.md):
   * the delivery waits as `skipped` for a resume with replay or a recover.
   */
  | { kind: 'skipped' }
  | { kind: 'send'; definition: ConnectorDefinition; credentialsSealed: string };

export function triage(row: ClaimedRow, catalog: Pick<ConnectorCatalog, 'get'>): Triage {
  const lost = lostClaim(row);
  if (lost) return { kind: 'interrupted', ...lost };
  const definition = catalog.get(row.connector_key);
  if (row.connection_status === 'paused') return { kind: 'skipped' };
  if (row.connection_status !== 'active' || !definition) return { kind: 'cancelled' };
  if (!row.credentials_sealed) return { kind: 'skipped' };
  return { kind: 'send', definition, credentialsSealed: row.credentials_sealed };
}

/**
 * Whether the credentials replaced by the last re-binding still sign (the rotation overlap): a
 * receiver that has not switched to the new secret yet still accepts the request.
 */
export function previousSecretValid(
  row: ClaimedRow,
  now: Date,
): row is ClaimedRow & {
  previous_credentials_sealed: string;
} {
  return Boolean(
    row.previous_credentials_sealed && row.previous_valid_until && new Date(row.previous_valid_until) > now,
  );
}

/** What an attempt sent, as the event log shows it (docs/api/events.md): no credential in it. */
export interface RequestRecord {
  method: string;
  url: string;
  headers: Record<string, string>;
}

/** A delivery ready to send: its connector's request (or broker message), signed, and when the attempt started. */
export interface PreparedRequest {
  startedAt: Date;
  /** The connection it goes to: a broker destination keeps one session per connection (decision 0080). */
  connectionId: string;
  request: RenderedDelivery;
  /** The request as the log keeps it. */
  record: RequestRecord;
  /** The connection's secrets, which the answer the log keeps must not show (`boundSecrets`). */
  secrets: string[];
}

// Credential fields that name or locate, not authenticate: the `http` connector's header name, the
// token URL, client ID and scope of `oauth2ClientCredentials`, and a broker's user name. Hiding them would hide ordinary
// words of a log (a header name, the client's name) and protect nothing.
const NOT_SECRET = new Set(['headerName', 'tokenUrl', 'clientId', 'scope', 'username']);

/**
 * The secret values of a connection's credentials (docs/api/events.md, Inspection): every string,
 * nested ones included (`oauth2ClientCredentials.clientSecret`), but those that are not secret.
 * The one list both redactions use: the request record's and the answer's (outbound/redact.ts).
 */
export function boundSecrets(...credentials: ReadonlyArray<Record<string, unknown>>): string[] {
  const found = new Set<string>();
  const collect = (value: unknown, field?: string): void => {
    if (field !== undefined && NOT_SECRET.has(field)) return;
    if (typeof value === 'string') {
      if (value.length > 0) found.add(value);
    } else if (value !== null && typeof value === 'object') {
      for (const [name, nested] of Object.entries(value)) collect(nested, name);
    }
  };
  for (const each of credentials) collect(each);
  return [...found];
}

/**
 * The request as the log keeps it: a header that carries a credential of the connection (the
 * `http` connector's header, a token a credential was made into) shows `[redacted]` instead of its
 * value. Signatures are not secrets: they are what the receiver checks, and show what was signed.
 */
export function requestRecord(request: RenderedDelivery, secrets: readonly string[]): RequestRecord {
  const carriesSecret = (text: string) => secrets.some((secret) => text.includes(secret));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    headers[name] = carriesSecret(value) ? REDACTED : value;
  }
  return { method: request.method, url: redactedUrl(request.url, carriesSecret), headers };
}

/**
 * The URL as the log shows it: where a credential is the URL itself (Slack's webhook URL), only its
 * origin is shown, so the log says where the request went without handing out the secret path.
 */
function redactedUrl(url: string, carriesSecret: (text: string) => boolean): string {
  if (!carriesSecret(url)) return url;
  try {
    return `${new URL(url).origin}/${REDACTED}`;
  } catch {
    return REDACTED;
  }
}

type Opener = Pick<Keyring, 'open'>;

function openCredentials(keyring: Opener, sealed: string, connectionId: string): Record<string, string> {
  return JSON.parse(keyring.open('connection-credentials', sealed, connectionId)) as Record<string, string>;
}

/** The credentials the last re-binding replaced, while they still sign (`previousSecretValid`); else none. */
function previousCredentials(keyring: Opener, row: ClaimedRow, now: Date): Array<Record<string, string>> {
  if (!previousSecretValid(row, now)) return [];
  return [openCredentials(keyring, row.previous_credentials_sealed, row.connection_id)];
}

/** Standard Webhooks signature headers with the current secret, and the previous one in its overlap. */
function sign(
  row: ClaimedRow,
  field: string,
  credentials: ReadonlyArray<Record<string, string>>,
  body: string,
  now: Date,
): Record<string, string> {
  const secrets = credentials.map((each) => each[field]);
  return signatureHeaders(
    row.event_id,
    body,
    secrets.filter((s): s is string => Boolean(s)),
    now,
  );
}

/** The event as it leaves hubgate (docs/api/events.md), its data decrypted. */
export function openEvent(
  keyring: Opener,
  event: { id: string; type: string; createdAt: Date | string; payloadSealed: string },
): OutboundEvent {
  const data = JSON.parse(keyring.open('event-payload', event.payloadSealed, event.id)) as Record<
    string,
    unknown
  >;
  return { id: event.id, type: event.type, timestamp: new Date(event.createdAt).toISOString(), data };
}

/** The connection's bound credentials, decrypted; none when unbound. */
export function openBoundCredentials(
  keyring: Opener,
  sealed: string | null,
  connectionId: string,
): Record<string, string> {
  return sealed ? openCredentials(keyring, sealed, connectionId) : {};
}

/**
 * Decrypts the credentials and the payload, renders the connector's request and signs it. Throws
 * on a payload or credentials that do not open (a bug or a lost key, not an outage): the caller
 * logs it and leaves the claim to run out.
 */
export function prepare(
  row: ClaimedRow,
  send: Extract<Triage, { kind: 'send' }>,
  keyring: Opener,
  now: Date,
  // The W3C trace context every delivery carries (docs/operators/telemetry.md): the attempt span's.
  traceparent?: string,
): PreparedRequest {
  const { definition } = send;
  const credentials = openCredentials(keyring, send.credentialsSealed, row.connection_id);
  const event = openEvent(keyring, {
    id: row.event_id,
    type: row.type,
    createdAt: row.event_created_at,
    payloadSealed: row.payload_sealed,
  });
  const request = definition.render(event, row.config, credentials);
  const previous = previousCredentials(keyring, row, now);
  if (definition.signingSecretField) {
    const field = definition.signingSecretField;
    Object.assign(request.headers, sign(row, field, [credentials, ...previous], request.body, now));
  }
  if (traceparent !== undefined) request.headers[TRACEPARENT_HEADER] = traceparent;
  // The previous credentials too, while they sign: a receiver may echo the secret it checked with.
  const secrets = boundSecrets(credentials, ...previous);
  return {
    startedAt: now,
    connectionId: row.connection_id,
    request,
    record: requestRecord(request, secrets),
    secrets,
  };
}
