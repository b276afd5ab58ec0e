import { randomBytes } from 'node:crypto';
import { Type, type TObject } from 'typebox';
import type { ChannelKind } from '../../db/schema.js';
import { HEADER_NAME_PATTERN, HEADER_VALUE_PATTERN } from '../../outbound/headers.js';

export { CHANNEL_KINDS, type ChannelKind } from '../../db/schema.js';

/**
 * One channel kind, whole: the fields of its `config` (secret and not), which of them are secret
 * (write-only, stored sealed), which hubgate generates, and which hold destinations that must pass
 * the SSRF policy (docs/api/connections.md) when configured and again at every send.
 */
export interface ChannelKindDefinition {
  kind: ChannelKind;
  /** Every field of `config`, as a channel holds it once created (PATCH merges, then checks this). */
  config: TObject;
  secretFields: readonly string[];
  /** Fields hubgate makes at creation; never accepted from a body, returned once by the create call. */
  generated?: Readonly<Record<string, () => string>>;
  /** Fields holding URLs. */
  urlFields: readonly string[];
  /** Field holding a bare host name or address (EMAIL's SMTP server). */
  hostField?: string;
  /**
   * The secrets that go to a destination, by the field naming it: a PATCH that changes the
   * destination while one of them is stored must give it again (or remove it), so that a stored
   * secret is never sent to a host it was not given for (docs/operators/alerting.md). WEBHOOK and
   * SLACK have none: their URL is itself the secret, and the WEBHOOK signing secret signs but is
   * never sent.
   */
  destinationSecrets?: Readonly<Record<string, readonly string[]>>;
}

// Values that end up in an SMTP command: no line breaks or other control characters, refused when
// configured rather than failing every send. Header values take HEADER_VALUE_PATTERN instead: what
// the HTTP client will send (Latin-1 at most).
const SINGLE_LINE = '^[^\\u0000-\\u0008\\u000a-\\u001f\\u007f]*$';

const Url = (description: string) =>
  Type.String({ format: 'uri', minLength: 1, maxLength: 2048, description });
const Host = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern: '^[A-Za-z0-9.:\\[\\]-]+$',
  description: 'host name or IP address of the SMTP server',
});

export const CHANNEL_KIND_DEFINITIONS: Readonly<Record<ChannelKind, ChannelKindDefinition>> = {
  EMAIL: {
    kind: 'EMAIL',
    config: Type.Object({
      to: Type.Array(Type.String({ format: 'email', maxLength: 254 }), {
        minItems: 1,
        maxItems: 20,
        uniqueItems: true,
      }),
      from: Type.String({ format: 'email', maxLength: 254 }),
      smtpHost: Host,
      smtpPort: Type.Integer({ minimum: 1, maximum: 65535 }),
      smtpUser: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 254,
          pattern: SINGLE_LINE,
          description: 'SMTP user name; `from` when left out',
        }),
      ),
      smtpPassword: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
    }),
    secretFields: ['smtpPassword'],
    urlFields: [],
    hostField: 'smtpHost',
    destinationSecrets: { smtpHost: ['smtpPassword'] },
  },
  WEBHOOK: {
    kind: 'WEBHOOK',
    config: Type.Object({
      url: Url('https URL that receives signed Alertmanager-style notifications'),
      signingSecret: Type.String({ description: 'generated; returned once by the create call' }),
    }),
    secretFields: ['url', 'signingSecret'],
    generated: { signingSecret: () => `whsec_${randomBytes(32).toString('base64')}` },
    urlFields: ['url'],
  },
  SLACK: {
    kind: 'SLACK',
    config: Type.Object({ webhookUrl: Url('Slack incoming-webhook URL') }),
    secretFields: ['webhookUrl'],
    urlFields: ['webhookUrl'],
  },
  GRAFANA: {
    kind: 'GRAFANA',
    config: Type.Object({
      baseUrl: Url('Grafana base URL; annotations are posted to {baseUrl}/api/annotations'),
      tags: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 }),
      serviceAccountToken: Type.String({ minLength: 1, maxLength: 1024, pattern: HEADER_VALUE_PATTERN }),
    }),
    secretFields: ['serviceAccountToken'],
    urlFields: ['baseUrl'],
    destinationSecrets: { baseUrl: ['serviceAccountToken'] },
  },
  HTTP: {
    kind: 'HTTP',
    config: Type.Object({
      url: Url('URL that receives the notification'),
      method: Type.Optional(
        Type.Union([Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('PATCH')], {
          description: 'POST when left out',
        }),
      ),
      headers: Type.Optional(
        Type.Record(
          Type.String({ pattern: HEADER_NAME_PATTERN }),
          Type.String({ maxLength: 4096, pattern: HEADER_VALUE_PATTERN }),
          { maxProperties: 20, additionalProperties: false },
        ),
      ),
    }),
    secretFields: ['url', 'headers'],
    urlFields: ['url'],
    destinationSecrets: { url: ['headers'] },
  },
};
