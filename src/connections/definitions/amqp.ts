import { Type } from 'typebox';
import { fieldProblem } from '../../http/problem.js';
import {
  brokerBinding,
  brokerCredentials,
  brokerLogin,
  brokerSecret,
  brokerUrlPattern,
  brokerUser,
} from '../broker-fields.js';
import { connectorConfig, eventJson, type ConnectorDefinition } from '../connector.js';
import { EventTypePatterns } from '../event-types.js';

// amqp[s]://host[:port][/vhost] with no user info: no `@` before the path, so no user or password can
// be written into it (credentials are bound, never configured, contract §21).
const BROKER_URL_PATTERN = brokerUrlPattern('amqps?', '(?:/[^\\s/?#@]*)?');

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
  credentials: brokerCredentials({
    username: brokerUser('the broker user'),
    password: brokerSecret("the broker user's password; secret"),
  }),
  // The user and password go to the broker: a new host unbinds them.
  ...brokerBinding('username', 'password'),
  brokerUrlFields: [{ field: 'url', plaintextSchemes: ['amqp:'] }],
  broker: { signatureCarrier: 'AMQP header' },
  checkCredentials: (credentials) => {
    if (credentials.password !== undefined && credentials.username === undefined) {
      throw fieldProblem('username', 'is required with a password');
    }
  },
  render: (event, config, credentials) => {
    const url = String(config.url);
    const exchange = typeof config.exchange === 'string' ? config.exchange : '';
    const routingKey = String(config.routingKey).replaceAll('{type}', event.type);
    return {
      method: 'PUBLISH',
      destination: 'amqp',
      url: `${shownUrl(url)} exchange=${exchange === '' ? '""' : exchange} routingKey=${routingKey}`,
      broker: brokerLogin(url, credentials),
      target: { exchange, routingKey },
      message: { id: event.id, type: event.type },
      headers: { 'content-type': 'application/json' },
      body: eventJson(event),
    };
  },
};

export default amqp;
