import type { Kysely } from 'kysely';
import { Type, type TObject, type TProperties } from 'typebox';
import type { TenantScope } from '../access/scope.js';
import type { DB } from '../db/schema.js';
import type { ClientCredentialsGrant } from '../outbound/request.js';
import { FilterField } from './filter.js';

/** An event as it leaves hubgate (docs/api/events.md). */
export interface OutboundEvent {
  id: string;
  type: string;
  /** RFC 3339. */
  timestamp: string;
  data: Record<string, unknown>;
}

/** The HTTP request a connector makes of an event; delivery adds signatures, timeouts and pinning. */
export interface RenderedRequest {
  method: 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body: string;
  /** A receiver behind OAuth2: the sender adds `Authorization: Bearer` with a token from here. */
  clientCredentials?: ClientCredentialsGrant;
}

/**
 * The kinds of message broker a delivery can go to (contract §21): each has one destination in
 * delivery/ that publishes a `RenderedPublish` of its kind (docs/decisions/0080).
 */
export type BrokerKind = 'amqp' | 'mqtt' | 'nats' | 'redis';

/**
 * A message a broker connector makes of an event: published by the destination of its `destination`
 * kind, with `headers` as the message's headers (delivery adds the signature headers to them).
 */
export interface RenderedPublish {
  method: 'PUBLISH';
  destination: BrokerKind;
  /** Where it goes, as the event log shows it: the broker URL (no credentials) and the target. */
  url: string;
  /** The broker to connect to and how to log in; the password is secret. */
  broker: { url: string; username?: string; password?: string; token?: string };
  /** Where on the broker, in the broker's own terms (AMQP: `exchange`, `routingKey`). */
  target: Record<string, string>;
  /** The message's own ID and type, where the broker has properties for them (AMQP `message_id`, `type`). */
  message: { id: string; type: string };
  headers: Record<string, string>;
  body: string;
}

/** What a connector makes of an event: an HTTP request, or a message to a broker. */
export type RenderedDelivery = RenderedRequest | RenderedPublish;

/** Tokens a connection starts bound with, and what its `authorization` shows of them. */
export interface InitialAuthorization {
  /** Sealed as the connection's credentials. */
  credentials: Record<string, unknown>;
  scopes: string[];
  expiresAt: Date | null;
}

/**
 * One connector of the catalog, whole: what a connection of it is configured with, which secrets
 * it is bound to, and how an event is sent to it. A definition is one file in `definitions/`;
 * nothing else in hubgate names a connector.
 */
export interface ConnectorDefinition {
  key: string;
  name: string;
  description: string;
  /** Non-secret fields of the create body (beside connectorKey and displayName), returned as `config`. */
  config: TObject;
  /** Secret fields of `PUT …/credentials`; stored encrypted and never returned. */
  credentials: TObject;
  /** Fields, of either object, holding URLs that must pass the SSRF policy (docs/api/connections.md). */
  urlFields: readonly string[];
  /**
   * Config fields holding a broker's URL (contract §21), with the schemes that carry no TLS: checked
   * when a connection is created or edited (`checkBrokerUrl`), and again by the destination at every
   * connect on the resolved address.
   */
  brokerUrlFields?: readonly { field: string; plaintextSchemes: readonly string[] }[];
  /**
   * The config field whose URL receives the bound credentials themselves (the `http` connector's
   * header): when an edit changes that URL's host, the credentials are unbound (docs/api/connections.md), so a
   * secret is never sent to a host it was not given for. A function when that depends on what is
   * bound: a webhook sends a bearer token to its URL only with `oauth2ClientCredentials`.
   */
  credentialsSentTo?: string | ((credentials: Record<string, unknown>) => string | undefined);
  /**
   * Credential fields hubgate makes when the body leaves them out (a webhook signing secret), with
   * their generators; generated values are returned once by the binding call.
   */
  generated?: Readonly<Record<string, () => string>>;
  /** How long a replaced secret stays valid after re-binding, in seconds (0: it stops at once). */
  rebindOverlapSeconds: number;
  /** Credential field whose values sign deliveries (Standard Webhooks), current and previous. */
  signingSecretField?: string;
  /**
   * A message broker connector (contract §21): its connections deliver to a broker, and
   * `signatureCarrier` names, in words, where each message carries `webhook-signature` for a consumer to
   * verify (`AMQP header`, `MQTT 5 user property`…). The catalog lists it, so the UI words a broker's
   * connection (its URL, its signing secret, its failures) from this rather than from its key.
   */
  broker?: { signatureCarrier: string };
  /** Event types the connector can carry at all (patterns); a connection narrows it with `eventTypes`. */
  acceptedEventTypes: readonly string[];
  /**
   * Connections of it carry an authorization (OAuth2, docs/api/oauth.md): shown as `authorization`,
   * `none` until tokens are bound. `bindOnCreate` fetches them when the connection is created
   * (client credentials): a connection that cannot get them is not created.
   */
  authorization?: {
    grant: 'authorization_code' | 'client_credentials';
    bindOnCreate?: (connectionId: string) => Promise<InitialAuthorization>;
    /**
     * Stores the new connection's authorization in the caller's transaction, after its row: `none`,
     * or what `bindOnCreate` got. The authorization is a table of the connector's domain (oauth/,
     * above connections/), so the create calls this rather than writing it (decision 0070).
     */
    insert: (
      trx: Kysely<DB>,
      scope: TenantScope,
      connectionId: string,
      initial: InitialAuthorization | undefined,
    ) => Promise<void>;
    /**
     * Locks what the connector stands for (its provider's row) for share in the caller's transaction,
     * and says whether it still exists: the connection's insert then either waits for a delete of it
     * (and sees it gone) or is seen by that delete, which refuses while a connection uses it.
     */
    holdForInsert: (trx: Kysely<DB>) => Promise<boolean>;
  };
  /** Checks a schema cannot express; throws a 400 HttpProblem naming the field. */
  checkCredentials?: (credentials: Record<string, string>) => void;
  render(
    event: OutboundEvent,
    config: Record<string, unknown>,
    credentials: Record<string, string>,
  ): RenderedDelivery;
}

