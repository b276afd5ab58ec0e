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

// nats://host[:port] or tls://host[:port] with no user info and no path: there is no room for a user,
// password or token in it (credentials are bound, never configured, contract §21).
const BROKER_URL_PATTERN = brokerUrlPattern('(?:nats|tls)', '/?');

// A subject to publish to: tokens separated by dots, none empty, no whitespace and no wildcard (`*`,
// `>`); `{type}` is a token's text like any other until the event type replaces it.
const SUBJECT_PATTERN = '^[^\\s.*>]+(?:\\.[^\\s.*>]+)*$';

/** The broker URL as the event log shows it: scheme, host and port (it holds no credentials). */
function shownUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.protocol}//${url.host}`;
}

/** NATS JetStream: each event a signed message on a subject, delivered once a stream acknowledges it. */
const nats: ConnectorDefinition = {
  key: 'nats',
  name: 'NATS JetStream',
  description:
    'Publishes each event as a signed message on a NATS subject, delivered once a JetStream stream ' +
    'acknowledges it (PubAck); the event ID is the Nats-Msg-Id, so a retry is de-duplicated.',
  config: connectorConfig({
    url: Type.String({
      pattern: BROKER_URL_PATTERN,
      maxLength: 2048,
      description:
        'tls://host[:port] (nats:// only where the hub allows plaintext); the port defaults to 4222. No ' +
        'user, password or token: bind them as credentials',
    }),
    subject: Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: SUBJECT_PATTERN,
      description:
        'the subject to publish on (no wildcards); {type} is replaced by the event type. A JetStream ' +
        'stream must take it',
    }),
    eventTypes: Type.Optional(EventTypePatterns),
  }),
  credentials: brokerCredentials({
    username: brokerUser('the NATS user'),
    password: brokerSecret("the NATS user's password; secret"),
    token: brokerSecret('a NATS authentication token, instead of a user and password; secret'),
  }),
  // The login goes to the broker: a new host unbinds it.
  ...brokerBinding('username', 'password', 'token'),
  brokerUrlFields: [{ field: 'url', plaintextSchemes: ['nats:'] }],
  broker: { signatureCarrier: 'NATS header' },
  checkCredentials: (credentials) => {
    if (credentials.password !== undefined && credentials.username === undefined) {
      throw fieldProblem('username', 'is required with a password');
    }
    if (credentials.token !== undefined && credentials.username !== undefined) {
      throw fieldProblem('token', 'is bound instead of a username and password, not with them');
    }
  },
  render: (event, config, credentials) => {
    const url = String(config.url);
    const subject = String(config.subject).replaceAll('{type}', event.type);
    const { token } = credentials;
    return {
      method: 'PUBLISH',
      destination: 'nats',
      url: `${shownUrl(url)} subject=${subject}`,
      broker: { ...brokerLogin(url, credentials), ...(token === undefined ? {} : { token }) },
      target: { subject },
      message: { id: event.id, type: event.type },
      // JetStream de-duplicates by Nats-Msg-Id within the stream's window: a retry of a publish whose
      // PubAck was lost is stored once.
      headers: { 'content-type': 'application/json', 'Nats-Msg-Id': event.id },
      body: eventJson(event),
    };
  },
};

export default nats;
