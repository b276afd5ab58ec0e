import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { fieldProblem } from '../../http/problem.js';
import { jsonHeaders } from '../../outbound/headers.js';
import { connectorConfig, eventJson, RECEIVER_URL, type ConnectorDefinition } from '../connector.js';
import { EventTypePatterns } from '../event-types.js';

const SECRET_PREFIX = 'whsec_';

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
        pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
        maxLength: 100,
        description: 'whsec_ + base64 of 24–64 bytes; leave out to have one generated',
      }),
    ),
  }),
  urlFields: ['url'],
  generated: { signingSecret: () => SECRET_PREFIX + randomBytes(32).toString('base64') },
  // Receivers need time to switch to a new secret: both signatures are sent meanwhile.
  rebindOverlapSeconds: 24 * 60 * 60,
  signingSecretField: 'signingSecret',
  acceptedEventTypes: ['*'],
  checkCredentials: ({ signingSecret }) => {
    if (signingSecret === undefined) return;
    const bytes = Buffer.from(signingSecret.slice(SECRET_PREFIX.length), 'base64').length;
    if (bytes < 24 || bytes > 64) throw fieldProblem('signingSecret', 'must encode 24 to 64 bytes');
  },
  render: (event, config) => ({
    method: 'POST',
    url: String(config.url),
    headers: jsonHeaders(),
    body: eventJson(event),
  }),
};

export default webhook;
