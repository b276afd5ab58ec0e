import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { jsonHeaders } from '../../outbound/headers.js';
import {
  clientCredentialsOf,
  connectorConfig,
  eventJson,
  OAUTH2_TOKEN_URL_FIELD,
  OAuth2ClientCredentialsField,
  RECEIVER_URL,
  type ConnectorDefinition,
} from '../connector.js';
import { EventTypePatterns } from '../event-types.js';

const SECRET_PREFIX = 'whsec_';

// The signing secret: whsec_ and the base64 (padded, as Standard Webhooks tools write it) of 24 to
// 64 bytes, as a pattern, so that the schema, and with it the OpenAPI document, states the whole rule.
// Each group of 4 characters holds 3 bytes: 8 to 21 groups are 24 to 63 bytes; a last group `xx==`
// adds 1 byte (25 to 64), `xxx=` adds 2 (26 to 62, hence at most 20 groups before it).
const B64 = '[A-Za-z0-9+/]';
const SIGNING_SECRET_PATTERN = `^${SECRET_PREFIX}(?:(?:${B64}{4}){8,21}(?:${B64}{2}==)?|(?:${B64}{4}){8,20}${B64}{3}=)$`;

/** Standard Webhooks: the event JSON, signed by delivery with the signing secret(s). */
const webhook: ConnectorDefinition = {
  key: 'webhook',
  name: 'Webhook',
  description: 'Signed HTTPS POST of each event (Standard Webhooks), to any endpoint you run.',
  config: connectorConfig({
    url: RECEIVER_URL,
    eventTypes: Type.Optional(EventTypePatterns),
  }),
  credentials: Type.Object({
    signingSecret: Type.Optional(
      Type.String({
        pattern: SIGNING_SECRET_PATTERN,
        maxLength: 100,
        description: 'whsec_ + base64 (padded) of 24–64 bytes; leave out to have one generated',
      }),
    ),
    oauth2ClientCredentials: OAuth2ClientCredentialsField,
  }),
  urlFields: ['url', OAUTH2_TOKEN_URL_FIELD],
  // The signing secret is never sent, but a bearer token from oauth2ClientCredentials goes to the URL.
  credentialsSentTo: (credentials) => (clientCredentialsOf(credentials) ? 'url' : undefined),
  generated: { signingSecret: () => SECRET_PREFIX + randomBytes(32).toString('base64') },
  // Receivers need time to switch to a new secret: both signatures are sent meanwhile.
  rebindOverlapSeconds: 24 * 60 * 60,
  signingSecretField: 'signingSecret',
  acceptedEventTypes: ['*'],
  render: (event, config, credentials) => {
    const clientCredentials = clientCredentialsOf(credentials);
    return {
      method: 'POST',
      url: String(config.url),
      headers: jsonHeaders(),
      body: eventJson(event),
      ...(clientCredentials ? { clientCredentials } : {}),
    };
  },
};

export default webhook;