/**
 * Config fields every connector takes, beside its own (docs/api/connections.md): the throttle. A definition's
 * `config` is made with `connectorConfig`, so the catalog, the create and edit bodies and the
 * OpenAPI document all show them.
 */
export const COMMON_CONFIG = {
  filter: FilterField,
  maxPerSecond: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()], {
      description:
        'attempts started per second at most, across every process (1–1000); null or absent: unlimited. ' +
        'Deliveries over it wait; they are not failed.',
    }),
  ),
  ordering: Type.Optional(
    Type.Union([Type.Literal('none'), Type.Literal('per-key')], {
      description:
        'per-key: deliveries of events with the same orderingKey are attempted one at a time, in publish ' +
        'order; none (the default): not ordered.',
    }),
  ),
};

export const connectorConfig = <T extends TProperties>(fields: T) =>
  Type.Object({ ...fields, ...COMMON_CONFIG });

/** Building blocks the definitions share. */
export const UrlField = (description: string) =>
  Type.String({ format: 'uri', minLength: 1, maxLength: 2048, description });
export const RECEIVER_URL = UrlField('https URL that receives events');

/** The event as webhook and HTTP receivers get it (docs/api/events.md). */
export const eventJson = (event: OutboundEvent): string =>
  JSON.stringify({ id: event.id, type: event.type, timestamp: event.timestamp, data: event.data });

/**
 * A receiver behind OAuth2 (the `webhook` and `http` connectors, docs/api/connections.md): deliveries
 * carry `Authorization: Bearer` with a token from `tokenUrl` (client credentials, the client
 * authenticated with HTTP Basic). Secret as a whole, like every credential field.
 */
export const OAuth2ClientCredentialsField = Type.Optional(
  Type.Object(
    {
      tokenUrl: UrlField('the token endpoint (https); passes the SSRF policy'),
      clientId: Type.String({ minLength: 1, maxLength: 500 }),
      clientSecret: Type.String({ minLength: 1, maxLength: 2000 }),
      scope: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 1000,
          pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+( [\\x21\\x23-\\x5b\\x5d-\\x7e]+)*$',
        }),
      ),
    },
    {
      additionalProperties: false,
      description:
        'a receiver behind OAuth2: {tokenUrl, clientId, clientSecret, scope?}; deliveries carry a bearer ' +
        'token from tokenUrl (client credentials grant)',
    },
  ),
);
export const OAUTH2_TOKEN_URL_FIELD = 'oauth2ClientCredentials.tokenUrl';

/** The credentials' client credentials grant, when they have one (a render adds it to the request). */
export function clientCredentialsOf(
  credentials: Record<string, unknown>,
): ClientCredentialsGrant | undefined {
  const grant = credentials.oauth2ClientCredentials;
  if (grant === null || typeof grant !== 'object') return undefined;
  const { tokenUrl, clientId, clientSecret, scope } = grant as Record<string, unknown>;
  if (typeof tokenUrl !== 'string' || typeof clientId !== 'string' || typeof clientSecret !== 'string') {
    return undefined;
  }
  return { tokenUrl, clientId, clientSecret, ...(typeof scope === 'string' ? { scope } : {}) };
}
