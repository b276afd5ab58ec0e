import { Type, type TObject, type TProperties } from 'typebox';
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
   * The config field whose URL receives the bound credentials themselves (the `http` connector's
   * header): when an edit changes that URL's host, the credentials are unbound (docs/api/connections.md), so a
   * secret is never sent to a host it was not given for.
   */
  credentialsSentTo?: string;
  /**
   * Credential fields hubgate makes when the body leaves them out (a webhook signing secret), with
   * their generators; generated values are returned once by the binding call.
   */
  generated?: Readonly<Record<string, () => string>>;
  /** How long a replaced secret stays valid after re-binding, in seconds (0: it stops at once). */
  rebindOverlapSeconds: number;
  /** Credential field whose values sign deliveries (Standard Webhooks), current and previous. */
  signingSecretField?: string;
  /** Event types the connector can carry at all (patterns); a connection narrows it with `eventTypes`. */
  acceptedEventTypes: readonly string[];
  /** Checks a schema cannot express; throws a 400 HttpProblem naming the field. */
  checkCredentials?: (credentials: Record<string, string>) => void;
  render(
    event: OutboundEvent,
    config: Record<string, unknown>,
    credentials: Record<string, string>,
  ): RenderedRequest;
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
