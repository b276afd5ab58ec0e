import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { fieldProblem } from '../../http/problem.js';
import { connectorConfig, eventJson, type ConnectorDefinition } from '../connector.js';
import { EventTypePatterns } from '../event-types.js';

const SECRET_PREFIX = 'whsec_';
// The webhook connector's rule for a signing secret (webhook.ts): whsec_ and the padded base64 of 24–64 bytes.
const B64 = '[A-Za-z0-9+/]';
const SIGNING_SECRET_PATTERN = `^${SECRET_PREFIX}(?:(?:${B64}{4}){8,21}(?:${B64}{2}==)?|(?:${B64}{4}){8,20}${B64}{3}=)$`;

// amqp[s]://host[:port][/vhost] with no user info: no `@` before the path, so no user or password can
// be written into it (credentials are bound, never configured, contract §21).
const BROKER_URL_PATTERN =
  '^amqps?://(?:[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?(?:/[^\\s/?#@]*)?$';

/** The broker URL as the event log shows it: never with credentials (it has none), always with a path. */
function shownUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.protocol}//${url.host}${url.pathname || '/'}`;
}

/** RabbitMQ (AMQP 0-9-1): each event a persistent message, delivered once the broker confirms it. */
const amqp: ConnectorDefinition = {
  key: 'amqp',
  name: 'RabbitMQ (AMQP)',
  description:
    'Publishes each event as a signed, persistent message to a RabbitMQ exchange (AMQP 0-9-1), delivered ' +
    'once the broker confirms it.',
  config: connectorConfig({
    url: Type.String({
      pattern: BROKER_URL_PATTERN,
      maxLength: 2048,
      description:
        'amqps://host[:port][/vhost] (amqp:// only where the hub allows plaintext); no user or password: ' +
        'bind them as credentials. No vhost or "/" is the default vhost',
    }),
    exchange: Type.Optional(
      Type.String({
        maxLength: 255,
        default: '',
        description: 'the exchange to publish to; "" (the default) is the default exchange',
      }),
    ),
    routingKey: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'the routing key; {type} is replaced by the event type',
    }),
    eventTypes: Type.Optional(EventTypePatterns),
  }),
  credentials: Type.Object({
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'the broker user' })),
    password: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: "the broker user's password; secret" }),
    ),
    signingSecret: Type.Optional(
      Type.String({
        pattern: SIGNING_SECRET_PATTERN,
        maxLength: 100,
        description: 'whsec_ + base64 (padded) of 24–64 bytes; leave out to have one generated',
      }),
    ),
  }),
  // §8 is applied to the broker's address at every connect (amqp-destination.ts), not by URL rules
  // made for http(s).
  urlFields: [],
  // The user and password go to the broker: a new host unbinds them.
  credentialsSentTo: (credentials) => (credentials.username || credentials.password ? 'url' : undefined),
  generated: { signingSecret: () => SECRET_PREFIX + randomBytes(32).toString('base64') },
  rebindOverlapSeconds: 24 * 60 * 60,
  signingSecretField: 'signingSecret',
  acceptedEventTypes: ['*'],
  checkCredentials: (credentials) => {
    if (credentials.password !== undefined && credentials.username === undefined) {
      throw fieldProblem('username', 'is required with a password');
    }
  },
  render: (event, config, credentials) => {
    const url = String(config.url);
    const exchange = typeof config.exchange === 'string' ? config.exchange : '';
    const routingKey = String(config.routingKey).replaceAll('{type}', event.type);
    const { username, password } = credentials;
    return {
      method: 'PUBLISH',
      destination: 'amqp',
      url: `${shownUrl(url)} exchange=${exchange === '' ? '""' : exchange} routingKey=${routingKey}`,
      broker: {
        url,
        ...(username === undefined ? {} : { username }),
        ...(password === undefined ? {} : { password }),
      },
      target: { exchange, routingKey },
      message: { id: event.id, type: event.type },
      headers: { 'content-type': 'application/json' },
      body: eventJson(event),
    };
  },
};

export default amqp;
