import { Type } from 'typebox';
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

// mqtt[s]://host[:port] with no user info (no `@` can be written into it: credentials are bound,
// never configured, contract §21) and no path: MQTT has nothing a path would name.
const BROKER_URL_PATTERN = brokerUrlPattern('mqtts?', '/?');

// A topic name a publish may use: no wildcards (`+`, `#` are for subscriptions, and a broker drops a
// client that publishes to one) and no NUL (MQTT 5 §4.7.3). `{type}` adds only [a-z0-9_.-].
const TOPIC_PATTERN = '^[^+#\\u0000]{1,200}$';

/** The broker URL as the event log shows it: never with credentials (it has none), no trailing slash. */
function shownUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.protocol}//${url.host}`;
}

/** MQTT 5 (Mosquitto, EMQX, HiveMQ…): each event a signed message, delivered on the broker's PUBACK or PUBCOMP. */
const mqtt: ConnectorDefinition = {
  key: 'mqtt',
  name: 'MQTT 5',
  description:
    'Publishes each event as a signed message to an MQTT 5 topic (QoS 1 or 2), delivered once the broker ' +
    'acknowledges it with a success reason code (PUBACK or PUBCOMP).',
  config: connectorConfig({
    url: Type.String({
      pattern: BROKER_URL_PATTERN,
      maxLength: 2048,
      description:
        'mqtts://host[:port] (mqtt:// only where the hub allows plaintext); no user or password: bind ' +
        'them as credentials. The port defaults to 8883 (mqtts) or 1883 (mqtt)',
    }),
    topic: Type.String({
      pattern: TOPIC_PATTERN,
      minLength: 1,
      maxLength: 200,
      description: 'the topic to publish to, without wildcards (+, #); {type} is replaced by the event type',
    }),
    qos: Type.Optional(
      Type.Union([Type.Literal(1), Type.Literal(2)], {
        default: 1,
        description:
          '1 (the default): delivered on PUBACK; 2: exactly once to the broker, delivered on PUBCOMP',
      }),
    ),
    eventTypes: Type.Optional(EventTypePatterns),
  }),
  credentials: brokerCredentials({
    username: brokerUser('the broker user'),
    password: brokerSecret("the broker user's password; secret"),
  }),
  // The user and password go to the broker: a new host unbinds them.
  ...brokerBinding('username', 'password'),
  brokerUrlFields: [{ field: 'url', plaintextSchemes: ['mqtt:'] }],
  broker: { signatureCarrier: 'MQTT 5 user property' },
  render: (event, config, credentials) => {
    const url = String(config.url);
    const topic = String(config.topic).replaceAll('{type}', event.type);
    const qos = config.qos === 2 ? '2' : '1';
    return {
      method: 'PUBLISH',
      destination: 'mqtt',
      url: `${shownUrl(url)} topic=${topic} qos=${qos}`,
      broker: brokerLogin(url, credentials),
      target: { topic, qos },
      message: { id: event.id, type: event.type },
      headers: { 'content-type': 'application/json' },
      body: eventJson(event),
    };
  },
};

export default mqtt;
