import { randomBytes } from 'node:crypto';
import { Type } from 'typebox';
import { fieldProblem } from '../../http/problem.js';
import { connectorConfig, eventJson, type ConnectorDefinition } from '../connector.js';
import { EventTypePatterns } from '../event-types.js';

const SECRET_PREFIX = 'whsec_';
// The webhook connector's rule for a signing secret (webhook.ts): whsec_ and the padded base64 of 24–64 bytes.
const B64 = '[A-Za-z0-9+/]';
const SIGNING_SECRET_PATTERN = `^${SECRET_PREFIX}(?:(?:${B64}{4}){8,21}(?:${B64}{2}==)?|(?:${B64}{4}){8,20}${B64}{3}=)$`;

// redis[s]://host[:port][/db] with no user info: no `@` can be written into it, so no user or password
// (credentials are bound, never configured, contract §21). The path is a database number or nothing.
const BROKER_URL_PATTERN =
  '^rediss?://(?:[A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(?::[0-9]{1,5})?(?:/(?:[0-9]{1,5})?)?$';

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
  credentials: Type.Object({
    username: Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, description: 'the Redis ACL user (Redis 6+)' }),
    ),
    password: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: "the user's password, or without a username the default user's (requirepass); secret",
      }),
    ),
    signingSecret: Type.Optional(
      Type.String({
        pattern: SIGNING_SECRET_PATTERN,
        maxLength: 100,
        description: 'whsec_ + base64 (padded) of 24–64 bytes; leave out to have one generated',
      }),
    ),
  }),
  // §8 is applied to the broker's address at every connect (redis-destination.ts), not by URL rules
  // made for http(s).
  urlFields: [],
  // The user and password go to the broker: a new host unbinds them.
  credentialsSentTo: (credentials) => (credentials.username || credentials.password ? 'url' : undefined),
  generated: { signingSecret: () => SECRET_PREFIX + randomBytes(32).toString('base64') },
  rebindOverlapSeconds: 24 * 60 * 60,
  signingSecretField: 'signingSecret',
  acceptedEventTypes: ['*'],
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
    const { username, password } = credentials;
    return {
      method: 'PUBLISH',
      destination: 'redis',
      url: `${shownUrl(url)} stream=${stream}${maxLen === undefined ? '' : ` maxLen~${maxLen}`}`,
      broker: {
        url,
        ...(username === undefined ? {} : { username }),
        ...(password === undefined ? {} : { password }),
      },
      target: { stream, ...(maxLen === undefined ? {} : { maxLen }) },
      message: { id: event.id, type: event.type },
      headers: { 'content-type': 'application/json' },
      body: eventJson(event),
    };
  },
};

export default redis;
