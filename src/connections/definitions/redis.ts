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

// redis[s]://host[:port][/db] with no user info: no `@` can be written into it, so no user or password
// (credentials are bound, never configured, contract §21). The path is a database number or nothing.
const BROKER_URL_PATTERN = brokerUrlPattern('rediss?', '(?:/(?:[0-9]{1,5})?)?');

/** The database a URL names: its path's number, or 0 (Redis's default) without one. */
function databaseOf(raw: string): number {
  const path = new URL(raw).pathname.slice(1);
  return path === '' ? 0 : Number(path);
}

/** The broker URL as the event log shows it: never with credentials (it has none), always with its database. */
function shownUrl(raw: string): string {
  const url = new URL(raw);
  return `${url.protocol}//${url.host}/${databaseOf(raw)}`;
}

/** Redis Streams: each event an entry of a stream (XADD), delivered once Redis answers its entry ID. */
const redis: ConnectorDefinition = {
  key: 'redis',
  name: 'Redis Streams',
  description:
    'Appends each event as a signed entry to a Redis stream (XADD), delivered once Redis answers the ' +
    "entry's ID.",
  config: connectorConfig({
    url: Type.String({
      pattern: BROKER_URL_PATTERN,
      maxLength: 2048,
      description:
        'rediss://host[:port][/db] (redis:// only where the hub allows plaintext); no user or password: ' +
        'bind them as credentials. No database is database 0',
    }),
    stream: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'the stream (key) the entries are appended to; made by the first entry',
    }),
    maxLen: Type.Optional(
      Type.Integer({
        minimum: 1000,
        maximum: 100_000_000,
        description:
          'keep about this many entries (XADD MAXLEN ~: Redis trims whole nodes, so a few more may stay); ' +
          'absent: never trimmed',
      }),
    ),
    eventTypes: Type.Optional(EventTypePatterns),
  }),
  credentials: brokerCredentials({
    username: brokerUser('the Redis ACL user (Redis 6+)'),
    password: brokerSecret(
      "the user's password, or without a username the default user's (requirepass); secret",
    ),
  }),
  // The user and password go to the broker: a new host unbinds them.
  ...brokerBinding('username', 'password'),
  brokerUrlFields: [{ field: 'url', plaintextSchemes: ['redis:'] }],
  broker: { signatureCarrier: 'Redis stream field' },
  checkCredentials: (credentials) => {
    // A user logs in with AUTH user password; without a password the client would not log in at all and
    // the connection would act as the default user, which is not who the tenant named.
    if (credentials.username !== undefined && credentials.password === undefined) {
      throw fieldProblem('password', 'is required with a username');
    }
  },
  render: (event, config, credentials) => {
    const url = String(config.url);
    const stream = String(config.stream);
    const maxLen = typeof config.maxLen === 'number' ? String(config.maxLen) : undefined;
    return {
      method: 'PUBLISH',
      destination: 'redis',
      url: `${shownUrl(url)} stream=${stream}${maxLen === undefined ? '' : ` maxLen~${maxLen}`}`,
      broker: brokerLogin(url, credentials),
      target: { stream, ...(maxLen === undefined ? {} : { maxLen }) },
      message: { id: event.id, type: event.type },
      headers: { 'content-type': 'application/json' },
      body: eventJson(event),
    };
  },
};

export default redis;
